package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary;

/**
 * The driver metrics per stage attempt, for the UI. Executors report cumulative counters only: a stage report when a
 * stage attempt's channels are destroyed, a metrics report after a task on an executor without transport. So a
 * stage's row is the sum, over the reports naming it, of each counter's growth since that executor's previous report.
 * That is exact for what a stage's readers did while no other stage ran on the executor; work done between reports
 * (map outputs published by a stage that has no channels, reads of concurrent stages) counts in the next report's
 * stage. Bounded like the driver's other per-stage maps. Guarded by the {@link DriverState}'s lock.
 */
final class StageBreakdown {
    private final Map<String, Map<String, Long>> lastSeen = new HashMap<>();
    private final Map<StageAttempt, Map<String, Long>> perStage = DriverState.boundedMap();
    private final Map<StageAttempt, Integer> reports = DriverState.boundedMap();

    /** Attributes the growth of {@code executorId}'s counters since its previous report to {@code stage}. */
    void report(String executorId, StageAttempt stage, ShuffleMetrics.Snapshot totals) {
        Map<String, Long> now = ShuffleMetrics.valuesOf(totals);
        Map<String, Long> before = lastSeen.put(executorId, now);
        Map<String, Long> row = perStage.computeIfAbsent(stage, k -> new LinkedHashMap<>());
        now.forEach((name, value) -> row.merge(name, value - (before == null ? 0 : before.getOrDefault(name, 0L)),
                Long::sum));
        reports.merge(stage, 1, Integer::sum);
    }

    /** The row of one stage attempt, or null when no report named it. */
    ShuffleSummary.StageRow row(StageAttempt stage) {
        Map<String, Long> row = perStage.get(stage);
        return row == null ? null
                : new ShuffleSummary.StageRow(stage.stageId(), stage.attempt(), reports.get(stage),
                        java.util.Collections.unmodifiableMap(new LinkedHashMap<>(row)));
    }

    /** Every remembered stage attempt's row, by stage id and attempt. */
    List<ShuffleSummary.StageRow> rows() {
        List<ShuffleSummary.StageRow> out = new ArrayList<>();
        perStage.keySet().forEach(s -> out.add(row(s)));
        out.sort(java.util.Comparator.comparingInt(ShuffleSummary.StageRow::stageId)
                .thenComparingInt(ShuffleSummary.StageRow::attempt));
        return out;
    }
}
