package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Everything measured in one run (one fresh application running one workload under one configuration). */
record RunResult(Preset.Cell cell, ShuffleConfig config, int rep, int sequence, String startedAt,
        double jobSec, double reduceSec, double fetchWaitSec, double reduceTaskSec, double reduceCpuSec,
        double totalCpuSec, int reduceStages, long shuffleWriteBytes, long shuffleReadBytes, long remoteBytes,
        long localBytes, int failedTasks, Map<String, Long> hcomm, String executorForceTcp, long checksum,
        long records, Map<String, Object> detail, List<StageMetricsListener.Stage> stages,
        List<ExecutorCpu> executorCpu, Map<String, Long> profile, Map<String, Long> host, String error) {

    /** This result with the JFR profile of its reduce stages ({@link JfrProfile#summarize}). */
    RunResult withProfile(Map<String, Long> p) {
        return new RunResult(cell, config, rep, sequence, startedAt, jobSec, reduceSec, fetchWaitSec, reduceTaskSec,
                reduceCpuSec, totalCpuSec, reduceStages, shuffleWriteBytes, shuffleReadBytes, remoteBytes, localBytes,
                failedTasks, hcomm, executorForceTcp, checksum, records, detail, stages, executorCpu, p, host, error);
    }

    /**
     * One executor JVM while the reduce stages ran: its process CPU (every thread, from {@link ProcessCpuPlugin}),
     * the executor CPU of its task threads in the same intervals (Spark's task metric, any stage), and how many
     * reduce tasks it ran.
     */
    record ExecutorCpu(String executorId, double processSec, double taskSec, int reduceTasks,
            Map<String, Double> threadGroupSec) {
        /** CPU outside task threads: serving other executors, transport threads, GC, JIT. */
        double nonTaskSec() {
            return processSec - taskSec;
        }
    }

    /**
     * Process CPU of the owner during the reduce stages: the executor a workload names as its map outputs' owner
     * ({@code detail.owner}, e.g. remote-read's "executor_host_id"), else the executors that ran no reduce task,
     * summed (until 2 December 2026 always the latter, which with four executors also counted two idle ones). NaN
     * when there is none.
     */
    double ownerCpuSec() {
        Object named = detail.get("owner");
        if (named instanceof String s && s.lastIndexOf('_') > 0) {
            String id = s.substring(s.lastIndexOf('_') + 1);
            return executorCpu.stream().filter(e -> e.executorId().equals(id)).mapToDouble(ExecutorCpu::processSec)
                    .findFirst().orElse(Double.NaN);
        }
        List<ExecutorCpu> owners = executorCpu.stream().filter(e -> e.reduceTasks() == 0).toList();
        return owners.isEmpty() ? Double.NaN : owners.stream().mapToDouble(ExecutorCpu::processSec).sum();
    }

    /** CPU of one thread group ({@link ProcessCpuPlugin#GROUPS}) of all executors during the reduce stages. */
    double threadGroupSec(String group) {
        return executorCpu.stream().mapToDouble(e -> e.threadGroupSec().getOrDefault(group, Double.NaN)).sum();
    }

    /** CPU of all executors during the reduce stages beyond their reduce tasks' own threads, summed. */
    double nonTaskCpuSec() {
        return executorCpu.stream().mapToDouble(ExecutorCpu::nonTaskSec).sum();
    }

    boolean ok() {
        return error == null;
    }

    /** The name of this run's files in the runs directory, without extension (e.g. 001-tpch-512m-2x-kryo-r0-hcomm). */
    String fileStem() {
        return String.format(java.util.Locale.ROOT, "%03d-%s-r%d-%s", sequence, cell.fileStem(), rep, config.label());
    }

    /** The file a workload with per-query answers ({@link QueryAnswers}) writes them to, beside the run's JSON. */
    java.nio.file.Path answersFile(java.nio.file.Path runsDir) {
        return runsDir.resolve(fileStem() + "-answers.txt");
    }

    /** The successful run of {@code config} in repetition {@code rep} among {@code runs} (one cell's), if any. */
    static Optional<RunResult> successful(List<RunResult> runs, int rep, ShuffleConfig config) {
        return runs.stream().filter(r -> r.rep == rep && r.config == config && r.ok()).findFirst();
    }

    /** Process CPU of the executors that ran reduce tasks, during the reduce stages. */
    double readerCpuSec() {
        return executorCpu.stream().filter(e -> e.reduceTasks() > 0).mapToDouble(ExecutorCpu::processSec).sum();
    }

    /** Reduce tasks run, and the most any one executor ran (its tasks run one after another on its one core). */
    int reduceTasks() {
        return executorCpu.stream().mapToInt(ExecutorCpu::reduceTasks).sum();
    }

    int mostReduceTasksOnOneExecutor() {
        return executorCpu.stream().mapToInt(ExecutorCpu::reduceTasks).max().orElse(0);
    }

    /**
     * Round trips a reduce task waits for: for hcomm the batches it waited on (index rounds and data waves, from the
     * plugin's counters); for Spark's fetch a model, since Spark counts none: its requests to every owner go out at
     * once, up to spark.reducer.maxSizeInFlight (48 MB) in flight, so a task waits about one round trip per 48 MB
     * it fetches, at least one. NaN without reduce tasks.
     */
    double roundTripsPerTask() {
        int tasks = reduceTasks();
        if (tasks == 0) {
            return Double.NaN;
        }
        if (config.isHcomm()) {
            return (hcomm.getOrDefault("indexRounds", 0L) + hcomm.getOrDefault("readWaves", 0L)) / (double) tasks;
        }
        return Math.max(1, Math.ceil(remoteBytes / (double) tasks / (48L << 20)));
    }

    long oneSidedBytes() {
        return hcomm.getOrDefault("bytesReadOneSided", 0L);
    }

    long fallbackBytes() {
        return hcomm.getOrDefault("bytesReadFallback", 0L);
    }

    /** Fetch wait as a share of the reduce stages' task time (sum of executor run time). */
    double fetchWaitShare() {
        return reduceTaskSec > 0 ? fetchWaitSec / reduceTaskSec : 0;
    }

    static RunResult failed(Preset.Cell cell, ShuffleConfig config, int rep, int sequence, String startedAt,
            String error) {
        return new RunResult(cell, config, rep, sequence, startedAt, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Map.of(),
                "", 0, 0, Map.of(), List.of(), List.of(), Map.of(), Map.of(), error);
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", cell.workload());
        m.put("targetShuffleMb", cell.targetMb());
        m.put("executors", cell.executors());
        m.put("serializer", cell.serializer());
        m.put("config", config.label());
        m.put("rep", rep);
        m.put("sequence", sequence);
        m.put("startedAt", startedAt);
        m.put("ok", ok());
        m.put("error", error);
        m.put("jobSec", jobSec);
        m.put("reduceStageSec", reduceSec);
        m.put("reduceStages", reduceStages);
        m.put("fetchWaitSec", fetchWaitSec);
        m.put("reduceTaskSec", reduceTaskSec);
        m.put("fetchWaitShareOfReduceTaskTime", fetchWaitShare());
        m.put("reduceExecutorCpuSec", reduceCpuSec);
        m.put("totalExecutorCpuSec", totalCpuSec);
        m.put("ownerCpuSecDuringReduce", Double.isNaN(ownerCpuSec()) ? null : ownerCpuSec());
        m.put("nonTaskCpuSecDuringReduce", nonTaskCpuSec());
        List<Object> ex = new ArrayList<>();
        for (ExecutorCpu e : executorCpu) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("executorId", e.executorId());
            j.put("processCpuSecDuringReduce", e.processSec());
            j.put("taskCpuSecDuringReduce", e.taskSec());
            j.put("reduceTasks", e.reduceTasks());
            j.put("threadGroupCpuSecDuringReduce", e.threadGroupSec());
            ex.add(j);
        }
        m.put("executorsDuringReduce", ex);
        m.put("shuffleWriteBytes", shuffleWriteBytes);
        m.put("shuffleReadBytes", shuffleReadBytes);
        m.put("shuffleRemoteBytesRead", remoteBytes);
        m.put("shuffleLocalBytesRead", localBytes);
        m.put("failedTasks", failedTasks);
        m.put("bytesReadOneSided", oneSidedBytes());
        m.put("bytesReadFallback", fallbackBytes());
        m.put("channelsCreated", hcomm.getOrDefault("channelsCreated", 0L));
        m.put("channelsDestroyed", hcomm.getOrDefault("channelsDestroyed", 0L));
        m.put("hcommMetrics", hcomm);
        m.put("executorEnv_HCOMM_SOFT_FORCE_TCP", executorForceTcp);
        m.put("checksum", String.format("%016x", checksum));
        m.put("answerRecords", records);
        m.put("detail", detail);
        List<Object> st = new ArrayList<>();
        for (StageMetricsListener.Stage s : stages) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("stageId", s.stageId);
            j.put("attempt", s.attempt);
            j.put("name", s.name);
            j.put("jobGroup", s.group);
            j.put("readsShuffle", s.readsShuffle());
            j.put("sec", s.seconds());
            j.put("submittedMs", s.submittedMs);
            j.put("completedMs", s.completedMs);
            j.put("tasks", s.tasks);
            j.put("failedTasks", s.failedTasks);
            j.put("executorCpuSec", s.cpuNs / 1e9);
            j.put("executorRunSec", s.runMs / 1e3);
            j.put("fetchWaitSec", s.fetchWaitMs / 1e3);
            j.put("remoteBytesRead", s.remoteBytes);
            j.put("localBytesRead", s.localBytes);
            j.put("shuffleWriteBytes", s.writeBytes);
            Map<String, Object> tasksBy = new LinkedHashMap<>();
            s.byExecutor.forEach((id, v) -> tasksBy.put(id, v[0]));
            j.put("tasksByExecutor", tasksBy);
            j.put("failure", s.failure);
            st.add(j);
        }
        m.put("stages", st);
        if (!profile.isEmpty()) {
            m.put("reduceProfileJfr", profile);
        }
        if (!host.isEmpty()) {
            m.put("hostDuringJob", host);
        }
        return m;
    }

    /**
     * A run read back from its JSON file ({@link #toJson()}), for a resumed suite. Per-stage details are not read
     * back (the summary does not use them); the file on disk keeps them.
     */
    @SuppressWarnings("unchecked")
    static RunResult fromJson(Map<String, Object> m) {
        Preset.Cell cell = new Preset.Cell((String) m.get("workload"), num(m, "targetShuffleMb").longValue(),
                num(m, "executors").intValue(), (String) m.get("serializer"));
        Map<String, Long> hcomm = numbers(m, "hcommMetrics", Number::longValue);
        Map<String, Long> profile = numbers(m, "reduceProfileJfr", Number::longValue);
        List<ExecutorCpu> cpu = new ArrayList<>();
        for (Object o : (List<Object>) m.getOrDefault("executorsDuringReduce", List.of())) {
            Map<String, Object> e = (Map<String, Object>) o;
            Map<String, Double> groups = numbers(e, "threadGroupCpuSecDuringReduce", Number::doubleValue);
            cpu.add(new ExecutorCpu((String) e.get("executorId"), num(e, "processCpuSecDuringReduce").doubleValue(),
                    num(e, "taskCpuSecDuringReduce").doubleValue(), num(e, "reduceTasks").intValue(), groups));
        }
        return new RunResult(cell, ShuffleConfig.of((String) m.get("config")), num(m, "rep").intValue(),
                num(m, "sequence").intValue(), (String) m.get("startedAt"), num(m, "jobSec").doubleValue(),
                num(m, "reduceStageSec").doubleValue(), num(m, "fetchWaitSec").doubleValue(),
                num(m, "reduceTaskSec").doubleValue(), num(m, "reduceExecutorCpuSec").doubleValue(),
                num(m, "totalExecutorCpuSec").doubleValue(), num(m, "reduceStages").intValue(),
                num(m, "shuffleWriteBytes").longValue(), num(m, "shuffleReadBytes").longValue(),
                num(m, "shuffleRemoteBytesRead").longValue(), num(m, "shuffleLocalBytesRead").longValue(),
                num(m, "failedTasks").intValue(), hcomm, (String) m.getOrDefault("executorEnv_HCOMM_SOFT_FORCE_TCP", ""),
                Long.parseUnsignedLong((String) m.getOrDefault("checksum", "0"), 16), num(m, "answerRecords").longValue(),
                (Map<String, Object>) m.getOrDefault("detail", Map.of()), List.of(), cpu, profile,
                numbers(m, "hostDuringJob", Number::longValue), (String) m.get("error"));
    }

    /** The JSON object under {@code key} (absent: empty) with its numbers converted. */
    @SuppressWarnings("unchecked")
    private static <T> Map<String, T> numbers(Map<String, Object> m, String key,
            java.util.function.Function<Number, T> convert) {
        Map<String, T> out = new LinkedHashMap<>();
        ((Map<String, Object>) m.getOrDefault(key, Map.of())).forEach((k, v) -> out.put(k, convert.apply((Number) v)));
        return out;
    }

    private static Number num(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v instanceof Number n ? n : Double.NaN;
    }
}
