package org.hcomm.shuffle.benchmarks.ab;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * Aggregation over skewed keys: records of an int key and a 60-byte value, keys drawn as {@code KEYS * u^3}
 * (the hottest key holds about 1% of the records, the top 1,000 keys about 10%), grouped with {@code groupByKey}
 * (no map-side combine, so the whole data set crosses the shuffle), then per key the count and a checksum of the
 * group, and per key a {@code reduceByKey}-style sum over the answer.
 */
final class Aggregation implements Workload {
    static final int KEYS = 1_000_000;
    static final int VALUE_BYTES = 60;
    static final long DATA_SET = 0xa66L;

    @Override
    public String name() {
        return "aggregation";
    }

    @Override
    public String describe(long targetMb) {
        int parts = Workload.partitions(targetMb);
        return String.format("groupByKey of %,d records (int key, 60-byte value) over %,d skewed keys, %d x %d",
                Generators.perPart(targetMb, parts, VALUE_BYTES + 4) * parts, KEYS, parts, parts);
    }

    static int skewedKey(java.util.SplittableRandom rnd) {
        double u = rnd.nextDouble();
        return (int) (KEYS * u * u * u);
    }

    @Override
    public Answer run(SparkSession spark, long targetMb) {
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int parts = Workload.partitions(targetMb);
        long perPart = Generators.perPart(targetMb, parts, VALUE_BYTES + 4);
        JavaPairRDD<Integer, byte[]> data = Generators.parts(sc, 0, parts).flatMapToPair(part ->
                Generators.lazily(perPart, Generators.random(DATA_SET, part),
                        rnd -> new Tuple2<>(skewedKey(rnd), Generators.bytes(rnd, VALUE_BYTES))));
        // Per partition: [keys, records, checksum, largest group].
        List<long[]> summaries = data.groupByKey(new HashPartitioner(parts)).mapPartitions(it -> {
            long keys = 0;
            long records = 0;
            long sum = 0;
            long largest = 0;
            while (it.hasNext()) {
                Tuple2<Integer, Iterable<byte[]>> g = it.next();
                long n = 0;
                long groupSum = 0;
                for (byte[] v : g._2()) {
                    n++;
                    groupSum += Hashing.bytes(v);
                }
                keys++;
                records += n;
                largest = Math.max(largest, n);
                sum += Hashing.combine(Hashing.combine(g._1(), n), groupSum);
            }
            return List.of(new long[] {keys, records, sum, largest}).iterator();
        }).collect();
        long keys = 0;
        long records = 0;
        long checksum = 0;
        long largest = 0;
        for (long[] s : summaries) {
            keys += s[0];
            records += s[1];
            checksum += s[2];
            largest = Math.max(largest, s[3]);
        }
        if (records != perPart * parts) {
            throw new IllegalStateException("aggregation: " + records + " records grouped, " + perPart * parts + " in");
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("partitions", parts);
        detail.put("distinctKeys", keys);
        detail.put("largestGroup", largest);
        return new Answer(checksum, records, detail);
    }
}
