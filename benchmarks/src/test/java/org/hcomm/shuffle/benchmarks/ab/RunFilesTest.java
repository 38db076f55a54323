package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The run files a resumed A/B suite reads back: JSON written by {@link Json} and parsed again. */
class RunFilesTest {

    @Test
    void aSliceOfAPresetNamesItsSummaryAfterTheSlice() {
        Preset full = Preset.named("full");
        assertEquals("", full.sliceSuffix());
        Preset slice = new Preset("full", full.workloads(), List.of(1024L), List.of(4), List.of("java"),
                full.configs(), full.reps(), full.warmup(), full.hcommConf(), full.sparkConf(), false, true);
        assertEquals("-1024m-4x-java", slice.sliceSuffix());
        Preset cell = new Preset("full", List.of("tpch"), full.sizesMb(), full.executors(), full.serializers(),
                full.configs(), full.reps(), full.warmup(), full.hcommConf(), full.sparkConf(), false, true);
        assertEquals("-tpch", cell.sliceSuffix());
    }

    @Test
    void jsonReadsWhatItWrites() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "quote \" backslash \\ newline \n tab \t ctl \u0001 é");
        m.put("long", -1234567890123L);
        m.put("double", 2.5);
        m.put("flag", true);
        m.put("none", null);
        m.put("list", List.of(1L, "x", List.of(), Map.of()));
        assertEquals(m, Json.read(Json.write(m)));
    }

    @Test
    void malformedJsonNamesTheOffset() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Json.read("{\"a\": }"));
        assertTrue(e.getMessage().contains("offset 6"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Json.read("[1, 2] x"));
        assertThrows(IllegalArgumentException.class, () -> Json.read("\"open"));
    }

    @Test
    void aRunResultSurvivesItsFile() {
        Preset.Cell cell = new Preset.Cell("remote-read", 1024, 4, "java");
        RunResult r = new RunResult(cell, ShuffleConfig.HCOMM_TCP, 2, 17, "2026-11-30T08:00:00Z", 12.5, 7.25, 0.5,
                14.0, 6.0, 20.0, 31.5, 1, 1_000_000_000L, 999_000_000L, 900_000_000L, 99_000_000L, 0,
                Map.of("bytesReadOneSided", 900_000_000L, "channelsCreated", 12L), "1", 0xfedcba9876543210L, 5000L,
                Map.of("partitions", 32L), List.of(),
                List.of(new RunResult.ExecutorCpu("0", 1.5, 0, 0, Map.of()),
                        new RunResult.ExecutorCpu("1", 8.0, 6.0, 32, Map.of("jit", 1.25, "hcomm native", 0.5))),
                Map.of(JfrProfile.SAMPLES, 300L, "hcomm plugin", 12L),
                Map.of("workingset_refault_file", 1234L, "pgmajfault", 5L), null);
        RunResult back = RunResult.fromJson(castMap(Json.read(Json.write(r.toJson()))));
        assertEquals(r, back);
        assertEquals(1.5, back.ownerCpuSec());
        assertEquals(3.5, back.nonTaskCpuSec());
        assertEquals(0.5, back.executorCpu().get(1).threadGroupSec().get("hcomm native"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void aRunFileKeepsItsStagesAndOneFromBeforeTheJobsCpuStillLoads() {
        Preset.Cell cell = new Preset.Cell("remote-read", 1024, 2, "kryo");
        RunResult r = SummaryReportTest.staged(cell, ShuffleConfig.HCOMM, 0, 1, 2, 1, 4, 9,
                Map.of("publicationBatches", 4L));
        Map<String, Object> json = castMap(Json.read(Json.write(r.toJson())));
        RunResult back = RunResult.fromJson(json);
        assertEquals(9.0, back.jobProcessCpuSec());
        assertEquals(2.0, back.mapSec());
        assertEquals(0.5, back.publicationBatchesPerMapTask());

        // as written before: no job CPU, no records read per stage; a stage that read records but no byte
        json.remove("processCpuSecDuringJob");
        List<Object> stages = (List<Object>) json.get("stages");
        stages.forEach(o -> ((Map<String, Object>) o).remove("shuffleRecordsRead"));
        Map<String, Object> noBytes = new LinkedHashMap<>(castMap(stages.get(1)));
        noBytes.put("stageId", 2L);
        noBytes.put("remoteBytesRead", 0L);
        stages.add(noBytes);
        RunResult old = RunResult.fromJson(json);
        assertTrue(Double.isNaN(old.jobProcessCpuSec()));
        assertTrue(Double.isNaN(old.jobCpuSecPerGbShuffled()));
        assertEquals(2.0, old.mapSec());
        assertEquals(List.of(false, true, true),
                old.stages().stream().map(StageMetricsListener.Stage::readsShuffle).toList());
    }

    @Test
    void resumingKeepsCompletedCellsAndRefusesOtherSettings(@TempDir Path out) throws Exception {
        Preset preset = new Preset("t", List.of("terasort"), List.of(64L), List.of(2), List.of("kryo"),
                List.of(ShuffleConfig.BUILTIN), 1, false, Map.of(), Map.of(), false, true);
        Path runs = out.resolve("runs");
        Files.createDirectories(runs);
        Files.writeString(out.resolve("settings.txt"), ShuffleAbSuite.settingsLine(preset));
        RunResult failed = RunResult.failed(preset.cells().get(0), ShuffleConfig.BUILTIN, 0, 1, "now", "boom");
        Files.writeString(runs.resolve("001-terasort-64m-2x-kryo-r0-builtin.json"), Json.write(failed.toJson()));
        Files.createDirectories(runs.resolve("002-join-64m-2x-kryo-r0-builtin-jfr"));

        List<RunResult> back = ShuffleAbSuite.resumable(out, runs, preset);
        assertEquals(List.of(failed), back);

        ShuffleAbSuite.deleteRuns(runs, "-join-64m-2x-kryo-r");
        assertEquals(1, Files.list(runs).count());

        Preset other = new Preset("t", preset.workloads(), preset.sizesMb(), preset.executors(),
                preset.serializers(), preset.configs(), 3, false, Map.of(), Map.of(), false, true);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ShuffleAbSuite.resumable(out, runs, other));
        assertTrue(e.getMessage().contains("other settings"), e.getMessage());
    }

    @Test
    void resumingAHalfRunCellKeepsItsCompleteRepetitions(@TempDir Path runs) throws Exception {
        Preset preset = new Preset("t", List.of("tpch"), List.of(4096L), List.of(4), List.of("java"),
                List.of(ShuffleConfig.BUILTIN, ShuffleConfig.HCOMM), 3, false, Map.of(), Map.of(), false, true);
        Preset.Cell cell = preset.cells().get(0);
        List<RunResult> earlier = new ArrayList<>();
        int seq = 0;
        for (int rep = 0; rep < 2; rep++) {
            for (ShuffleConfig c : preset.configs()) {
                earlier.add(RunResult.failed(cell, c, rep, ++seq, "now", "placeholder"));
            }
        }
        assertEquals(0, ShuffleAbSuite.completeRepetitions(earlier, preset), "failed runs complete nothing");
        List<RunResult> ok = earlier.stream().map(r -> TestRuns.ok(cell, r.config(), r.rep(), r.sequence(), 1)).toList();
        assertEquals(2, ShuffleAbSuite.completeRepetitions(ok, preset));
        assertEquals(1, ShuffleAbSuite.completeRepetitions(ok.subList(0, 3), preset), "rep 1 lacks hcomm");
        List<RunResult> hole = new ArrayList<>(ok);
        hole.set(1, earlier.get(1)); // rep 0's hcomm failed: rep 1 does not count either
        assertEquals(0, ShuffleAbSuite.completeRepetitions(hole, preset));
        List<RunResult> all = new ArrayList<>(ok);
        all.add(TestRuns.ok(cell, ShuffleConfig.BUILTIN, 2, ++seq, 1));
        all.add(TestRuns.ok(cell, ShuffleConfig.HCOMM, 2, ++seq, 1));
        assertEquals(3, ShuffleAbSuite.completeRepetitions(all, preset));

        // an incomplete repetition's files (and recordings) go; the complete ones stay
        for (String f : List.of("001-tpch-4096m-4x-java-r0-builtin.json", "002-tpch-4096m-4x-java-r0-hcomm.json",
                "003-tpch-4096m-4x-java-r1-builtin.json")) {
            Files.writeString(runs.resolve(f), "{}");
        }
        Files.createDirectories(runs.resolve("004-tpch-4096m-4x-java-r1-hcomm-jfr"));
        ShuffleAbSuite.deleteRuns(runs, "-tpch-4096m-4x-java-r1-");
        assertEquals(List.of("001-tpch-4096m-4x-java-r0-builtin.json", "002-tpch-4096m-4x-java-r0-hcomm.json"),
                Files.list(runs).map(p -> p.getFileName().toString()).sorted().toList());
    }

    @Test
    void aResumedCellsTimeLeftIsPacedByTheRunsOfThisInvocation() {
        // 8 of 12 runs kept from an earlier invocation, 1 run now in 15 min: 3 runs left take 45 min, not 5
        assertEquals(45.0, ShuffleAbSuite.minutesLeft(15 * 60, 1, 3), 1e-9);
        assertEquals(0.0, ShuffleAbSuite.minutesLeft(15 * 60, 4, 0), 1e-9);
        assertTrue(Double.isNaN(ShuffleAbSuite.minutesLeft(0, 0, 3)), "no run yet: no pace to go by");
    }

    @Test
    void theMeasuredRunsCountersExcludeTheWarmUp() {
        Map<String, Long> warm = Map.of("bytesReadOneSided", 100L, "channelsCreated", 2L, "channelsLive", 0L);
        Map<String, Long> end = Map.of("bytesReadOneSided", 1100L, "channelsCreated", 6L, "channelsLive", 0L,
                "destroyCalls", 4L);
        assertEquals(Map.of("bytesReadOneSided", 1000L, "channelsCreated", 4L, "channelsLive", 0L,
                "destroyCalls", 4L), HcommMetrics.since(warm, end));
    }

    @Test
    void hostCountersAreReadAndDiffed() {
        Map<String, Long> now = HostCounters.read();
        assertEquals(HostCounters.KEYS.size(), now.size(), "this Linux host's /proc/vmstat: " + now);
        assertEquals(Map.of("pgmajfault", 3L), HostCounters.since(Map.of("pgmajfault", 7L),
                Map.of("pgmajfault", 10L, "workingset_refault_file", 4L)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Object o) {
        return (Map<String, Object>) o;
    }
}
