package org.hcomm.shuffle.benchmarks.ab;

import java.util.Map;

import org.apache.spark.sql.SparkSession;

/**
 * One workload of the A/B suite. It generates its data deterministically (seeded, inside the executors) from the
 * target shuffle size alone, so every configuration, serializer and executor count shuffles the same data, and
 * returns an order-independent checksum of its answer.
 */
public interface Workload {
    /** Short name used in file names, tables and the chart. */
    String name();

    /** One line saying what runs at this size (for the report). */
    String describe(long targetMb);

    /**
     * Readies the data before the timed part, without a shuffle (nothing by default: most workloads generate their
     * data as they run).
     */
    default void prepare(SparkSession spark, long targetMb) throws Exception {
    }

    /** Runs the workload (the timed part) on a fresh application. */
    Answer run(SparkSession spark, long targetMb) throws Exception;

    /** Spark settings this workload needs in every configuration (applied before the configuration's own). */
    default Map<String, String> sparkConf() {
        return Map.of();
    }

    /** Throws when the tasks did not run where the workload needs them to (for workloads that place tasks). */
    default void checkPlacement(java.util.List<StageMetricsListener.Stage> stages) {
    }

    /**
     * What a workload returns: the checksum, how many result records it covers, workload-specific details, and the
     * answer's text for the run's answers file (empty: none; see {@link QueryAnswers}).
     */
    record Answer(long checksum, long records, Map<String, Object> detail, java.util.List<String> answerLines) {
        Answer(long checksum, long records, Map<String, Object> detail) {
            this(checksum, records, detail, java.util.List.of());
        }
    }

    /** Map and reduce partitions for a target size: about 32 MB of shuffle data per partition, at least 8. */
    static int partitions(long targetMb) {
        return (int) Math.max(8, (targetMb + 31) / 32);
    }

    static Workload of(String name) {
        return switch (name) {
            case "terasort" -> new TeraSort();
            case "aggregation" -> new Aggregation();
            case "join" -> new Join();
            case "tpch" -> new TpchSql();
            case "remote-read" -> new RemoteRead();
            case "tpcds" -> new TpcdsSql(true);
            case "tpcds-nobroadcast" -> new TpcdsSql(false);
            default -> throw new IllegalArgumentException("unknown workload '" + name
                    + "' (allowed: terasort, aggregation, join, tpch, remote-read, tpcds, tpcds-nobroadcast)");
        };
    }
}
