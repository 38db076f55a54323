package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary;

/**
 * What the HComm tab shows on the driver: the rows of the executors' reports ({@link ReportedRows}), the communicator's
 * row, the summary the tab renders, and where a stage attempt's row goes when a report changes it after the attempt
 * ended (the driver component posts it to the event log). Guarded by the lock it is given, the {@link DriverState}'s:
 * under it, it asks the driver state whether a stage attempt ended and which host an executor is on.
 */
final class TabContent {
    private final Object lock;
    private final ReportedRows rows = new ReportedRows();
    /** Whether a stage attempt has ended (asked under the lock). */
    private final Predicate<StageAttempt> ended;
    /** An executor's host, or null (asked under the lock). */
    private final Function<String, String> hosts;
    private final CommunicatorFormer former;
    /** Where a stage attempt's row goes when a report changes it after the attempt ended (the event log). */
    private volatile Consumer<ShuffleSummary.StageRow> lateRows = row -> { };

    TabContent(Object lock, Predicate<StageAttempt> ended, Function<String, String> hosts,
            CommunicatorFormer former) {
        this.lock = lock;
        this.ended = ended;
        this.hosts = hosts;
        this.former = former;
    }

    /**
     * Counts an executor's report in the rows and, when its stage attempt has already ended, hands the changed row on
     * (outside the lock).
     */
    void report(String executorId, StageAttempt stage, ShuffleMetrics.Snapshot totals) {
        ShuffleSummary.StageRow late;
        synchronized (lock) {
            rows.report(executorId, stage, totals);
            late = ended.test(stage) ? rows.stageRow(stage) : null;
        }
        if (late != null) {
            lateRows.accept(late);
        }
    }

    /** Where rows changed after their stage attempt ended go (the driver component posts them as events). */
    void onLateRow(Consumer<ShuffleSummary.StageRow> sink) {
        lateRows = sink;
    }

    /** A stage attempt's row, or null when no report named it. */
    ShuffleSummary.StageRow stageRow(StageAttempt stage) {
        synchronized (lock) {
            return rows.stageRow(stage);
        }
    }

    /** The rows of the executors that reported since the last call. */
    List<ShuffleSummary.ExecutorRow> changedExecutors() {
        synchronized (lock) {
            return rows.drainChanged(hosts);
        }
    }

    /** What the HComm tab shows, as of now: per stage attempt, per executor, and the communicator. */
    ShuffleSummary summary() {
        ShuffleSummary.CommunicatorRow communicator = communicatorRow();
        synchronized (lock) {
            return new ShuffleSummary(rows.stageRows(), rows.executorRows(hosts), communicator);
        }
    }

    /** The communicator path's state on the driver. */
    ShuffleSummary.CommunicatorRow communicatorRow() {
        List<String> members = former.members();
        return new ShuffleSummary.CommunicatorRow(former.epoch(), members == null ? List.of() : members,
                former.lastFailure());
    }
}
