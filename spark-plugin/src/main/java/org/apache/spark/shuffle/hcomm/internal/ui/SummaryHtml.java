package org.apache.spark.shuffle.hcomm.internal.ui;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.metrics.MetricEntry;

/**
 * The HComm tab's content as HTML, from a {@link ShuffleSummary} alone (the live UI and the history server render the
 * same). Every number is a metric's exact value in a cell marked {@code data-row} and {@code data-metric} (the rows:
 * {@code total}, {@code stage-<id>.<attempt>}, {@code executor-<id>}); each column header carries the metric's
 * documentation as its title. Stateless.
 */
public final class SummaryHtml {
    /** The tables: a caption and its metrics, each shown for the totals, every stage attempt and every executor. */
    private static final Map<String, List<MetricEntry>> GROUPS = new LinkedHashMap<>();

    static {
        GROUPS.put("Bytes read: one-sidedly and by Spark's fetch", List.of(MetricEntry.BYTES_READ_ONE_SIDED,
                MetricEntry.BYTES_READ_CROSS_HOST, MetricEntry.BYTES_READ_WITHIN_HOST, MetricEntry.BYTES_READ_FALLBACK,
                MetricEntry.BYTES_READ_BEFORE_COMMUNICATOR));
        GROUPS.put("Why Spark's fetch read: the fallback's counters", List.of(MetricEntry.BYTES_READ_FALLBACK,
                MetricEntry.TASKS_BEFORE_COMMUNICATOR,
                MetricEntry.OUTPUTS_PUBLISHED_LATE, MetricEntry.CHUNKS_RETIRED, MetricEntry.INDEXES_MAPPED));
        GROUPS.put("Reads, round trips and waits", List.of(MetricEntry.READS_ISSUED, MetricEntry.READ_TASKS,
                MetricEntry.READ_ROUND_TRIPS, MetricEntry.READ_TASKS_OVER_TWO_ROUND_TRIPS, MetricEntry.INDEX_ROUNDS,
                MetricEntry.READ_WAVES, MetricEntry.READ_LATENCY, MetricEntry.FETCH_WAIT_INDEX_MICROS,
                MetricEntry.FETCH_WAIT_FIRST_WAVE_MICROS, MetricEntry.FETCH_WAIT_LATER_WAVES_MICROS,
                MetricEntry.FETCH_WAIT_SPARK_MILLIS));
        GROUPS.put("Channels", List.of(MetricEntry.CHANNELS_CREATED, MetricEntry.CHANNELS_DESTROYED,
                MetricEntry.DESTROY_CALLS, MetricEntry.CHANNEL_SETUP_TIME));
        GROUPS.put("Communicator path (Atlas A2/A3)", List.of(MetricEntry.COMMUNICATORS_JOINED,
                MetricEntry.COMMUNICATORS_DESTROYED, MetricEntry.BYTES_TO_HOST,
                MetricEntry.WINDOWS_OPENED, MetricEntry.WINDOWS_SERVED, MetricEntry.WINDOWS_REFUSED,
                MetricEntry.WINDOWS_POISONED));
    }

    private SummaryHtml() {
    }

    /** The tab's title. */
    public static final String TITLE = "HComm shuffle";

    public static String render(ShuffleSummary s) {
        StringBuilder sb = new StringBuilder("<div id=\"hcomm-shuffle\">");
        sb.append("<p>The <code>HcommShuffle</code> metrics the executors reported to the driver. A stage attempt's "
                + "row is what its reports added to the executors' counters: an executor reports when the attempt's "
                + "channels are destroyed (after each task when it has no HComm transport), so work between two "
                + "reports (map outputs published by a stage without channels, stages running at once) counts in "
                + "the stage of the later report. An executor's row is its latest totals; the total is their sum. "
                + "HComm tells executors apart, not peers: bytes are split by host (within or across) only. Why a "
                + "block went by Spark's fetch is in the executors' logs, one warning per fallback.</p>");
        communicator(sb, s.communicator());
        for (Map.Entry<String, List<MetricEntry>> g : GROUPS.entrySet()) {
            table(sb, g.getKey(), g.getValue(), s);
        }
        return sb.append("</div>").toString();
    }

    private static void table(StringBuilder sb, String caption, List<MetricEntry> metrics, ShuffleSummary s) {
        sb.append("<h4>").append(escape(caption)).append("</h4>")
                .append("<div style=\"overflow-x: auto\"><table class=\"table table-bordered table-sm table-striped\">")
                .append("<thead><tr><th>row</th>");
        for (MetricEntry m : metrics) {
            sb.append("<th title=\"").append(escape(m.meaning().replace("`", ""))).append("\">")
                    .append(escape(m.metricName())).append("<br><small>").append(escape(m.driverUnit()))
                    .append("</small></th>");
        }
        sb.append("</tr></thead><tbody>");
        List<String[]> labels = new ArrayList<>();
        List<Map<String, Long>> values = new ArrayList<>();
        Map<String, Long> totals = new LinkedHashMap<>();
        metrics.forEach(m -> totals.put(m.metricName(), s.total(m.metricName())));
        labels.add(new String[] {"total", "all executors"});
        values.add(totals);
        for (ShuffleSummary.StageRow r : s.stages()) {
            String id = r.stageId() < 0 ? "outside any stage" : "stage " + r.stageId() + " (attempt " + r.attempt()
                    + ", " + r.reports() + " reports)";
            labels.add(new String[] {"stage-" + r.stageId() + "." + r.attempt(), id});
            values.add(r.metrics());
        }
        for (ShuffleSummary.ExecutorRow r : s.executors()) {
            labels.add(new String[] {"executor-" + r.executorId(),
                    "executor " + r.executorId() + (r.host() == null ? "" : " on " + r.host())});
            values.add(r.metrics());
        }
        for (int i = 0; i < labels.size(); i++) {
            String row = labels.get(i)[0];
            sb.append("<tr data-row=\"").append(escape(row)).append("\"><td style=\"white-space: nowrap\">")
                    .append(escape(labels.get(i)[1])).append("</td>");
            for (MetricEntry m : metrics) {
                sb.append("<td data-row=\"").append(escape(row)).append("\" data-metric=\"").append(m.metricName())
                        .append("\">").append(values.get(i).getOrDefault(m.metricName(), 0L)).append("</td>");
            }
            sb.append("</tr>");
        }
        sb.append("</tbody></table></div>");
    }

    static String escape(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&#39;");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }

    /** The communicator's paragraph. */
    private static void communicator(StringBuilder sb, ShuffleSummary.CommunicatorRow c) {
        sb.append("<p id=\"hcomm-communicator\">Communicator: ");
        if (c.epoch() == 0) {
            sb.append("none formed (the endpoint path, or no Atlas A2/A3 executor)");
        } else {
            sb.append("epoch <span data-metric=\"communicatorEpoch\">").append(c.epoch()).append("</span>, ")
                    .append(c.members().isEmpty() ? "not formed now"
                            : "members in rank order: " + escape(String.join(", ", c.members())));
        }
        if (c.failure() != null) {
            sb.append("; the latest forming failed: ").append(escape(c.failure()));
        }
        sb.append(".</p>");
    }
}
