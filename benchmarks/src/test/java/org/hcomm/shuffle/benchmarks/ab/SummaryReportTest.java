package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The summary's per-repetition ratios (what a cell whose repetitions ran in different sittings is read by), and the
 * map stage, job, executors' CPU and round-trip columns on constructed runs.
 */
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

    // A cell of builtin, builtin-network and hcomm in three repetitions, the last on a host twice as slow: the
    // per-repetition ratios of map stage and job differ from the ratios of the medians.
    private static final Preset.Cell RR = new Preset.Cell("remote-read", 1024, 2, "kryo");
    private static final Preset THREE = new Preset("t", List.of("remote-read"), List.of(1024L), List.of(2),
            List.of("kryo"), List.of(ShuffleConfig.BUILTIN, ShuffleConfig.BUILTIN_NETWORK, ShuffleConfig.HCOMM), 3,
            false, Map.of(), Map.of(), false, true);
    private static final double[] HOST = {1, 1, 2};
    private static final Map<String, Long> COUNTERS = Map.of("bytesReadOneSided", 2_000_000_000L, "readTasks", 8L,
            "indexRounds", 0L, "readWaves", 16L, "readRoundTrips", 8L, "readTasksOverTwoRoundTrips", 1L,
            "publicationBatches", 4L);

    static StageMetricsListener.Stage stage(int id, double fromSec, double toSec, long writeBytes, long readBytes,
            int tasks) {
        StageMetricsListener.Stage s = new StageMetricsListener.Stage(id, 0);
        s.submittedMs = Math.round(fromSec * 1000);
        s.completedMs = Math.round(toSec * 1000);
        s.completed = true;
        s.writeBytes = writeBytes;
        s.remoteBytes = readBytes;
        s.recordsRead = readBytes > 0 ? 1 : 0;
        s.tasks = tasks;
        return s;
    }

    /**
     * A run of 2 GB read remotely by 16 reduce tasks on one executor: a map stage of 8 tasks, then the reduce stage.
     */
    static RunResult staged(Preset.Cell cell, ShuffleConfig c, int rep, int sequence, double mapSec, double reduceSec,
            double jobSec, double jobCpuSec, Map<String, Long> hcomm) {
        List<StageMetricsListener.Stage> stages = List.of(stage(0, 0, mapSec, 2_000_000_000L, 0, 8),
                stage(1, mapSec, mapSec + reduceSec, 0, 2_000_000_000L, 16));
        return new RunResult(cell, c, rep, sequence, "now", jobSec, reduceSec, 0, 0, 0, 0, jobCpuSec, 1,
                2_000_000_000L, 2_000_000_000L, 2_000_000_000L, 0, 0, hcomm, "", 0, 0, Map.of(), stages,
                List.of(new RunResult.ExecutorCpu("1", 1, 1, 16, Map.of())), Map.of(), Map.of(), null);
    }

    private static List<RunResult> threeConfigs() {
        double[] hcommMap = {0.9, 1.0, 0.95};
        double[] hcommJob = {0.8, 0.9, 0.85};
        List<RunResult> runs = new ArrayList<>();
        int seq = 0;
        for (int rep = 0; rep < 3; rep++) {
            double f = HOST[rep];
            runs.add(staged(RR, ShuffleConfig.BUILTIN, rep, ++seq, 2.0 * f, 1.0 * f, 5.5 * f, 10, Map.of()));
            runs.add(staged(RR, ShuffleConfig.BUILTIN_NETWORK, rep, ++seq, 2.0 * f, 1.2 * f, 4.4 * f, 12, Map.of()));
            runs.add(staged(RR, ShuffleConfig.HCOMM, rep, ++seq, 2.0 * f * hcommMap[rep], 0.9 * f,
                    4.4 * f * hcommJob[rep], 9, COUNTERS));
        }
        return runs;
    }

    /** The value in {@code column} of the row {@code row} of the first table whose header starts so. */
    static String column(String md, String header, String row, String column) {
        List<String> lines = md.lines().toList();
        int h = 0;
        while (!lines.get(h).startsWith(header)) {
            h++;
        }
        List<String> names = cells(lines.get(h));
        int col = names.indexOf(column);
        assertTrue(col >= 0, column + " not in " + names);
        for (int i = h + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            List<String> values = cells(lines.get(i));
            if (values.contains(row)) {
                assertEquals(names.size(), values.size(), lines.get(i));
                return values.get(col);
            }
        }
        throw new AssertionError("no row " + row + " under " + lines.get(h));
    }

    private static List<String> cells(String line) {
        String[] parts = line.split("\\|");
        List<String> out = new ArrayList<>();
        for (int i = 1; i < parts.length; i++) {
            out.add(parts[i].trim());
        }
        return out;
    }

    @Test
    void theMapStageIsTheUnionOfTheStagesThatWriteShuffleDataAndReadNone() {
        List<StageMetricsListener.Stage> stages = List.of(stage(0, 0, 2, 100, 0, 4), stage(1, 1, 3, 100, 0, 4),
                stage(2, 3.5, 4, 0, 0, 1), stage(3, 4, 6, 100, 100, 4), stage(4, 6, 7, 0, 100, 4));
        RunResult r = new RunResult(RR, ShuffleConfig.HCOMM, 0, 1, "now", 8, 3, 0, 0, 0, 0, 12, 2, 300, 200_000_000L,
                200_000_000L, 0, 0, Map.of("publicationBatches", 6L), "", 0, 0, Map.of(), stages, List.of(), Map.of(),
                Map.of(), null);
        assertEquals(3.0, r.mapSec(), 1e-9, "stages 0 and 1 overlap; 2 writes nothing, 3 also reads");
        assertEquals(12, r.shuffleWriteTasks(), "map tasks: every stage that writes, 3 too");
        assertEquals(0.5, r.publicationBatchesPerMapTask(), 1e-9);
        assertEquals(60.0, r.jobCpuSecPerGbShuffled(), 1e-9);
        assertTrue(Double.isNaN(TestRuns.ok(RR, ShuffleConfig.BUILTIN, 0, 1, 1).mapSec()), "no stage list");
        assertTrue(Double.isNaN(TestRuns.ok(RR, ShuffleConfig.BUILTIN, 0, 1, 1).jobCpuSecPerGbShuffled()));
    }

    @Test
    void theCellTableHasMapStageJobExecutorsCpuAndTheirMedianPerRepetitionRatios() {
        String md = SummaryReport.markdown(THREE, threeConfigs(), Map.of(RR, "identical"), List.of(), 60, "test");
        String table = "| configuration | job s |";
        assertEquals("3.96 (3.52–7.48)", column(md, table, "hcomm", "job s"));
        assertEquals("2.00 (1.80–3.80)", column(md, table, "hcomm", "map stage s"));
        assertEquals("9.00", column(md, table, "hcomm", "executors' CPU s"));
        assertEquals("4.50", column(md, table, "hcomm", "executors' CPU s / GB shuffled"));
        assertEquals("6.00", column(md, table, "builtin-network", "executors' CPU s / GB shuffled"));
        // medians of the per-repetition ratios (0.90, 1.00, 0.95 and 0.80, 0.90, 0.85), not of the medians (1.00, 0.90)
        assertEquals("0.95", column(md, table, "hcomm", "map / builtin-network"));
        assertEquals("0.95", column(md, table, "hcomm", "map / builtin"));
        assertEquals("0.85", column(md, table, "hcomm", "job / builtin-network"));
        assertEquals("0.68", column(md, table, "hcomm", "job / builtin"));
        assertEquals("1.00", column(md, table, "builtin-network", "job / builtin-network"));
        assertEquals("0.75", column(md, table, "hcomm", "reduce / builtin-network"), "still the ratio of medians");
        assertTrue(md.contains("Job / builtin within each repetition: builtin-network 0.80×, 0.80×, 0.80× (median "
                + "0.80×); hcomm 0.64×, 0.72×, 0.68× (median 0.68×)."), md);
        assertTrue(md.contains("Map stage / builtin within each repetition: builtin-network 1.00×, 1.00×, 1.00× "
                + "(median 1.00×); hcomm 0.90×, 1.00×, 0.95× (median 0.95×)."), md);
        assertTrue(md.contains("*Map-stage time* is the wall time during which a stage that writes shuffle data"), md);
    }

    @Test
    void theOverviewPutsMapStageAndJobBesideTheReduceStage() {
        String md = SummaryReport.markdown(THREE, threeConfigs(), Map.of(RR, "identical"), List.of(), 60, "test");
        String table = "| workload | size | executors | serializer | configuration |";
        assertEquals("2.00", column(md, table, "hcomm", "map stage s"));
        assertEquals("3.96", column(md, table, "hcomm", "job s"));
        assertEquals("0.90", column(md, table, "hcomm", "reduce stage s"));
        assertEquals("0.95×", column(md, table, "hcomm", "map / builtin-network"));
        assertEquals("0.85×", column(md, table, "hcomm", "job / builtin-network"));
        assertEquals("0.75×", column(md, table, "hcomm", "reduce / builtin-network"));
        assertEquals("0.68×", column(md, table, "hcomm", "job / builtin"));
        assertEquals("0.90×", column(md, table, "hcomm", "reduce / builtin"));
        assertEquals("4.50", column(md, table, "hcomm", "executors' CPU s / GB shuffled"));
        assertEquals("5.00", column(md, table, "builtin", "executors' CPU s / GB shuffled"));
        assertTrue(md.indexOf(table) > md.indexOf("## Reduce-stage time relative to builtin"), md);
        assertTrue(md.indexOf(table) < md.indexOf("## remote-read 1 GB"), md);

        // a preset without builtin: ratios to builtin-network only; a run file without the job's CPU shows none
        Preset noBuiltin = new Preset("t", List.of("remote-read"), List.of(1024L), List.of(2), List.of("kryo"),
                List.of(ShuffleConfig.BUILTIN_NETWORK, ShuffleConfig.HCOMM), 1, false, Map.of(), Map.of(), false,
                true);
        List<RunResult> runs = List.of(staged(RR, ShuffleConfig.BUILTIN_NETWORK, 0, 1, 2, 1, 4, Double.NaN, Map.of()),
                staged(RR, ShuffleConfig.HCOMM, 0, 2, 1.5, 1, 3.4, Double.NaN, COUNTERS));
        String one = SummaryReport.markdown(noBuiltin, runs, Map.of(RR, "identical"), List.of(), 60, "test");
        assertEquals("0.85×", column(one, table, "hcomm", "job / builtin-network"));
        assertEquals("0.75×", column(one, table, "hcomm", "map / builtin-network"));
        assertEquals("–", column(one, table, "hcomm", "executors' CPU s / GB shuffled"));
        assertFalse(one.lines().filter(l -> l.startsWith(table)).findFirst().orElseThrow().contains("/ builtin |"),
                one);
        assertEquals("–", column(one, "| configuration | job s |", "hcomm", "job / builtin"));
    }

    @Test
    void roundTripsComeFromThePluginsCountersWhenItCountedTheReadingTasks() {
        String md = SummaryReport.markdown(THREE, threeConfigs(), Map.of(RR, "identical"), List.of(), 60, "test");
        assertTrue(md.contains("hcomm: mean round trips per task 1.00 (of 8 tasks; batches waited for 2.00), tasks "
                + "over two round trips 1, publication batches per map task 0.50."), md);
        // 8 round trips over the 8 tasks that read one-sidedly, not over the 16 reduce tasks
        assertEquals("1.0", column(md, "| configuration | reader CPU s / GB |", "hcomm",
                "round trips per reduce task"));
        assertEquals("3.0 (model)", column(md, "| configuration | reader CPU s / GB |", "builtin-network",
                "round trips per reduce task"));

        // a run file from before readTasks: the waves over all reduce tasks, and no counters line
        Map<String, Long> old = Map.of("bytesReadOneSided", 2_000_000_000L, "indexRounds", 16L, "readWaves", 16L);
        RunResult before = staged(RR, ShuffleConfig.HCOMM, 0, 1, 2, 1, 4, 9, old);
        assertEquals(2.0, before.roundTripsPerTask(), 1e-9);
        assertTrue(Double.isNaN(before.roundTripsPerReadTask()));
        assertEquals(1.0, staged(RR, ShuffleConfig.HCOMM, 0, 1, 2, 1, 4, 9, COUNTERS).roundTripsPerTask(), 1e-9);
        // a run file from before readRoundTrips: the batches waited for, over the tasks that read one-sidedly
        Map<String, Long> batches = Map.of("bytesReadOneSided", 2_000_000_000L, "readTasks", 8L, "indexRounds", 8L,
                "readWaves", 16L);
        assertEquals(3.0, staged(RR, ShuffleConfig.HCOMM, 0, 1, 2, 1, 4, 9, batches).roundTripsPerReadTask(), 1e-9);
        StringBuilder sb = new StringBuilder();
        SummaryReport.roundTrips(sb, THREE, List.of(before));
        assertEquals("", sb.toString());
    }
}
