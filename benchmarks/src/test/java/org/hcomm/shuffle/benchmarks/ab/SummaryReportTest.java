package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The summary's per-repetition ratios: what a cell whose repetitions ran in different sittings is read by. */
class SummaryReportTest {
    private static final Preset.Cell CELL = new Preset.Cell("tpch", 4096, 4, "java");
    private static final Preset PRESET = new Preset("t", List.of("tpch"), List.of(4096L), List.of(4), List.of("java"),
            List.of(ShuffleConfig.BUILTIN, ShuffleConfig.HCOMM), 3, false, Map.of(), Map.of(), false, true);

    private static RunResult run(ShuffleConfig config, int rep, int sequence, double reduceSec) {
        return TestRuns.ok(CELL, config, rep, sequence, reduceSec);
    }

    @Test
    void aSlowerSittingForTheLastRepetitionLeavesThePerRepetitionRatiosAlone() {
        // repetitions 0 and 1 on one host, 2 on a host twice as slow; hcomm 0.9× builtin in each
        List<RunResult> runs = new ArrayList<>();
        double[] hostSecs = {100, 110, 200};
        for (int rep = 0; rep < 3; rep++) {
            runs.add(run(ShuffleConfig.BUILTIN, rep, 2 * rep + 1, hostSecs[rep]));
            runs.add(run(ShuffleConfig.HCOMM, rep, 2 * rep + 2, 0.9 * hostSecs[rep]));
        }
        List<Double> ratios = SummaryReport.repetitionRatios(runs, ShuffleConfig.HCOMM, ShuffleConfig.BUILTIN, 3);
        assertEquals(3, ratios.size());
        ratios.forEach(r -> assertEquals(0.9, r, 1e-9));
        StringBuilder sb = new StringBuilder();
        SummaryReport.perRepetition(sb, PRESET, runs);
        assertTrue(sb.toString().contains("hcomm 0.90×, 0.90×, 0.90× (median 0.90×)"), sb.toString());
    }

    @Test
    void aRepetitionWithAFailedRunHasNoRatio() {
        List<RunResult> runs = new ArrayList<>(List.of(run(ShuffleConfig.BUILTIN, 0, 1, 10),
                run(ShuffleConfig.HCOMM, 0, 2, 12), run(ShuffleConfig.BUILTIN, 1, 3, 10)));
        runs.add(RunResult.failed(CELL, ShuffleConfig.HCOMM, 1, 4, "now", "boom"));
        assertEquals(List.of(1.2), SummaryReport.repetitionRatios(runs, ShuffleConfig.HCOMM, ShuffleConfig.BUILTIN, 3));
        StringBuilder none = new StringBuilder();
        SummaryReport.perRepetition(none, PRESET, List.of(run(ShuffleConfig.BUILTIN, 0, 1, 10)));
        assertEquals("", none.toString());
    }
}
