package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The drift fit recovers a drift and the configurations' ratios that generated the times, and refuses too few runs. */
class DriftFitTest {
    private static final List<ShuffleConfig> CONFIGS = List.of(ShuffleConfig.BUILTIN, ShuffleConfig.BUILTIN_NETWORK,
            ShuffleConfig.HCOMM, ShuffleConfig.HCOMM_TCP, ShuffleConfig.HCOMM_COMMUNICATOR);
    private static final Preset.Cell CELL = new Preset.Cell("aggregation", 4096, 2, "java");

    private static RunResult run(ShuffleConfig config, int sequence, double reduceSec) {
        return TestRuns.ok(CELL, config, 0, sequence, reduceSec);
    }

    /** Three repetitions in the fixed order, each run {@code drift} slower than the one before. */
    private static List<RunResult> cell(double drift, double... ratios) {
        List<RunResult> runs = new ArrayList<>();
        int seq = 100;
        for (int rep = 0; rep < 3; rep++) {
            for (int c = 0; c < CONFIGS.size(); c++) {
                runs.add(run(CONFIGS.get(c), seq, 40.0 * ratios[c] * Math.pow(1 + drift, seq - 100)));
                seq++;
            }
        }
        return runs;
    }

    @Test
    void aDriftThatFlattersTheFirstConfigurationIsTakenOut() {
        // every configuration alike, the host slowing 3 % per run: medians would put hcomm (third) ~6 % behind builtin
        List<RunResult> runs = cell(0.03, 1, 1, 1, 1, 1);
        DriftFit fit = DriftFit.of(runs, CONFIGS, RunResult::reduceSec);
        assertEquals(0.03, fit.driftPerRun(), 1e-9);
        fit.ratios().values().forEach(r -> assertEquals(1.0, r, 1e-9));
        double medianRatio = runs.get(6).reduceSec() / runs.get(4).reduceSec(); // rep 1: hcomm over builtin
        assertEquals(1.03 * 1.03, medianRatio, 1e-9);
    }

    @Test
    void ratiosWithoutDriftAreTheGeneratingOnes() {
        DriftFit fit = DriftFit.of(cell(0, 1, 1.2, 0.9, 1.05, 1.3), CONFIGS, RunResult::reduceSec);
        assertEquals(0, fit.driftPerRun(), 1e-9);
        assertEquals(1.2, fit.ratios().get(ShuffleConfig.BUILTIN_NETWORK), 1e-9);
        assertEquals(0.9, fit.ratios().get(ShuffleConfig.HCOMM), 1e-9);
        assertEquals(1.05, fit.ratios().get(ShuffleConfig.HCOMM_TCP), 1e-9);
        assertEquals(1.3, fit.ratios().get(ShuffleConfig.HCOMM_COMMUNICATOR), 1e-9);
    }

    @Test
    void aConfigurationWithFewerThanTwoSuccessfulRunsLeavesTheFitUndetermined() {
        List<RunResult> runs = new ArrayList<>(cell(0.01, 1, 1, 1, 1, 1));
        runs.removeIf(r -> r.config() == ShuffleConfig.HCOMM && r.sequence() > 102);
        assertNull(DriftFit.of(runs, CONFIGS, RunResult::reduceSec));
        List<RunResult> failed = new ArrayList<>(cell(0.01, 1, 1, 1, 1, 1));
        failed.replaceAll(r -> r.config() == ShuffleConfig.BUILTIN && r.sequence() > 100
                ? RunResult.failed(CELL, r.config(), r.rep(), r.sequence(), "now", "boom") : r);
        assertNull(DriftFit.of(failed, CONFIGS, RunResult::reduceSec));
    }
}
