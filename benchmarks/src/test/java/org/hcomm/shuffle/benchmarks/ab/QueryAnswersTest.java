package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Each verdict of the answer comparison, and the real differences it must not explain away. */
class QueryAnswersTest {
    /** Columns: a name (string), a count (bigint, ORDER BY key 1 then 0) and an average (double). */
    private static final List<String> TYPES = List.of("string", "bigint", "double");

    private static List<String> row(String... values) {
        return Arrays.asList(values);
    }

    private static QueryAnswers.Answer answer(List<Integer> keys, long limit, List<List<String>> rows) {
        return new QueryAnswers.Answer("q", TYPES, keys, limit, rows);
    }

    private static QueryAnswers.Verdict verdict(QueryAnswers.Answer ref, QueryAnswers.Answer other) {
        return QueryAnswers.compare(ref, other).verdict();
    }

    @Test
    void theSameRowsInTheSameOrderAreIdentical() {
        List<List<String>> rows = List.of(row("a", "1", "0.5"), row("b", "2", null));
        assertEquals(QueryAnswers.Verdict.IDENTICAL,
                verdict(answer(List.of(1), -1, rows), answer(List.of(1), -1, new ArrayList<>(rows))));
    }

    @Test
    void rowsThatTieOnTheKeysMayComeInAnotherOrder() {
        // ORDER BY count: a and b tie on 1
        QueryAnswers.Answer ref = answer(List.of(1), -1, List.of(row("a", "1", "0.5"), row("b", "1", "0.7"),
                row("c", "2", "0.1")));
        QueryAnswers.Answer other = answer(List.of(1), -1, List.of(row("b", "1", "0.7"), row("a", "1", "0.5"),
                row("c", "2", "0.1")));
        assertEquals(QueryAnswers.Verdict.ORDER_WITHIN_TIES, verdict(ref, other));
        assertTrue(ref.hasTies());
    }

    @Test
    void withoutAnOrderByEveryOrderIsTheSameAnswer() {
        QueryAnswers.Answer ref = answer(List.of(), -1, List.of(row("a", "1", "0.5"), row("b", "2", "0.7")));
        QueryAnswers.Answer other = answer(List.of(), -1, List.of(row("b", "2", "0.7"), row("a", "1", "0.5")));
        assertEquals(QueryAnswers.Verdict.ORDER_WITHIN_TIES, verdict(ref, other));
    }

    @Test
    void theLastTieGroupAtTheLimitMayHoldOtherRows() {
        // ORDER BY count LIMIT 3: three rows tie on 2, only two fit
        QueryAnswers.Answer ref = answer(List.of(1), 3, List.of(row("a", "1", "0.5"), row("b", "2", "0.7"),
                row("c", "2", "0.1")));
        QueryAnswers.Answer other = answer(List.of(1), 3, List.of(row("a", "1", "0.5"), row("d", "2", "0.9"),
                row("b", "2", "0.7")));
        assertEquals(QueryAnswers.Verdict.LIMIT_TIES, verdict(ref, other));
    }

    @Test
    void otherRowsInAnEarlierTieGroupAreARealDifference() {
        QueryAnswers.Answer ref = answer(List.of(1), 3, List.of(row("a", "1", "0.5"), row("b", "1", "0.7"),
                row("c", "2", "0.1")));
        QueryAnswers.Answer other = answer(List.of(1), 3, List.of(row("a", "1", "0.5"), row("x", "1", "0.7"),
                row("c", "2", "0.1")));
        assertEquals(QueryAnswers.Verdict.DIFFERENT, verdict(ref, other));
    }

    @Test
    void otherRowsInTheLastGroupWithoutALimitAreARealDifference() {
        // the result has fewer rows than the LIMIT: nothing was cut, so the last group must match too
        QueryAnswers.Answer ref = answer(List.of(1), 100, List.of(row("a", "1", "0.5"), row("b", "2", "0.7")));
        QueryAnswers.Answer other = answer(List.of(1), 100, List.of(row("a", "1", "0.5"), row("c", "2", "0.7")));
        assertEquals(QueryAnswers.Verdict.DIFFERENT, verdict(ref, other));
    }

    @Test
    void doublesThatDifferInTheLastDigitsAreRounding() {
        QueryAnswers.Answer ref = answer(List.of(0), -1, List.of(row("a", "1", "0.30000000000000004")));
        QueryAnswers.Answer other = answer(List.of(0), -1, List.of(row("a", "1", "0.3")));
        QueryAnswers.Comparison c = QueryAnswers.compare(ref, other);
        assertEquals(QueryAnswers.Verdict.FLOAT_ROUNDING, c.verdict());
        assertTrue(ref.hasFloatingPoint());
    }

    @Test
    void aDoubleBeyondTheToleranceIsARealDifference() {
        QueryAnswers.Answer ref = answer(List.of(0), -1, List.of(row("a", "1", "0.3")));
        QueryAnswers.Answer other = answer(List.of(0), -1, List.of(row("a", "1", "0.3000001")));
        assertEquals(QueryAnswers.Verdict.DIFFERENT, verdict(ref, other));
    }

    @Test
    void aDifferentCountOrValueIsARealDifference() {
        QueryAnswers.Answer ref = answer(List.of(1), -1, List.of(row("a", "1", "0.5"), row("b", "2", "0.7")));
        assertEquals(QueryAnswers.Verdict.DIFFERENT,
                verdict(ref, answer(List.of(1), -1, List.of(row("a", "1", "0.5")))));
        assertEquals(QueryAnswers.Verdict.DIFFERENT,
                verdict(ref, answer(List.of(1), -1, List.of(row("a", "1", "0.5"), row("b", "3", "0.7")))));
        assertEquals(QueryAnswers.Verdict.DIFFERENT,
                verdict(ref, answer(List.of(1), -1, List.of(row("a", "1", "0.5"), row("b", "2", null)))));
    }

    @Test
    void withKeysThatAreNotOutputColumnsAnotherOrderIsARealDifference() {
        QueryAnswers.Answer ref = answer(null, -1, List.of(row("a", "1", "0.5"), row("b", "1", "0.7")));
        QueryAnswers.Answer other = answer(null, -1, List.of(row("b", "1", "0.7"), row("a", "1", "0.5")));
        assertEquals(QueryAnswers.Verdict.DIFFERENT, verdict(ref, other));
    }

    @Test
    void theTextFormatKeepsNullsTabsAndTheOrderKeys() {
        List<QueryAnswers.Answer> answers = List.of(
                answer(List.of(1, 0), 100, List.of(row("a\tb\\c", "1", null), row("", "2", "0.5"))),
                answer(null, -1, List.of()));
        List<QueryAnswers.Answer> back = QueryAnswers.parse(QueryAnswers.format(answers));
        assertEquals(answers, back);
    }

    @Test
    void typesWithCommasInsideThemKeepTheirColumns() {
        List<String> types = List.of("decimal(7,2)", "int", "struct<a:int,b:decimal(17,2)>", "string");
        QueryAnswers.Answer a = new QueryAnswers.Answer("q", types, List.of(0), -1,
                List.of(row("1.50", "1", "{1, 2.00}", "x"), row("2.50", "2", "{3, 4.00}", "y")));
        QueryAnswers.Answer back = QueryAnswers.parse(QueryAnswers.format(List.of(a))).get(0);
        assertEquals(types, back.types());
        // a difference in a later column is compared under that column's own type
        QueryAnswers.Answer other = new QueryAnswers.Answer("q", types, List.of(0), -1,
                List.of(row("1.50", "1", "{1, 2.00}", "x"), row("2.50", "2", "{3, 4.00}", "z")));
        assertEquals(QueryAnswers.Verdict.DIFFERENT, verdict(back, other));
    }
}
