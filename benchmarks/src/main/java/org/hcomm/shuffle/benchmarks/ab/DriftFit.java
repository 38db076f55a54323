package org.hcomm.shuffle.benchmarks.ab;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * How much the host's speed drifted during a cell, and each configuration's time relative to the first once that
 * drift is taken out: a least-squares fit of log(time) on the run's position in the cell (one drift per cell, linear
 * in time) and its configuration. A model, reported beside the medians as a check on them, not instead of them.
 *
 * @param driftPerRun the fitted change of speed per run, as a fraction (0.03: each run 3 % slower than the one before)
 * @param ratios each configuration's fitted time over the base configuration's, in the configurations' order
 */
record DriftFit(double driftPerRun, Map<ShuffleConfig, Double> ratios) {

    /**
     * The fit over a cell's successful runs, or null when it is not determined (fewer than two runs of a
     * configuration, or a configuration without runs).
     */
    static DriftFit of(List<RunResult> runs, List<ShuffleConfig> configs, ToDoubleFunction<RunResult> time) {
        List<RunResult> ok = runs.stream().filter(RunResult::ok).sorted(Comparator.comparingInt(RunResult::sequence))
                .toList();
        int k = configs.size();
        for (ShuffleConfig c : configs) {
            if (ok.stream().filter(r -> r.config() == c).count() < 2) {
                return null;
            }
        }
        // unknowns: the drift, then one intercept per configuration; normal equations A^T A x = A^T y
        int n = k + 1;
        double[][] ata = new double[n][n];
        double[] aty = new double[n];
        for (RunResult r : ok) {
            double[] row = new double[n];
            row[0] = r.sequence() - ok.get(0).sequence(); // runs in the order they ran, a failed one leaving a gap
            row[1 + configs.indexOf(r.config())] = 1;
            double y = Math.log(time.applyAsDouble(r));
            for (int a = 0; a < n; a++) {
                aty[a] += row[a] * y;
                for (int b = 0; b < n; b++) {
                    ata[a][b] += row[a] * row[b];
                }
            }
        }
        double[] x = solve(ata, aty);
        if (x == null) {
            return null;
        }
        Map<ShuffleConfig, Double> ratios = new LinkedHashMap<>();
        for (int c = 0; c < k; c++) {
            ratios.put(configs.get(c), Math.exp(x[1 + c] - x[1]));
        }
        return new DriftFit(Math.exp(x[0]) - 1, ratios);
    }

    /** Gaussian elimination with partial pivoting; null when the system is singular. */
    static double[] solve(double[][] m, double[] v) {
        int n = v.length;
        double[][] a = new double[n][];
        double[] b = v.clone();
        for (int i = 0; i < n; i++) {
            a[i] = m[i].clone();
        }
        for (int col = 0; col < n; col++) {
            int pivot = col;
            for (int row = col + 1; row < n; row++) {
                if (Math.abs(a[row][col]) > Math.abs(a[pivot][col])) {
                    pivot = row;
                }
            }
            if (Math.abs(a[pivot][col]) < 1e-12) {
                return null;
            }
            double[] t = a[col];
            a[col] = a[pivot];
            a[pivot] = t;
            double tb = b[col];
            b[col] = b[pivot];
            b[pivot] = tb;
            for (int row = col + 1; row < n; row++) {
                double f = a[row][col] / a[col][col];
                for (int j = col; j < n; j++) {
                    a[row][j] -= f * a[col][j];
                }
                b[row] -= f * b[col];
            }
        }
        double[] x = new double[n];
        for (int row = n - 1; row >= 0; row--) {
            double s = b[row];
            for (int j = row + 1; j < n; j++) {
                s -= a[row][j] * x[j];
            }
            x[row] = s / a[row][row];
        }
        return x;
    }
}
