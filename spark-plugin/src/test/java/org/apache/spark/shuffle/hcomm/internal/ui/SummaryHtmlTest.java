package org.apache.spark.shuffle.hcomm.internal.ui;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The tab's HTML: every number in a marked cell, the totals summed over executors, text escaped. */
class SummaryHtmlTest {
    @Test
    void marksEveryNumberAndEscapesText() {
        ShuffleSummary s = new ShuffleSummary(
                List.of(new ShuffleSummary.StageRow(3, 1, 2, Map.of("bytesReadOneSided", 40L, "bytesToHost", 9L))),
                List.of(new ShuffleSummary.ExecutorRow("1", "<host>", Map.of("bytesReadOneSided", 25L)),
                        new ShuffleSummary.ExecutorRow("2", null, Map.of("bytesReadOneSided", 15L))),
                new ShuffleSummary.CommunicatorRow(4, List.of("1", "2"), "rank 1 said \"<no>\""));
        String html = SummaryHtml.render(s);
        assertTrue(html.contains("<td data-row=\"total\" data-metric=\"bytesReadOneSided\">40</td>"), html);
        assertTrue(html.contains("<td data-row=\"stage-3.1\" data-metric=\"bytesToHost\">9</td>"), html);
        assertTrue(html.contains("<td data-row=\"executor-2\" data-metric=\"bytesReadOneSided\">15</td>"), html);
        assertTrue(html.contains("<td data-row=\"executor-2\" data-metric=\"bytesToHost\">0</td>"), html);
        assertTrue(html.contains("executor 1 on &lt;host&gt;"), html);
        assertTrue(html.contains("epoch <span data-metric=\"communicatorEpoch\">4</span>"), html);
        assertTrue(html.contains("members in rank order: 1, 2"), html);
        assertTrue(html.contains("rank 1 said &quot;&lt;no&gt;&quot;"), html);
        assertFalse(html.contains("<host>") || html.contains("<no>"), html);
    }

    @Test
    void saysWhenNoCommunicatorFormed() {
        assertTrue(SummaryHtml.render(ShuffleSummary.EMPTY).contains("Communicator: none formed"));
    }
}
