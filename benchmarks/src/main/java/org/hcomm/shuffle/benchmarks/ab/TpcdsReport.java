package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The TPC-DS sections of the summary: per configuration the power run's total query time and its ratios to builtin
 * and builtin-network, shuffle bytes, the answers compared with builtin's, the queries whose time moves most, and
 * every query's time. Values are medians over the repetitions.
 */
final class TpcdsReport {
    /** How many of the queries that move most the report and the chart show. */
    static final int MOVERS = 10;

    private TpcdsReport() {
    }

    /** A query's seconds in one run (NaN when it has none). */
    @SuppressWarnings("unchecked")
    static double querySeconds(RunResult r, String query) {
        Object queries = r.detail().get("queries");
        if (queries instanceof Map<?, ?> m && m.get(query) instanceof Map<?, ?> q
                && q.get("seconds") instanceof Number n) {
            return n.doubleValue();
        }
        return Double.NaN;
    }

    @SuppressWarnings("unchecked")
    private static double queryMb(RunResult r, String query, String key) {
        Object queries = r.detail().get("queries");
        if (queries instanceof Map<?, ?> m && m.get(query) instanceof Map<?, ?> q && q.get(key) instanceof Number n) {
            return n.doubleValue() / 1e6;
        }
        return 0;
    }

    /** The sum of the queries' seconds in one run: the power run's time. */
    static double totalSeconds(RunResult r) {
        return TpcdsSql.QUERIES.stream().mapToDouble(q -> querySeconds(r, q)).sum();
    }

    /** Median seconds of one query per configuration over one cell's runs. */
    static Map<ShuffleConfig, Double> medians(Preset preset, List<RunResult> cellRuns, String query) {
        Map<ShuffleConfig, Double> out = new LinkedHashMap<>();
        for (ShuffleConfig c : preset.configs()) {
            out.put(c, Stats.of(cellRuns.stream().filter(r -> r.config() == c).toList(),
                    r -> querySeconds(r, query)).median());
        }
        return out;
    }

    /** The queries whose median time differs most from builtin's in any configuration (absolute seconds). */
    static List<String> movers(Preset preset, List<RunResult> cellRuns, int n) {
        Map<String, Double> change = new LinkedHashMap<>();
        for (String q : TpcdsSql.QUERIES) {
            Map<ShuffleConfig, Double> m = medians(preset, cellRuns, q);
            Double base = m.get(ShuffleConfig.BUILTIN);
            double most = 0;
            for (Map.Entry<ShuffleConfig, Double> e : m.entrySet()) {
                if (base != null && !Double.isNaN(base) && !Double.isNaN(e.getValue())) {
                    most = Math.max(most, Math.abs(e.getValue() - base));
                }
            }
            change.put(q, most);
        }
        return change.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()))
                .limit(n).map(Map.Entry::getKey).toList();
    }

    static String markdown(Preset preset, List<RunResult> results, Map<Preset.Cell, AnswerCheck> answers) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Preset.Cell, AnswerCheck> e : answers.entrySet()) {
            Preset.Cell cell = e.getKey();
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell) && r.ok()).toList();
            sb.append("\n## TPC-DS power run: ").append(cell.label()).append("\n\n")
                    .append(Workload.of(cell.workload()).describe(cell.targetMb())).append(". *Queries s* is the sum "
                    + "of the 103 queries' times (each from parsing to its collected rows); the tables were written "
                    + "before, untimed. One-sided and fallback bytes are the whole run's (the plugin's counters), "
                    + "shuffle bytes Spark's.\n\n");
            totals(sb, preset, mine);
            answerLines(sb, preset, e.getValue());
            queryTable(sb, preset, mine, movers(preset, mine, MOVERS), "Queries that move most (largest change of "
                    + "the median time against builtin's, any configuration)", e.getValue());
            queryTable(sb, preset, mine, TpcdsSql.QUERIES, "Every query", e.getValue());
        }
        return sb.toString();
    }

    private static void totals(StringBuilder sb, Preset preset, List<RunResult> mine) {
        sb.append("| configuration | queries s | / builtin | / builtin-network | shuffle MB written | shuffle MB "
                + "read | one-sided MB | fallback MB |\n|---|---|---|---|---|---|---|---|\n");
        Map<ShuffleConfig, Stats> total = new LinkedHashMap<>();
        for (ShuffleConfig c : preset.configs()) {
            total.put(c, Stats.of(mine.stream().filter(r -> r.config() == c).toList(), TpcdsReport::totalSeconds));
        }
        for (ShuffleConfig c : preset.configs()) {
            List<RunResult> rc = mine.stream().filter(r -> r.config() == c).toList();
            sb.append("| ").append(c.label()).append(" | ").append(total.get(c).format("%.1f"))
                    .append(" | ").append(SummaryReport.ratio(total, c, ShuffleConfig.BUILTIN))
                    .append(" | ").append(SummaryReport.ratio(total, c, ShuffleConfig.BUILTIN_NETWORK))
                    .append(" | ").append(Stats.of(rc, r -> r.shuffleWriteBytes() / 1e6).format("%.0f"))
                    .append(" | ").append(Stats.of(rc, r -> r.shuffleReadBytes() / 1e6).format("%.0f"))
                    .append(" | ").append(c.isHcomm()
                            ? Stats.of(rc, r -> r.oneSidedBytes() / 1e6).format("%.0f") : "–")
                    .append(" | ").append(c.isHcomm()
                            ? Stats.of(rc, r -> r.fallbackBytes() / 1e6).format("%.0f") : "–")
                    .append(" |\n");
        }
    }

    private static void answerLines(StringBuilder sb, Preset preset, AnswerCheck check) {
        sb.append("\nAnswers against builtin's of the same repetition:\n\n");
        for (Map.Entry<ShuffleConfig, Map<String, QueryAnswers.Comparison>> c : check.byConfig().entrySet()) {
            Map<QueryAnswers.Verdict, List<String>> by = new LinkedHashMap<>();
            c.getValue().forEach((q, v) -> by.computeIfAbsent(v.verdict(), k -> new ArrayList<>()).add(q));
            StringJoiner line = new StringJoiner("; ");
            for (QueryAnswers.Verdict v : QueryAnswers.Verdict.values()) {
                List<String> qs = by.getOrDefault(v, List.of());
                if (!qs.isEmpty()) {
                    line.add(v == QueryAnswers.Verdict.IDENTICAL ? qs.size() + " identical"
                            : (v == QueryAnswers.Verdict.DIFFERENT ? "**" : "") + v.text + ": " + String.join(", ", qs)
                                    + (v == QueryAnswers.Verdict.DIFFERENT ? "**" : ""));
                }
            }
            sb.append("- ").append(c.getKey().label()).append(": ").append(line).append('\n');
        }
        sb.append("- queries whose order depends on the engine (builtin's answer has rows that tie on the ORDER BY "
                + "keys, or no ORDER BY): ").append(check.tiedQueries().isEmpty() ? "none"
                        : String.join(", ", check.tiedQueries())).append('\n');
        sb.append("- queries with double columns (last digits may depend on the order of a sum): ")
                .append(check.floatQueries().isEmpty() ? "none" : String.join(", ", check.floatQueries()))
                .append("\n");
    }

    private static void queryTable(StringBuilder sb, Preset preset, List<RunResult> mine, List<String> queries,
            String title, AnswerCheck check) {
        sb.append("\n").append(title).append(":\n\n| query |");
        preset.configs().forEach(c -> sb.append(' ').append(c.label()).append(" s |"));
        sb.append(" shuffle MB written (builtin) | answers |\n|---|");
        sb.append("---|".repeat(preset.configs().size())).append("---|---|\n");
        List<RunResult> builtin = mine.stream().filter(r -> r.config() == ShuffleConfig.BUILTIN).toList();
        for (String q : queries) {
            sb.append("| ").append(q).append(" |");
            medians(preset, mine, q).forEach((c, v) -> sb.append(String.format(Locale.ROOT, " %.2f |", v)));
            sb.append(' ').append(Stats.of(builtin, r -> queryMb(r, q, "shuffleWriteBytes")).format("%.1f"))
                    .append(" | ");
            StringJoiner verdicts = new StringJoiner(", ");
            check.byConfig().forEach((c, m) -> {
                QueryAnswers.Comparison v = m.get(q);
                if (v != null && v.verdict() != QueryAnswers.Verdict.IDENTICAL) {
                    verdicts.add(c.label() + ": " + v.verdict().text);
                }
            });
            sb.append(verdicts.length() == 0 ? "identical" : verdicts.toString()).append(" |\n");
        }
    }
}
