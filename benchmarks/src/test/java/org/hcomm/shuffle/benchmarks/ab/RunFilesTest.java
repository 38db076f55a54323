package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
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
                14.0, 6.0, 20.0, 1, 1_000_000_000L, 999_000_000L, 900_000_000L, 99_000_000L, 0,
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
