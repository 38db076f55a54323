package org.apache.spark.shuffle.hcomm.internal.ui;

import java.util.List;
import java.util.Map;

/**
 * What the HComm tab shows: the {@code HcommShuffle} driver metrics per stage attempt and per executor, and the
 * communicator path's state. Every map is metric name to value (the names of {@code MetricEntry}); nothing here is
 * computed for the page but the sums it shows. Immutable; also the payload of the events in the event log, so its
 * records stay plain (Jackson reads and writes them).
 */
public record ShuffleSummary(List<StageRow> stages, List<ExecutorRow> executors, CommunicatorRow communicator) {
    /**
     * What the executors' reports attributed to one stage attempt: the growth of each executor's counters between
     * its previous report and the report naming this stage (see the driver's {@code ReportedRows}).
     */
    public record StageRow(int stageId, int attempt, int reports, Map<String, Long> metrics) {
        /** By stage id, then attempt. */
        public static final java.util.Comparator<StageRow> ORDER =
                java.util.Comparator.comparingInt(StageRow::stageId).thenComparingInt(StageRow::attempt);
    }

    /** One executor's latest reported totals. */
    public record ExecutorRow(String executorId, String host, Map<String, Long> metrics) {
    }

    /**
     * The communicator path on the driver: the epoch of the latest communicator formed or being formed (0: never),
     * its members in rank order (empty: none formed), and why the latest forming failed (null: it did not).
     */
    public record CommunicatorRow(long epoch, List<String> members, String failure) {
        public static final CommunicatorRow NONE = new CommunicatorRow(0, List.of(), null);
    }

    public static final ShuffleSummary EMPTY = new ShuffleSummary(List.of(), List.of(), CommunicatorRow.NONE);

    /** A metric's sum over the executors' latest totals: the driver's gauge of that name. */
    public long total(String metric) {
        return executors.stream().mapToLong(e -> e.metrics().getOrDefault(metric, 0L)).sum();
    }
}
