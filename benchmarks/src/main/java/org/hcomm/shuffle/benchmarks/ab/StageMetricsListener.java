package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.Success$;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;

/**
 * Collects Spark's own task metrics per stage (attempt): executor CPU and run time, fetch wait, shuffle bytes read
 * (remote and local) and written, and the stage's wall time. A "reduce stage" is a stage whose tasks read shuffle
 * data.
 */
final class StageMetricsListener extends SparkListener {
    /** Totals of one stage attempt. */
    static final class Stage {
        final int stageId;
        final int attempt;
        String name = "";
        String group = "";
        long submittedMs;
        long completedMs;
        boolean completed;
        String failure;
        int tasks;
        int failedTasks;
        long cpuNs;
        long runMs;
        long fetchWaitMs;
        long remoteBytes;
        long localBytes;
        long writeBytes;
        long recordsRead;

        Stage(int stageId, int attempt) {
            this.stageId = stageId;
            this.attempt = attempt;
        }

        boolean readsShuffle() {
            return remoteBytes + localBytes > 0 || recordsRead > 0;
        }

        double seconds() {
            return (completedMs - submittedMs) / 1e3;
        }
    }

    private final Map<String, Stage> stages = new ConcurrentHashMap<>();
    private final AtomicInteger submitted = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();

    private Stage stage(int id, int attempt) {
        return stages.computeIfAbsent(id + "." + attempt, k -> new Stage(id, attempt));
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted e) {
        submitted.incrementAndGet();
        StageInfo info = e.stageInfo();
        Stage s = stage(info.stageId(), info.attemptNumber());
        String group = e.properties() == null ? null : e.properties().getProperty("spark.jobGroup.id");
        synchronized (s) {
            s.name = info.name();
            s.group = group == null ? "" : group;
        }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd e) {
        Stage s = stage(e.stageId(), e.stageAttemptId());
        TaskMetrics m = e.taskMetrics();
        synchronized (s) {
            s.tasks++;
            if (!(e.reason() instanceof Success$)) {
                s.failedTasks++;
            }
            if (m != null) {
                ShuffleReadMetrics r = m.shuffleReadMetrics();
                s.cpuNs += m.executorCpuTime();
                s.runMs += m.executorRunTime();
                s.fetchWaitMs += r.fetchWaitTime();
                s.remoteBytes += r.remoteBytesRead();
                s.localBytes += r.localBytesRead();
                s.recordsRead += r.recordsRead();
                s.writeBytes += m.shuffleWriteMetrics().bytesWritten();
            }
        }
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted e) {
        StageInfo info = e.stageInfo();
        Stage s = stage(info.stageId(), info.attemptNumber());
        synchronized (s) {
            s.submittedMs = info.submissionTime().isDefined() ? (Long) info.submissionTime().get() : 0L;
            s.completedMs = info.completionTime().isDefined() ? (Long) info.completionTime().get() : 0L;
            s.completed = true;
            s.failure = info.failureReason().isDefined() ? info.failureReason().get() : null;
        }
        completed.incrementAndGet();
    }

    /** Waits (bounded) until every submitted stage has reported completion through the listener bus. */
    void awaitQuiet(long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        int stableFor = 0;
        while (System.currentTimeMillis() < deadline) {
            if (completed.get() >= submitted.get()) {
                if (++stableFor >= 3) {
                    return;
                }
            } else {
                stableFor = 0;
            }
            Thread.sleep(50);
        }
    }

    /**
     * Wall time during which at least one of {@code stages} was running: the union of their submitted–completed
     * intervals, so stages that overlap (Spark SQL runs independent query stages concurrently) count once.
     */
    static double unionSeconds(List<Stage> stages) {
        List<long[]> iv = new ArrayList<>();
        for (Stage s : stages) {
            if (s.completedMs > s.submittedMs) {
                iv.add(new long[] {s.submittedMs, s.completedMs});
            }
        }
        iv.sort((a, b) -> Long.compare(a[0], b[0]));
        long total = 0;
        long from = Long.MIN_VALUE;
        long to = Long.MIN_VALUE;
        for (long[] i : iv) {
            if (i[0] > to) {
                total += to - from;
                from = i[0];
                to = i[1];
            } else {
                to = Math.max(to, i[1]);
            }
        }
        total += to - from;
        return total / 1e3;
    }

    /** Completed stage attempts in id order. */
    List<Stage> stages() {
        List<Stage> out = new ArrayList<>();
        for (Stage s : stages.values()) {
            if (s.completed) {
                out.add(s);
            }
        }
        out.sort((a, b) -> a.stageId != b.stageId ? Integer.compare(a.stageId, b.stageId)
                : Integer.compare(a.attempt, b.attempt));
        return out;
    }
}
