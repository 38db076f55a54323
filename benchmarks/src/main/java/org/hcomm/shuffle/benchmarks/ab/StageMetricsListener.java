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
        /** executor id → {tasks, executor CPU ns} of this stage's tasks there. */
        final Map<String, long[]> byExecutor = new java.util.TreeMap<>();

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

    /** One finished task attempt: where and when it ran and its executor CPU (task thread only). */
    record Task(String executorId, long launchMs, long finishMs, long cpuNs) {
        /** The task's CPU inside the intervals, assuming it was spread evenly over the task's run. */
        double cpuSecondsWithin(List<long[]> intervals) {
            long span = finishMs - launchMs;
            if (span <= 0) {
                return 0;
            }
            long overlap = 0;
            for (long[] i : intervals) {
                overlap += Math.max(0, Math.min(finishMs, i[1]) - Math.max(launchMs, i[0]));
            }
            return cpuNs / 1e9 * overlap / span;
        }
    }

    private final Map<String, Stage> stages = new ConcurrentHashMap<>();
    private final List<Task> tasks = java.util.Collections.synchronizedList(new ArrayList<>());
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
        tasks.add(new Task(e.taskInfo().executorId(), e.taskInfo().launchTime(), e.taskInfo().finishTime(),
                m == null ? 0 : m.executorCpuTime()));
        synchronized (s) {
            s.tasks++;
            long[] ex = s.byExecutor.computeIfAbsent(e.taskInfo().executorId(), k -> new long[2]);
            ex[0]++;
            if (m != null) {
                ex[1] += m.executorCpuTime();
            }
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
        long total = 0;
        for (long[] i : union(stages)) {
            total += i[1] - i[0];
        }
        return total / 1e3;
    }

    /** The union of the stages' submitted–completed intervals as disjoint {from, to} ms intervals in time order. */
    static List<long[]> union(List<Stage> stages) {
        List<long[]> iv = new ArrayList<>();
        for (Stage s : stages) {
            if (s.completedMs > s.submittedMs) {
                iv.add(new long[] {s.submittedMs, s.completedMs});
            }
        }
        iv.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] i : iv) {
            long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last == null || i[0] > last[1]) {
                out.add(i.clone());
            } else {
                last[1] = Math.max(last[1], i[1]);
            }
        }
        return out;
    }

    /** Every finished task attempt so far. */
    List<Task> tasks() {
        synchronized (tasks) {
            return List.copyOf(tasks);
        }
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
