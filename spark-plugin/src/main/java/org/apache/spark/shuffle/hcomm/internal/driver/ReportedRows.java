package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary;

/**
 * The UI's rows, from the executors' reports: per executor its latest values, per stage attempt what the reports
 * naming it added. Executors report cumulative counters only: a stage report when a stage attempt's channels are
 * destroyed, a metrics report after a task on an executor without transport. So a stage's row is the sum, over the
 * reports naming it, of each counter's growth since that executor's previous report. That is exact for what a
 * stage's readers did while no other stage ran on the executor; work done between reports (map outputs published by
 * a stage that has no channels, reads of concurrent stages) counts in the next report's stage. Stage rows are bounded
 * like the driver's other per-stage maps. Guarded by the {@link DriverState}'s lock.
 */
final class ReportedRows {
    private final Map<String, Map<String, Long>> latest = new TreeMap<>();
    private final Set<String> changed = new LinkedHashSet<>(); // executors reported since drainChanged
    private final Map<StageAttempt, Map<String, Long>> perStage = StageLedger.boundedMap();
    private final Map<StageAttempt, Integer> reports = StageLedger.boundedMap();

    /** Attributes the growth of {@code executorId}'s counters since its previous report to {@code stage}. */
    void report(String executorId, StageAttempt stage, ShuffleMetrics.Snapshot totals) {
        Map<String, Long> now = ShuffleMetrics.valuesOf(totals);
        Map<String, Long> before = latest.put(executorId, now);
        changed.add(executorId);
        Map<String, Long> row = perStage.computeIfAbsent(stage, k -> new LinkedHashMap<>());
        now.forEach((name, value) -> row.merge(name, value - (before == null ? 0 : before.getOrDefault(name, 0L)),
                Long::sum));
        reports.merge(stage, 1, Integer::sum);
    }

    /** The row of one stage attempt, or null when no report named it. */
    ShuffleSummary.StageRow stageRow(StageAttempt stage) {
        Map<String, Long> row = perStage.get(stage);
        return row == null ? null : new ShuffleSummary.StageRow(stage.stageId(), stage.attempt(), reports.get(stage),
                java.util.Collections.unmodifiableMap(new LinkedHashMap<>(row)));
    }

    /** Every remembered stage attempt's row, by stage id and attempt. */
    List<ShuffleSummary.StageRow> stageRows() {
        List<ShuffleSummary.StageRow> out = new ArrayList<>();
        perStage.keySet().forEach(s -> out.add(stageRow(s)));
        out.sort(ShuffleSummary.StageRow.ORDER);
        return out;
    }

    /** Every executor's latest values, by executor id; {@code hosts} names an executor's host (or null). */
    List<ShuffleSummary.ExecutorRow> executorRows(Function<String, String> hosts) {
        return rows(latest.keySet(), hosts);
    }

    /** The rows of the executors that reported since the last call. */
    List<ShuffleSummary.ExecutorRow> drainChanged(Function<String, String> hosts) {
        List<ShuffleSummary.ExecutorRow> out = rows(changed, hosts);
        changed.clear();
        return out;
    }

    private List<ShuffleSummary.ExecutorRow> rows(Set<String> ids, Function<String, String> hosts) {
        List<ShuffleSummary.ExecutorRow> out = new ArrayList<>();
        ids.forEach(id -> out.add(new ShuffleSummary.ExecutorRow(id, hosts.apply(id),
                java.util.Collections.unmodifiableMap(new LinkedHashMap<>(latest.get(id))))));
        return out;
    }
}
