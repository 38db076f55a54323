package org.apache.spark.shuffle.hcomm.internal.ui;

import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * The plugin's own listener events: the driver posts them, Spark's event log writes them (as JSON, with the class
 * name), and the history server's {@link HistoryPlugin} rebuilds the HComm tab from them. Each carries one row, so
 * what the log holds grows with the reports, not with their square; the latest row of a stage attempt, of an
 * executor and of the communicator wins.
 */
public final class ShuffleEvents {
    private ShuffleEvents() {
    }

    /** One stage attempt's row: posted when the stage completes and again on each report of it that comes after. */
    public record StageShuffle(ShuffleSummary.StageRow stage) implements SparkListenerEvent {
    }

    /** One executor's latest totals: posted with a stage's row when the executor reported since its last one. */
    public record ExecutorShuffle(ShuffleSummary.ExecutorRow executor) implements SparkListenerEvent {
    }

    /** The communicator path's state: posted with a stage's row when it changed. */
    public record CommunicatorShuffle(ShuffleSummary.CommunicatorRow communicator) implements SparkListenerEvent {
    }
}
