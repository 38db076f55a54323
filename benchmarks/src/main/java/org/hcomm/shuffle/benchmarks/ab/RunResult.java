package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Everything measured in one run (one fresh application running one workload under one configuration). */
record RunResult(Preset.Cell cell, ShuffleConfig config, int rep, int sequence, String startedAt,
        double jobSec, double reduceSec, double fetchWaitSec, double reduceTaskSec, double reduceCpuSec,
        double totalCpuSec, int reduceStages, long shuffleWriteBytes, long shuffleReadBytes, long remoteBytes,
        long localBytes, int failedTasks, Map<String, Long> hcomm, String executorForceTcp, long checksum,
        long records, Map<String, Object> detail, List<StageMetricsListener.Stage> stages, String error) {

    boolean ok() {
        return error == null;
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
                "", 0, 0, Map.of(), List.of(), error);
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
            j.put("failure", s.failure);
            st.add(j);
        }
        m.put("stages", st);
        return m;
    }
}
