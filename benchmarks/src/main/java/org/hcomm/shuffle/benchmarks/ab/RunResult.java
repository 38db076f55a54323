package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything measured in one run (one fresh application running one workload under one configuration).
 * {@code totalCpuSec} is Spark's executor CPU of all tasks (task threads only); {@code jobProcessCpuSec} the executors'
 * process CPU (every thread, {@link ProcessCpuPlugin}) during the union of all the job's stages, summed over the
 * executors (NaN in run files from before it was recorded).
 */
record RunResult(Preset.Cell cell, ShuffleConfig config, int rep, int sequence, String startedAt,
        double jobSec, double reduceSec, double fetchWaitSec, double reduceTaskSec, double reduceCpuSec,
        double totalCpuSec, double jobProcessCpuSec, int reduceStages, long shuffleWriteBytes, long shuffleReadBytes,
        long remoteBytes, long localBytes, int failedTasks, Map<String, Long> hcomm, String executorForceTcp,
        long checksum, long records, Map<String, Object> detail, List<StageMetricsListener.Stage> stages,
        List<ExecutorCpu> executorCpu, Map<String, Long> profile, Map<String, Long> host, String error) {

    /** This result with the JFR profile of its reduce stages ({@link JfrProfile#summarize}). */
    RunResult withProfile(Map<String, Long> p) {
        return new RunResult(cell, config, rep, sequence, startedAt, jobSec, reduceSec, fetchWaitSec, reduceTaskSec,
                reduceCpuSec, totalCpuSec, jobProcessCpuSec, reduceStages, shuffleWriteBytes, shuffleReadBytes,
                remoteBytes, localBytes, failedTasks, hcomm, executorForceTcp, checksum, records, detail, stages,
                executorCpu, p, host, error);
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
     * plugin's counters) over the tasks that read one-sidedly ({@link #roundTripsPerReadTask}), or, in run files
     * from before the plugin counted those tasks ({@code readTasks}), over all reduce tasks; for Spark's fetch a
     * model, since Spark counts none: its requests to every owner go out at once, up to
     * spark.reducer.maxSizeInFlight (48 MB) in flight, so a task waits about one round trip per 48 MB it fetches,
     * at least one. NaN without reduce tasks.
     */
    double roundTripsPerTask() {
        if (config.isHcomm() && readTasks() > 0) {
            return roundTripsPerReadTask();
        }
        int tasks = reduceTasks();
        if (tasks == 0) {
            return Double.NaN;
        }
        if (config.isHcomm()) {
            return (hcomm.getOrDefault("indexRounds", 0L) + hcomm.getOrDefault("readWaves", 0L)) / (double) tasks;
        }
        return Math.max(1, Math.ceil(remoteBytes / (double) tasks / (48L << 20)));
    }

    /** The plugin's {@code readTasks}: reduce tasks that read one-sidedly (0 when not counted). */
    long readTasks() {
        return hcomm.getOrDefault("readTasks", 0L);
    }

    /**
     * The plugin's mean round trips of a reduce task that read one-sidedly: {@code readRoundTrips} /
     * {@code readTasks} (run files from before {@code readRoundTrips}: the batches waited for, ({@code indexRounds}
     * + {@code readWaves}) / {@code readTasks}); NaN when the run counted no such task.
     */
    double roundTripsPerReadTask() {
        long tasks = readTasks();
        Long critical = hcomm.get("readRoundTrips");
        return tasks == 0 ? Double.NaN
                : (critical != null ? critical
                        : hcomm.getOrDefault("indexRounds", 0L) + hcomm.getOrDefault("readWaves", 0L)) / (double) tasks;
    }

    /**
     * The plugin's {@code publicationBatches} (messages telling the driver of published map outputs) per task of the
     * stages that wrote shuffle data ({@link #shuffleWriteTasks}); NaN without such tasks.
     */
    double publicationBatchesPerMapTask() {
        long tasks = shuffleWriteTasks();
        return tasks == 0 ? Double.NaN : hcomm.getOrDefault("publicationBatches", 0L) / (double) tasks;
    }

    /** Tasks of the stages that wrote shuffle data (whether or not they also read some): the map tasks. */
    long shuffleWriteTasks() {
        return stages.stream().filter(s -> s.writeBytes > 0).mapToLong(s -> s.tasks).sum();
    }

    /** The map stages: stages that write shuffle data and read none. */
    List<StageMetricsListener.Stage> mapStages() {
        return stages.stream().filter(s -> s.writeBytes > 0 && !s.readsShuffle()).toList();
    }

    /**
     * Wall time during which a map stage ran (the union of their intervals, as {@code reduceSec} for the reduce
     * stages); NaN without a stage list (a failed run).
     */
    double mapSec() {
        return stages.isEmpty() ? Double.NaN : StageMetricsListener.unionSeconds(mapStages());
    }

    /**
     * The executors' process CPU during the job ({@code jobProcessCpuSec}) per GB of shuffle data read (remote and
     * local); NaN when either is unknown or nothing was read.
     */
    double jobCpuSecPerGbShuffled() {
        return shuffleReadBytes > 0 ? jobProcessCpuSec / (shuffleReadBytes / 1e9) : Double.NaN;
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
        return new RunResult(cell, config, rep, sequence, startedAt, 0, 0, 0, 0, 0, 0, Double.NaN, 0, 0, 0, 0, 0, 0,
                Map.of(),
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
        m.put("processCpuSecDuringJob", Double.isNaN(jobProcessCpuSec) ? null : jobProcessCpuSec);
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
            j.put("shuffleRecordsRead", s.recordsRead);
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
     * A run read back from its JSON file ({@link #toJson()}), for a resumed suite, with its stage list (what the
     * file keeps of it: per executor only the task counts). Fields a run file from before they existed lacks read back
     * as NaN ({@code processCpuSecDuringJob}) or are derived ({@link #stageFromJson}).
     */
    @SuppressWarnings("unchecked")
    static RunResult fromJson(Map<String, Object> m) {
        Preset.Cell cell = new Preset.Cell((String) m.get("workload"), num(m, "targetShuffleMb").longValue(),
                num(m, "executors").intValue(), (String) m.get("serializer"));
        Map<String, Long> hcomm = numbers(m, "hcommMetrics", Number::longValue);
        Map<String, Long> profile = numbers(m, "reduceProfileJfr", Number::longValue);
        List<StageMetricsListener.Stage> stages = new ArrayList<>();
        for (Object o : (List<Object>) m.getOrDefault("stages", List.of())) {
            stages.add(stageFromJson((Map<String, Object>) o));
        }
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
                num(m, "totalExecutorCpuSec").doubleValue(), num(m, "processCpuSecDuringJob").doubleValue(),
                num(m, "reduceStages").intValue(),
                num(m, "shuffleWriteBytes").longValue(), num(m, "shuffleReadBytes").longValue(),
                num(m, "shuffleRemoteBytesRead").longValue(), num(m, "shuffleLocalBytesRead").longValue(),
                num(m, "failedTasks").intValue(), hcomm, (String) m.getOrDefault("executorEnv_HCOMM_SOFT_FORCE_TCP", ""),
                Long.parseUnsignedLong((String) m.getOrDefault("checksum", "0"), 16), num(m, "answerRecords").longValue(),
                (Map<String, Object>) m.getOrDefault("detail", Map.of()), stages, cpu, profile,
                numbers(m, "hostDuringJob", Number::longValue), (String) m.get("error"));
    }

    /**
     * One stage attempt of a run file. Files from before {@code shuffleRecordsRead} was written keep only whether the
     * stage read shuffle data ({@code readsShuffle}); a stage that did but read no byte gets one record, so that
     * {@link StageMetricsListener.Stage#readsShuffle()} says what the file says.
     */
    @SuppressWarnings("unchecked")
    static StageMetricsListener.Stage stageFromJson(Map<String, Object> j) {
        StageMetricsListener.Stage s = new StageMetricsListener.Stage(num(j, "stageId").intValue(),
                num(j, "attempt").intValue());
        s.name = (String) j.getOrDefault("name", "");
        s.group = (String) j.getOrDefault("jobGroup", "");
        s.submittedMs = num(j, "submittedMs").longValue();
        s.completedMs = num(j, "completedMs").longValue();
        s.completed = true;
        s.failure = (String) j.get("failure");
        s.tasks = num(j, "tasks").intValue();
        s.failedTasks = num(j, "failedTasks").intValue();
        s.cpuNs = Math.round(num(j, "executorCpuSec").doubleValue() * 1e9);
        s.runMs = Math.round(num(j, "executorRunSec").doubleValue() * 1e3);
        s.fetchWaitMs = Math.round(num(j, "fetchWaitSec").doubleValue() * 1e3);
        s.remoteBytes = num(j, "remoteBytesRead").longValue();
        s.localBytes = num(j, "localBytesRead").longValue();
        s.writeBytes = num(j, "shuffleWriteBytes").longValue();
        if (j.get("shuffleRecordsRead") instanceof Number n) {
            s.recordsRead = n.longValue();
        } else {
            s.recordsRead = Boolean.TRUE.equals(j.get("readsShuffle")) && s.remoteBytes + s.localBytes == 0 ? 1 : 0;
        }
        ((Map<String, Object>) j.getOrDefault("tasksByExecutor", Map.of()))
                .forEach((id, n) -> s.byExecutor.put(id, new long[] {((Number) n).longValue(), 0}));
        return s;
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
