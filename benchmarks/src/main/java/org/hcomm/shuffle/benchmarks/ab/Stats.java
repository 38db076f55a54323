package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** Median, minimum and maximum of a metric over the successful runs of one configuration in one cell. */
record Stats(double median, double min, double max, int n) {
    static Stats of(List<RunResult> runs, ToDoubleFunction<RunResult> metric) {
        List<Double> v = new ArrayList<>();
        for (RunResult r : runs) {
            if (r.ok()) {
                v.add(metric.applyAsDouble(r));
            }
        }
        return ofValues(v);
    }

    /**
     * As {@link #of}, over the successful runs whose metric is known (not NaN): run files from before a metric was
     * recorded lack it; "–" when none has it.
     */
    static Stats ofKnown(List<RunResult> runs, ToDoubleFunction<RunResult> metric) {
        List<Double> v = new ArrayList<>();
        for (RunResult r : runs) {
            double x = r.ok() ? metric.applyAsDouble(r) : Double.NaN;
            if (!Double.isNaN(x)) {
                v.add(x);
            }
        }
        return ofValues(v);
    }

    /** Median, minimum and maximum of some values (NaN and n = 0 for none). */
    static Stats ofValues(List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        if (v.isEmpty()) {
            return new Stats(Double.NaN, Double.NaN, Double.NaN, 0);
        }
        v.sort(null);
        int n = v.size();
        double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
        return new Stats(median, v.get(0), v.get(n - 1), n);
    }

    /** "12.34 (11.90–13.02)", or just the median when there is one run or the spread is nil. */
    String format(String pattern) {
        if (n == 0) {
            return "–";
        }
        String m = String.format(Locale.ROOT, pattern, median);
        if (n == 1 || min == max) {
            return m;
        }
        return m + " (" + String.format(Locale.ROOT, pattern, min) + "–" + String.format(Locale.ROOT, pattern, max)
                + ")";
    }
}
