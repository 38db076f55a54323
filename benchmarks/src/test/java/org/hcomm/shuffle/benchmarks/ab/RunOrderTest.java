package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** The configurations' order per repetition: permutations, the first as given, positions balanced over a cell. */
class RunOrderTest {

    @Test
    void everyRepetitionRunsEachConfigurationOnceAndTheFirstKeepsTheGivenOrder() {
        for (int configs = 1; configs <= 6; configs++) {
            for (int reps = 1; reps <= 7; reps++) {
                int[][] orders = RunOrder.of(configs, reps);
                assertEquals(reps, orders.length);
                for (int[] order : orders) {
                    int[] sorted = order.clone();
                    Arrays.sort(sorted);
                    assertArrayEquals(java.util.stream.IntStream.range(0, configs).toArray(), sorted,
                            Arrays.toString(order));
                }
                assertArrayEquals(java.util.stream.IntStream.range(0, configs).toArray(), orders[0]);
            }
        }
    }

    @Test
    void positionsSumAlikeExactlyForEvenRepetitionsAndWithinOneForOdd() {
        for (int configs = 1; configs <= 6; configs++) {
            for (int reps = 2; reps <= 7; reps++) {
                int[] sums = RunOrder.positionSums(RunOrder.of(configs, reps));
                int spread = Arrays.stream(sums).max().getAsInt() - Arrays.stream(sums).min().getAsInt();
                assertTrue(spread <= (reps % 2 == 0 ? 0 : 1),
                        configs + " configurations, " + reps + " repetitions: position sums " + Arrays.toString(sums));
            }
        }
    }

    @Test
    void theMatrixOrderOfFourConfigurationsInThreeRepetitionsIsFarFairerThanAFixedOne() {
        // a fixed order puts builtin first three times and hcomm-tcp last three times: position sums 0, 3, 6, 9
        assertArrayEquals(new int[] {0, 3, 6, 9}, RunOrder.positionSums(new int[][] {
            {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}));
        int[] sums = RunOrder.positionSums(RunOrder.of(4, 3));
        assertEquals(18, Arrays.stream(sums).sum());
        assertEquals(1, Arrays.stream(sums).max().getAsInt() - Arrays.stream(sums).min().getAsInt());
    }

    @Test
    void noConfigurationOrNoRepetitionIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> RunOrder.of(0, 3));
        assertThrows(IllegalArgumentException.class, () -> RunOrder.of(4, 0));
        assertThrows(IllegalArgumentException.class, () -> RunOrder.of(7, 3));
    }
}
