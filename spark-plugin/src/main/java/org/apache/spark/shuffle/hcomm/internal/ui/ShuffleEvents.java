package org.apache.spark.shuffle.hcomm.internal.ui;

import java.util.List;

import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * The plugin's own listener events: the driver posts them, Spark's event log writes them (as JSON, with the class
 * name), and the history server's {@link HistoryPlugin} rebuilds the HComm tab from them. The latest event of a
 * stage attempt, and the latest application event, win.
 */
public final class ShuffleEvents {
    private ShuffleEvents() {
    }

    /** One stage attempt's row, posted when the stage completes and again when a report for it arrives after. */
    public record StageShuffle(ShuffleSummary.StageRow stage) implements SparkListenerEvent {
    }

    /** The executors' totals and the communicator, posted when a stage completes. */
    public record AppShuffle(List<ShuffleSummary.ExecutorRow> executors, ShuffleSummary.CommunicatorRow communicator)
            implements SparkListenerEvent {
    }
}
