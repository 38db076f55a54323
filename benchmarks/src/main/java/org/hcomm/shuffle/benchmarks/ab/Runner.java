package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * Runs one workload under one configuration on a fresh application, on local-cluster or on the hosts of the
 * multi-host mode ({@link Hosts}), and measures it.
 */
final class Runner {
    /** Executor memory; with 4 executors it stays 1024m too (the setting). */
    static final int EXECUTOR_MB = 1024;

    private Runner() {
    }

    static SparkConf conf(Preset.Cell cell, ShuffleConfig config, Preset preset, java.nio.file.Path jfrDir) {
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
        Hosts.apply(conf, cell.executors(), java.nio.file.Path.of("target"));
        Workload.of(cell.workload()).sparkConf().forEach(conf::set);
        config.apply(conf);
        String plugins = conf.get("spark.plugins", "");
        conf.set("spark.plugins", (plugins.isEmpty() ? "" : plugins + ",") + ProcessCpuPlugin.class.getName());
        if (config.isHcomm()) {
            preset.hcommConf().forEach(conf::set);
        }
        preset.sparkConf().forEach(conf::set);
        if (jfrDir != null) {
            conf.set(ProcessCpuPlugin.THREAD_GROUPS_CONF, "true");
            String opts = conf.get("spark.executor.extraJavaOptions", "");
            conf.set("spark.executor.extraJavaOptions", (opts + " " + JfrProfile.option(jfrDir)).trim());
        }
        return conf;
    }

    /**
     * Runs and measures; with a {@code jfrDir} the executors record with JFR there and the result carries the
     * profile of the reduce stages (read after the executors exit, when their recordings are complete).
     */
    static RunResult run(Workload workload, Preset.Cell cell, ShuffleConfig config, Preset preset, int rep,
            int sequence, java.nio.file.Path jfrDir, java.nio.file.Path answersFile) throws Exception {
        if (jfrDir != null) {
            java.nio.file.Files.createDirectories(jfrDir);
        }
        RunResult result = measure(workload, cell, config, preset, rep, sequence, jfrDir, answersFile);
        if (jfrDir == null) {
            return result;
        }
        JfrProfile.awaitRecordings(jfrDir, cell.executors(), java.time.Duration.ofSeconds(60));
        List<StageMetricsListener.Stage> reduce = result.stages().stream()
                .filter(StageMetricsListener.Stage::readsShuffle).toList();
        return result.withProfile(JfrProfile.summarize(jfrDir, StageMetricsListener.union(reduce)));
    }

    /** Measures one run; a workload's answer text (if any) goes to {@code answersFile} (if not null). */
    private static RunResult measure(Workload workload, Preset.Cell cell, ShuffleConfig config, Preset preset,
            int rep, int sequence, java.nio.file.Path jfrDir, java.nio.file.Path answersFile) throws Exception {
        String startedAt = java.time.Instant.now().toString();
        ProcessCpuPlugin.reset();
        SparkSession spark = SparkSession.builder().config(conf(cell, config, preset, jfrDir)).getOrCreate();
        try {
            JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
            awaitExecutors(sc, cell.executors());
            String forceTcp = executorForceTcp(sc, cell.executors());
            if (config.isHcomm() && !forceTcp.equals(config.expectedForceTcp())) {
                throw new IllegalStateException("executors see HCOMM_SOFT_FORCE_TCP=" + forceTcp + ", expected "
                        + config.expectedForceTcp());
            }
            long formedAfterMs = config.isCommunicator() ? awaitCommunicator(cell.executors(), 90_000) : -1;
            Map<String, Long> hcommBefore = Map.of();
            if (preset.warmExecutors()) {
                StageMetricsListener warm = new StageMetricsListener();
                sc.sc().addSparkListener(warm);
                workload.prepare(spark, Preset.warmMb(cell.targetMb()));
                workload.run(spark, Preset.warmMb(cell.targetMb()));
                warm.awaitQuiet(10_000);
                sc.sc().removeSparkListener(warm);
                if (config.isHcomm()) {
                    // Settled channels are not enough: every executor's last report must be in, or the measured
                    // run's counters would include some of the warm-up's bytes.
                    long remote = warm.stages().stream().mapToLong(st -> st.remoteBytes).sum();
                    hcommBefore = HcommMetrics.settled(15_000, remote, warm.stages());
                }
            }
            // untimed and before the listener; a workload's preparation shuffles nothing (the plugin's counters
            // would include it)
            workload.prepare(spark, cell.targetMb());
            StageMetricsListener listener = new StageMetricsListener();
            sc.sc().addSparkListener(listener);

            Map<String, Long> vmBefore = HostCounters.read();
            long t0 = System.nanoTime();
            Workload.Answer answer = workload.run(spark, cell.targetMb());
            double jobSec = (System.nanoTime() - t0) / 1e9;
            if (answersFile != null && !answer.answerLines().isEmpty()) {
                java.nio.file.Files.write(answersFile, answer.answerLines(), java.nio.charset.StandardCharsets.UTF_8);
            }
            Map<String, Long> host = HostCounters.since(vmBefore, HostCounters.read());

            listener.awaitQuiet(10_000);
            Thread.sleep(4 * ProcessCpuPlugin.PERIOD_MS); // samples past the end of the last stage
            Map<String, Long> hcomm = Map.of();
            if (config.isHcomm()) {
                // as after the warm-up: wait for every executor's last report, i.e. for Spark's remote bytes
                long remoteSoFar = hcommBefore.getOrDefault("bytesReadOneSided", 0L)
                        + listener.stages().stream().mapToLong(st -> st.remoteBytes).sum();
                hcomm = HcommMetrics.since(hcommBefore,
                        HcommMetrics.settled(15_000, remoteSoFar, listener.stages()));
                if (formedAfterMs >= 0) {
                    hcomm = new java.util.TreeMap<>(hcomm);
                    hcomm.put(COMMUNICATOR_FORMED_MS, formedAfterMs);
                }
            }
            List<StageMetricsListener.Stage> stages = listener.stages();
            List<StageMetricsListener.Stage> reduce = stages.stream().filter(StageMetricsListener.Stage::readsShuffle)
                    .toList();
            Totals all = Totals.of(stages);
            Totals red = Totals.of(reduce);
            workload.checkPlacement(stages);
            return new RunResult(cell, config, rep, sequence, startedAt, jobSec,
                    StageMetricsListener.unionSeconds(reduce), red.fetchWaitSec(), red.taskSec(), red.cpuSec(),
                    all.cpuSec(), processCpuSec(stages), reduce.size(), all.writeBytes(),
                    all.remoteBytes() + all.localBytes(), all.remoteBytes(), all.localBytes(), all.failedTasks(),
                    hcomm, forceTcp, answer.checksum(), answer.records(), answer.detail(), stages,
                    executorCpu(reduce, listener.tasks()), Map.of(), host, null);
        } finally {
            spark.stop();
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
    }

    /** Sums over a set of stages. */
    private record Totals(double fetchWaitSec, double taskSec, double cpuSec, long writeBytes, long remoteBytes,
            long localBytes, int failedTasks) {
        static Totals of(List<StageMetricsListener.Stage> stages) {
            return new Totals(stages.stream().mapToDouble(s -> s.fetchWaitMs / 1e3).sum(),
                    stages.stream().mapToDouble(s -> s.runMs / 1e3).sum(),
                    stages.stream().mapToDouble(s -> s.cpuNs / 1e9).sum(),
                    stages.stream().mapToLong(s -> s.writeBytes).sum(),
                    stages.stream().mapToLong(s -> s.remoteBytes).sum(),
                    stages.stream().mapToLong(s -> s.localBytes).sum(),
                    stages.stream().mapToInt(s -> s.failedTasks).sum());
        }
    }

    /**
     * The process CPU (every thread) of every executor during the union of {@code stages}' intervals, summed; NaN
     * when no executor sent samples, or one sent none covering an interval.
     */
    static double processCpuSec(List<StageMetricsListener.Stage> stages) {
        List<String> executors = ProcessCpuPlugin.executors();
        if (executors.isEmpty()) {
            return Double.NaN;
        }
        double sum = 0;
        for (long[] i : StageMetricsListener.union(stages)) {
            for (String id : executors) {
                sum += ProcessCpuPlugin.cpuSeconds(id, i[0], i[1]);
            }
        }
        return sum;
    }

    /**
     * Every executor's process CPU during the reduce stages, next to the CPU its task threads (of any stage: Spark
     * SQL runs map stages alongside) spent in the same intervals, and how many reduce tasks it ran.
     */
    static List<RunResult.ExecutorCpu> executorCpu(List<StageMetricsListener.Stage> reduce,
            List<StageMetricsListener.Task> tasks) {
        List<long[]> intervals = StageMetricsListener.union(reduce);
        List<RunResult.ExecutorCpu> out = new ArrayList<>();
        for (String id : ProcessCpuPlugin.executors()) {
            double process = 0;
            Map<String, Double> groups = new java.util.LinkedHashMap<>();
            for (long[] i : intervals) {
                process += ProcessCpuPlugin.cpuSeconds(id, i[0], i[1]);
                ProcessCpuPlugin.groupSeconds(id, i[0], i[1]).forEach((g, v) -> groups.merge(g, v, Double::sum));
            }
            double taskCpu = tasks.stream().filter(t -> t.executorId().equals(id))
                    .mapToDouble(t -> t.cpuSecondsWithin(intervals)).sum();
            int reduceTasks = reduce.stream().mapToInt(s -> (int) s.byExecutor.getOrDefault(id, new long[2])[0]).sum();
            out.add(new RunResult.ExecutorCpu(id, process, taskCpu, reduceTasks, groups));
        }
        return out;
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

    /** In a communicator run's plugin counters: ms from the executors' registration to the communicator formed. */
    static final String COMMUNICATOR_FORMED_MS = "communicatorFormedAfterMs";

    /**
     * The communicator path: waits until the driver formed the communicator of all {@code executors} (every member
     * joined and acquired its channels), so that no timed task plans its blocks for Spark's fetch
     * ({@code tasksBeforeCommunicator}) and every remote byte of the timed jobs goes through windows; returns the ms
     * waited
     * (from here, i.e. once every executor registered with Spark). Fails when none of all formed within the timeout,
     * with the driver's reason.
     */
    static long awaitCommunicator(int executors, long timeoutMs) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeoutMs * 1_000_000L;
        while (true) {
            org.apache.spark.shuffle.hcomm.internal.driver.DriverState driver =
                    org.apache.spark.shuffle.hcomm.internal.driver.DriverState.current();
            List<String> members = driver == null ? null : driver.communicatorMembers();
            if (members != null && members.size() == executors) {
                return (System.nanoTime() - start) / 1_000_000;
            }
            if (System.nanoTime() > deadline) { // a communicator of fewer is re-formed once all settle: wait on
                throw new IllegalStateException("the executors' communicator " + (members != null
                        ? "formed of " + members + ", not of all " + executors + " executors"
                        : "did not form within " + timeoutMs + " ms") + (driver == null ? " (no driver state)"
                        : driver.communicatorFailure() == null ? "" : ": " + driver.communicatorFailure()));
            }
            Thread.sleep(20);
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
