package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The order of a cell's configurations in each repetition. A host's speed drifts during a cell (by up to 40 %
 * within one 25-minute cell on the machine of docs/BENCHMARKS.md), and with one fixed order a drift favours whichever
 * configuration runs first in every repetition. Here each configuration's positions, summed over the repetitions,
 * are as equal as they can be: equal for an even number of repetitions (each forward order followed by its reverse),
 * at most one apart for an odd number of three or more (a searched block of three, then reversed pairs). A drift
 * linear in time then costs every configuration alike, exactly or to within one position in all repetitions. The
 * first repetition keeps the given order.
 */
final class RunOrder {
    private RunOrder() {
    }

    /**
     * For each repetition, the indexes into the configurations in the order they run.
     *
     * @throws IllegalArgumentException for no configuration, more than 6 (the search would be slow), or reps < 1
     */
    static int[][] of(int configs, int reps) {
        if (configs < 1 || configs > 6 || reps < 1) {
            throw new IllegalArgumentException("RunOrder: " + configs + " configurations (1–6), " + reps
                    + " repetitions (at least 1)");
        }
        int[] forward = IntStream.range(0, configs).toArray();
        List<int[]> orders = new ArrayList<>();
        int rest = reps;
        if (reps % 2 == 1) {
            if (reps == 1) {
                return new int[][] {forward};
            }
            orders.addAll(blockOfThree(forward));
            rest -= 3;
        }
        for (int i = 0; i < rest; i += 2) {
            orders.add(forward.clone());
            orders.add(reversed(forward));
        }
        return orders.toArray(new int[0][]);
    }

    /** The sum over the repetitions of each configuration's position (0 = first): what the order balances. */
    static int[] positionSums(int[][] orders) {
        int[] sums = new int[orders[0].length];
        for (int[] order : orders) {
            for (int position = 0; position < order.length; position++) {
                sums[order[position]] += position;
            }
        }
        return sums;
    }

    /** {@code forward} and the two orders after it whose position sums differ least (first found, so stable). */
    private static List<int[]> blockOfThree(int[] forward) {
        List<int[]> all = permutations(forward.length);
        int best = Integer.MAX_VALUE;
        List<int[]> bestBlock = null;
        for (int[] second : all) {
            for (int[] third : all) {
                IntSummaryStatistics sums = IntStream.of(positionSums(new int[][] {forward, second, third}))
                        .summaryStatistics();
                int spread = sums.getMax() - sums.getMin();
                if (spread < best) {
                    best = spread;
                    bestBlock = List.of(forward.clone(), second, third);
                }
            }
        }
        return bestBlock;
    }

    private static List<int[]> permutations(int n) {
        List<int[]> out = new ArrayList<>();
        permute(new int[n], new boolean[n], 0, out);
        return out;
    }

    private static void permute(int[] current, boolean[] used, int at, List<int[]> out) {
        if (at == current.length) {
            out.add(current.clone());
            return;
        }
        for (int i = 0; i < current.length; i++) {
            if (!used[i]) {
                used[i] = true;
                current[at] = i;
                permute(current, used, at + 1, out);
                used[i] = false;
            }
        }
    }

    private static int[] reversed(int[] order) {
        int[] r = new int[order.length];
        for (int i = 0; i < order.length; i++) {
            r[i] = order[order.length - 1 - i];
        }
        return r;
    }
}
