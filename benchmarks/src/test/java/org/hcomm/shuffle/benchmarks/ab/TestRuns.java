package org.hcomm.shuffle.benchmarks.ab;

import java.util.List;
import java.util.Map;

/**
 * Successful runs for the resume, summary and drift tests, with what those read (cell, configuration, repetition,
 * sequence, reduce-stage time) and nothing else measured.
 */
final class TestRuns {
    private TestRuns() {
    }

    static RunResult ok(Preset.Cell cell, ShuffleConfig config, int rep, int sequence, double reduceSec) {
        return new RunResult(cell, config, rep, sequence, "now", reduceSec * 2, reduceSec, 0, 0, 0, 0,
                Double.NaN, 1, 0, 0, 0, 0, 0, Map.of(), "", 0, 0, Map.of(), List.of(), List.of(), Map.of(), Map.of(),
                null);
    }
}
