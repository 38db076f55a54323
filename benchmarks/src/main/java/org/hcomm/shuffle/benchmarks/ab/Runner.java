package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/** Runs one workload under one configuration on a fresh local-cluster application and measures it. */
final class Runner {
    /** Executor memory; with 4 executors it stays 1024m too (the setting). */
    static final int EXECUTOR_MB = 1024;

    private Runner() {
    }

    static SparkConf conf(Preset.Cell cell, ShuffleConfig config, Map<String, String> hcommConf) {
        int parts = Workload.partitions(cell.targetMb());
        SparkConf conf = new SparkConf()
                .setMaster("local-cluster[" + cell.executors() + ",1," + EXECUTOR_MB + "]")
                .setAppName("shuffle-ab-" + cell.fileStem() + "-" + config.label())
                .set("spark.ui.enabled", "false")
                .set("spark.executor.memory", EXECUTOR_MB + "m")
                .set("spark.serializer", cell.serializer().equals("kryo")
                        ? "org.apache.spark.serializer.KryoSerializer" : "org.apache.spark.serializer.JavaSerializer")
                .set("spark.default.parallelism", String.valueOf(parts))
                .set("spark.sql.shuffle.partitions", String.valueOf(parts));
        config.apply(conf);
        if (config.isHcomm()) {
            hcommConf.forEach(conf::set);
        }
        return conf;
    }

    static RunResult run(Workload workload, Preset.Cell cell, ShuffleConfig config, Map<String, String> hcommConf,
            int rep, int sequence) throws Exception {
        String startedAt = java.time.Instant.now().toString();
        SparkSession spark = SparkSession.builder().config(conf(cell, config, hcommConf)).getOrCreate();
        try {
            JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
            awaitExecutors(sc, cell.executors());
            String forceTcp = executorForceTcp(sc, cell.executors());
            if (config.isHcomm() && !forceTcp.equals(config.expectedForceTcp())) {
                throw new IllegalStateException("executors see HCOMM_SOFT_FORCE_TCP=" + forceTcp + ", expected "
                        + config.expectedForceTcp());
            }
            StageMetricsListener listener = new StageMetricsListener();
            sc.sc().addSparkListener(listener);

            long t0 = System.nanoTime();
            Workload.Answer answer = workload.run(spark, cell.targetMb());
            double jobSec = (System.nanoTime() - t0) / 1e9;

            listener.awaitQuiet(10_000);
            Map<String, Long> hcomm = config.isHcomm() ? HcommMetrics.settled(15_000) : Map.of();
            List<StageMetricsListener.Stage> stages = listener.stages();
            double reduceSec = 0;
            double fetchWait = 0;
            double reduceTask = 0;
            double reduceCpu = 0;
            double totalCpu = 0;
            int reduceStages = 0;
            long write = 0;
            long remote = 0;
            long local = 0;
            int failedTasks = 0;
            List<StageMetricsListener.Stage> reduce = new ArrayList<>();
            for (StageMetricsListener.Stage s : stages) {
                totalCpu += s.cpuNs / 1e9;
                write += s.writeBytes;
                remote += s.remoteBytes;
                local += s.localBytes;
                failedTasks += s.failedTasks;
                if (s.readsShuffle()) {
                    reduceStages++;
                    reduce.add(s);
                    fetchWait += s.fetchWaitMs / 1e3;
                    reduceTask += s.runMs / 1e3;
                    reduceCpu += s.cpuNs / 1e9;
                }
            }
            reduceSec = StageMetricsListener.unionSeconds(reduce);
            return new RunResult(cell, config, rep, sequence, startedAt, jobSec, reduceSec, fetchWait, reduceTask,
                    reduceCpu, totalCpu, reduceStages, write, remote + local, remote, local, failedTasks, hcomm,
                    forceTcp, answer.checksum(), answer.records(), answer.detail(), stages, null);
        } finally {
            spark.stop();
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
    }

    /** local-cluster executors start after the context; wait until all registered. */
    static void awaitExecutors(JavaSparkContext sc, int n) throws InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (sc.sc().statusTracker().getExecutorInfos().length < n + 1) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(n + " executors did not register within 120 s");
            }
            Thread.sleep(100);
        }
    }

    /** HCOMM_SOFT_FORCE_TCP as the executor JVMs see it ("unset" when absent); a tiny job without a shuffle. */
    static String executorForceTcp(JavaSparkContext sc, int executors) {
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < executors * 4; i++) {
            ids.add(i);
        }
        List<String> seen = sc.parallelize(ids, ids.size()).map(i -> {
            String v = System.getenv(ShuffleConfig.FORCE_TCP_ENV);
            return v == null ? "unset" : v;
        }).collect();
        return String.join(",", new TreeSet<>(seen));
    }
}
