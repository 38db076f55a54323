package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * SQL query answers as text, and how two answers to the same query compare. Pure: no Spark; the workload states
 * each answer's ORDER BY keys (as output column indexes) and LIMIT, read from Spark's plan.
 *
 * <p>Two answers are {@link Verdict#IDENTICAL}; or hold the same rows in {@link Verdict#ORDER_WITHIN_TIES another
 * order among rows whose ORDER BY keys are equal}; or differ {@link Verdict#LIMIT_TIES only in which rows of the
 * last group of equal keys made it under the LIMIT}; or differ like that or identically but for
 * {@link Verdict#FLOAT_ROUNDING double or float values within a relative} {@link #RELATIVE_TOLERANCE} (a sum of
 * doubles depends on the order its terms arrive in, which any shuffle may change); anything else is a
 * {@link Verdict#DIFFERENT real difference}. When the ORDER BY keys are not all output columns the ties cannot be
 * seen, so any difference beyond float rounding in the same order is a real one.
 */
final class QueryAnswers {
    /** Relative tolerance for double and float columns under {@link Verdict#FLOAT_ROUNDING}. */
    static final double RELATIVE_TOLERANCE = 1e-9;
    static final String NULL = "\\N";

    private QueryAnswers() {
    }

    /** How an answer compares with the reference answer, from the best case to the one that fails the suite. */
    enum Verdict {
        IDENTICAL("identical"),
        ORDER_WITHIN_TIES("same rows, different order within ties of the ORDER BY"),
        LIMIT_TIES("different rows only among ties at the LIMIT boundary"),
        FLOAT_ROUNDING("floating-point rounding only (relative " + RELATIVE_TOLERANCE + ")"),
        DIFFERENT("REAL DIFFERENCE");

        final String text;

        Verdict(String text) {
            this.text = text;
        }
    }

    record Comparison(Verdict verdict, String detail) {
    }

    /**
     * One query's answer: the result columns' Spark types (simple strings), the ORDER BY keys as output column
     * indexes in sort order (empty: no ORDER BY, so every row ties with every other; null: some key is not an
     * output column), the LIMIT (-1 for none) and the rows, each value as text ({@link #NULL} for null).
     */
    record Answer(String query, List<String> types, List<Integer> orderKeys, long limit, List<List<String>> rows) {
        /** Whether two rows of this answer tie on the ORDER BY keys (all rows tie without an ORDER BY). */
        boolean ties(List<String> a, List<String> b, boolean tolerant) {
            for (int k : orderKeys) {
                if (!same(types.get(k), a.get(k), b.get(k), tolerant)) {
                    return false;
                }
            }
            return true;
        }

        /** Whether some rows tie on the ORDER BY keys, so that their order is up to the engine. */
        boolean hasTies() {
            if (orderKeys == null) {
                return false;
            }
            for (int i = 1; i < rows.size(); i++) {
                if (ties(rows.get(i - 1), rows.get(i), false)) {
                    return true;
                }
            }
            return false;
        }

        boolean hasFloatingPoint() {
            return types.stream().anyMatch(QueryAnswers::floating);
        }
    }

    /** The text of answers: per query a header of four lines, then one line per row, values tab-separated. */
    static List<String> format(List<Answer> answers) {
        List<String> out = new ArrayList<>();
        for (Answer a : answers) {
            out.add("#query " + a.query());
            out.add("#types " + String.join(",", a.types()));
            out.add("#order " + (a.orderKeys() == null ? "unmapped"
                    : String.join(",", a.orderKeys().stream().map(String::valueOf).toList())));
            out.add("#limit " + a.limit() + " rows " + a.rows().size());
            for (List<String> row : a.rows()) {
                out.add(String.join("\t", row.stream().map(QueryAnswers::escape).toList()));
            }
        }
        return out;
    }

    static List<Answer> parse(List<String> lines) {
        List<Answer> out = new ArrayList<>();
        int i = 0;
        while (i < lines.size()) {
            String query = field(lines.get(i++), "#query ");
            String typesText = field(lines.get(i++), "#types ");
            List<String> types = typesText.isEmpty() ? List.of() : splitTypes(typesText);
            String order = field(lines.get(i++), "#order ");
            List<Integer> keys = order.equals("unmapped") ? null : order.isEmpty() ? List.of()
                    : Arrays.stream(order.split(",")).map(Integer::valueOf).toList();
            String[] limitRows = field(lines.get(i++), "#limit ").split(" rows ");
            int n = Integer.parseInt(limitRows[1]);
            List<List<String>> rows = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                rows.add(Arrays.stream(lines.get(i++).split("\t", -1)).map(QueryAnswers::unescape).toList());
            }
            out.add(new Answer(query, types, keys, Long.parseLong(limitRows[0]), rows));
        }
        return out;
    }

    /** The column types of a {@code #types} line: split at the commas between types, not inside decimal(p,s). */
    static List<String> splitTypes(String text) {
        List<String> types = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '(' || c == '<') {
                depth++;
            } else if (c == ')' || c == '>') {
                depth--;
            } else if (c == ',' && depth == 0) {
                types.add(text.substring(start, i));
                start = i + 1;
            }
        }
        types.add(text.substring(start));
        return types;
    }

    private static String field(String line, String prefix) {
        if (!line.startsWith(prefix)) {
            throw new IllegalArgumentException("expected '" + prefix + "...', found '" + line + "'");
        }
        return line.substring(prefix.length());
    }

    static String escape(String v) {
        if (v == null) {
            return NULL;
        }
        return v.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
    }

    static String unescape(String v) {
        if (v.equals(NULL)) {
            return null;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '\\' && i + 1 < v.length()) {
                char n = v.charAt(++i);
                b.append(n == 't' ? '\t' : n == 'n' ? '\n' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** How {@code other} compares with {@code reference}, the built-in shuffle's answer to the same query. */
    static Comparison compare(Answer reference, Answer other) {
        if (reference.rows().equals(other.rows()) && reference.types().equals(other.types())) {
            return new Comparison(Verdict.IDENTICAL, "");
        }
        if (!reference.types().equals(other.types())) {
            return new Comparison(Verdict.DIFFERENT, "column types " + reference.types() + " vs " + other.types());
        }
        if (reference.rows().size() != other.rows().size()) {
            return new Comparison(Verdict.DIFFERENT, reference.rows().size() + " rows vs " + other.rows().size());
        }
        Comparison exact = withinTies(reference, other, false);
        if (exact != null) {
            return exact;
        }
        Comparison rounded = withinTies(reference, other, true);
        if (rounded != null) {
            String also = rounded.verdict() == Verdict.IDENTICAL ? "" : " and " + rounded.verdict().text;
            return new Comparison(Verdict.FLOAT_ROUNDING, "largest relative difference "
                    + String.format(Locale.ROOT, "%.1e", largestRelativeDifference(reference, other)) + also);
        }
        return new Comparison(Verdict.DIFFERENT, firstDifference(reference, other));
    }

    /**
     * The verdict when {@code other}'s rows equal the reference's up to order within ties and the LIMIT's last
     * tie group (values compared exactly, or doubles within the tolerance), else null.
     */
    private static Comparison withinTies(Answer ref, Answer other, boolean tolerant) {
        List<List<String>> a = ref.rows();
        List<List<String>> b = other.rows();
        if (sameRows(ref.types(), a, b, tolerant)) {
            return new Comparison(Verdict.IDENTICAL, "");
        }
        if (ref.orderKeys() == null) {
            return null; // ties unknown: only the same rows in the same order would do
        }
        for (int i = 0; i < a.size(); i++) {
            if (!ref.ties(a.get(i), b.get(i), tolerant)) {
                return null; // the keys themselves differ: not a matter of ties
            }
        }
        int moved = 0;
        for (int start = 0; start < a.size();) {
            int end = start + 1;
            while (end < a.size() && ref.ties(a.get(start), a.get(end), tolerant)) {
                end++;
            }
            List<List<String>> ga = a.subList(start, end);
            List<List<String>> gb = b.subList(start, end);
            if (!sameRows(ref.types(), sorted(ref.types(), ga), sorted(ref.types(), gb), tolerant)) {
                boolean lastAtLimit = end == a.size() && ref.limit() == a.size();
                if (!lastAtLimit) {
                    return null;
                }
                return new Comparison(Verdict.LIMIT_TIES, String.format(Locale.ROOT, "the last %d rows tie on the "
                        + "ORDER BY keys %s at LIMIT %d", end - start, ref.orderKeys(), ref.limit()));
            }
            if (!sameRows(ref.types(), ga, gb, tolerant)) {
                moved += end - start;
            }
            start = end;
        }
        return new Comparison(Verdict.ORDER_WITHIN_TIES, moved + " rows in groups that tie on the ORDER BY keys "
                + (ref.orderKeys().isEmpty() ? "(no ORDER BY)" : ref.orderKeys().toString()));
    }

    private static boolean sameRows(List<String> types, List<List<String>> a, List<List<String>> b,
            boolean tolerant) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            for (int c = 0; c < types.size(); c++) {
                if (!same(types.get(c), a.get(i).get(c), b.get(i).get(c), tolerant)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Rows in a canonical order: column by column, floating-point columns by value, the others as text. */
    private static List<List<String>> sorted(List<String> types, List<List<String>> rows) {
        Comparator<List<String>> order = (x, y) -> {
            for (int c = 0; c < types.size(); c++) {
                int d = compareValues(types.get(c), x.get(c), y.get(c));
                if (d != 0) {
                    return d;
                }
            }
            return 0;
        };
        List<List<String>> out = new ArrayList<>(rows);
        out.sort(order);
        return out;
    }

    private static int compareValues(String type, String x, String y) {
        if (x == null || y == null) {
            return x == null ? (y == null ? 0 : -1) : 1;
        }
        return floating(type) ? Double.compare(Double.parseDouble(x), Double.parseDouble(y)) : x.compareTo(y);
    }

    static boolean floating(String type) {
        return type.equals("double") || type.equals("float");
    }

    static boolean same(String type, String x, String y, boolean tolerant) {
        if (x == null || y == null) {
            return x == y;
        }
        if (x.equals(y)) {
            return true;
        }
        if (!tolerant || !floating(type)) {
            return false;
        }
        return relativeDifference(Double.parseDouble(x), Double.parseDouble(y)) <= RELATIVE_TOLERANCE;
    }

    private static double relativeDifference(double a, double b) {
        if (a == b || (Double.isNaN(a) && Double.isNaN(b))) {
            return 0;
        }
        return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
    }

    private static double largestRelativeDifference(Answer ref, Answer other) {
        double most = 0;
        List<List<String>> a = sorted(ref.types(), ref.rows());
        List<List<String>> b = sorted(ref.types(), other.rows());
        for (int i = 0; i < a.size(); i++) {
            for (int c = 0; c < ref.types().size(); c++) {
                String x = a.get(i).get(c);
                String y = b.get(i).get(c);
                if (floating(ref.types().get(c)) && x != null && y != null) {
                    most = Math.max(most, relativeDifference(Double.parseDouble(x), Double.parseDouble(y)));
                }
            }
        }
        return most;
    }

    private static String firstDifference(Answer ref, Answer other) {
        for (int i = 0; i < ref.rows().size(); i++) {
            if (!ref.rows().get(i).equals(other.rows().get(i))) {
                return "row " + i + ": " + ref.rows().get(i) + " vs " + other.rows().get(i)
                        + (ref.orderKeys() == null ? " (ORDER BY keys are not all output columns)" : "");
            }
        }
        return "";
    }
}
