package org.apache.spark.shuffle.hcomm.internal.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary;
import org.junit.jupiter.api.Test;

/**
 * The UI's rows from cumulative reports: a stage's adds each report's growth since its executor's previous one, an
 * executor's is its latest.
 */
class ReportedRowsTest {
    private final ReportedRows rows = new ReportedRows();
    private final ShuffleMetrics one = ShuffleMetrics.forExecutor();
    private final ShuffleMetrics two = ShuffleMetrics.forExecutor();

    private static long bytes(ShuffleSummary.StageRow row) {
        return row.metrics().get("bytesReadOneSided");
    }

    @Test
    void attributesEachExecutorsGrowthToTheReportedStage() {
        StageAttempt first = new StageAttempt(1, 0);
        StageAttempt second = new StageAttempt(2, 0);
        assertNull(rows.stageRow(first));
        one.bytesReadOneSided.inc(100);
        one.channelsCreated.inc(1);
        rows.report("1", first, one.snapshot());
        one.bytesReadOneSided.inc(50);
        rows.report("1", second, one.snapshot());
        two.bytesReadOneSided.inc(30);
        two.bytesReadFallback.inc(7);
        rows.report("2", second, two.snapshot());
        rows.report("2", second, two.snapshot()); // the same totals again add nothing

        ShuffleSummary.StageRow a = rows.stageRow(first);
        ShuffleSummary.StageRow b = rows.stageRow(second);
        assertEquals(100, bytes(a));
        assertEquals(1, a.metrics().get("channelsCreated"));
        assertEquals(1, a.reports());
        assertEquals(80, bytes(b));
        assertEquals(0, b.metrics().get("channelsCreated"));
        assertEquals(7, b.metrics().get("bytesReadFallback"));
        assertEquals(3, b.reports());
        assertEquals(List.of(1, 2), rows.stageRows().stream().map(ShuffleSummary.StageRow::stageId).toList());

        List<ShuffleSummary.ExecutorRow> executors = rows.executorRows(id -> "host" + id);
        assertEquals(List.of("1", "2"), executors.stream().map(ShuffleSummary.ExecutorRow::executorId).toList());
        assertEquals(150, executors.get(0).metrics().get("bytesReadOneSided"));
        assertEquals("host2", executors.get(1).host());
        assertEquals(2, rows.drainChanged(id -> null).size());
        assertEquals(List.of(), rows.drainChanged(id -> null));
        two.bytesReadOneSided.inc(1);
        rows.report("2", second, two.snapshot());
        assertEquals(List.of("2"),
                rows.drainChanged(id -> null).stream().map(ShuffleSummary.ExecutorRow::executorId).toList());
    }
}
