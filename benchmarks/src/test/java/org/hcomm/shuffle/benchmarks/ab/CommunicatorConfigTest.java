package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The configuration {@code hcomm-communicator}: its name, its settings, the presets that leave it out, its run files,
 * and the checks and summary line that only its runs get.
 */
class CommunicatorConfigTest {
    private static final Preset.Cell CELL = new Preset.Cell("remote-read", 256, 2, "kryo");

    @Test
    void everyConfigurationIsNamedByItsLabelAndAnUnknownOneListsThemAll() {
        for (ShuffleConfig c : ShuffleConfig.values()) {
            assertEquals(c, ShuffleConfig.of(c.label()));
        }
        assertEquals(ShuffleConfig.HCOMM_COMMUNICATOR, ShuffleConfig.of("hcomm-communicator"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ShuffleConfig.of("hccl"));
        assertTrue(e.getMessage().contains("builtin, builtin-network, hcomm, hcomm-tcp, hcomm-communicator, "
                + "hcomm-arena, hcomm-window"), e.getMessage());
        assertEquals(7, RatioChart.COLORS.length, "a colour per configuration");
        assertEquals(ShuffleConfig.values().length, RatioChart.COLORS.length);
    }

    @Test
    void theCommunicatorConfigurationIsAnA2ExecutorWithAShortSettleAndFallbackNever() {
        ShuffleConfig c = ShuffleConfig.HCOMM_COMMUNICATOR;
        assertTrue(c.isHcomm() && c.isCommunicator());
        assertEquals("0", c.expectedForceTcp());
        SparkConf conf = new SparkConf(false);
        c.apply(conf);
        assertEquals("Ascend910B3", conf.get("spark.executorEnv.HCOMM_SOFT_SOC"));
        assertEquals("300ms", conf.get("spark.shuffle.hcomm.communicator.settle"));
        assertEquals("never", conf.get("spark.shuffle.hcomm.fallback"));
        assertEquals("0", conf.get("spark.executorEnv.HCOMM_SOFT_FORCE_TCP"));
        assertEquals("org.apache.spark.shuffle.hcomm.HcommShuffleManager", conf.get("spark.shuffle.manager"));
        for (ShuffleConfig other : List.of(ShuffleConfig.BUILTIN, ShuffleConfig.BUILTIN_NETWORK, ShuffleConfig.HCOMM,
                ShuffleConfig.HCOMM_TCP)) {
            SparkConf o = new SparkConf(false);
            other.apply(o);
            assertFalse(other.isCommunicator());
            assertFalse(o.contains("spark.executorEnv.HCOMM_SOFT_SOC"), other.label() + " sets no SoC");
            assertFalse(o.contains("spark.shuffle.hcomm.communicator.settle"), other.label());
        }
    }

    @Test
    void thePresetsKeepTheirFourConfigurationsAndAbConfigsAddsTheCommunicator() {
        for (String name : List.of("smoke", "quick", "full", "tpcds")) {
            assertEquals(List.of(ShuffleConfig.BUILTIN, ShuffleConfig.BUILTIN_NETWORK, ShuffleConfig.HCOMM,
                    ShuffleConfig.HCOMM_TCP), Preset.named(name).configs(), name);
        }
        String before = System.getProperty("ab.configs");
        System.setProperty("ab.configs", "builtin,hcomm,hcomm-communicator");
        try {
            assertEquals(List.of(ShuffleConfig.BUILTIN, ShuffleConfig.HCOMM, ShuffleConfig.HCOMM_COMMUNICATOR),
                    Preset.fromSystemProperties().configs());
        } finally {
            if (before == null) {
                System.clearProperty("ab.configs");
            } else {
                System.setProperty("ab.configs", before);
            }
        }
    }

    @Test
    void aCommunicatorRunSurvivesItsFile() {
        RunResult r = run(ShuffleConfig.HCOMM_COMMUNICATOR, 0, 3, 4.0, Map.of("bytesReadOneSided", 134_000_000L,
                "windowsOpened", 24L, "communicatorsLive", 2L, Runner.COMMUNICATOR_FORMED_MS, 812L));
        RunResult back = RunResult.fromJson(castMap(Json.read(Json.write(r.toJson()))));
        assertEquals(r, back);
        assertEquals(ShuffleConfig.HCOMM_COMMUNICATOR, back.config());
        assertTrue(back.fileStem().endsWith("-r0-hcomm-communicator"), back.fileStem());
    }

    @Test
    void communicatorRunsAreCheckedForTheirCommunicatorAndEndpointRunsForNone() {
        Map<String, Long> good = Map.of("communicatorsLive", 2L, "windowsOpened", 12L,
                "tasksBeforeCommunicator", 0L);
        List<String> warnings = new ArrayList<>();
        HcommMetrics.communicatorChecks(run(ShuffleConfig.HCOMM_COMMUNICATOR, 0, 1, 4, good), "ok", warnings);
        HcommMetrics.communicatorChecks(run(ShuffleConfig.HCOMM_WINDOW, 0, 1, 4, good), "window", warnings);
        HcommMetrics.communicatorChecks(run(ShuffleConfig.HCOMM, 0, 2, 4, Map.of()), "endpoint", warnings);
        assertEquals(List.of(), warnings);

        HcommMetrics.communicatorChecks(run(ShuffleConfig.HCOMM_COMMUNICATOR, 0, 3, 4, Map.of("communicatorsLive",
                1L, "tasksBeforeCommunicator", 3L)), "late", warnings);
        HcommMetrics.communicatorChecks(run(ShuffleConfig.HCOMM_WINDOW, 0, 3, 4, Map.of("communicatorsLive", 2L)),
                "windowless", warnings);
        HcommMetrics.communicatorChecks(run(ShuffleConfig.HCOMM, 0, 4, 4, Map.of("communicatorsLive", 2L)),
                "leaked", warnings);
        assertEquals(5, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains("communicatorsLive 1, expected one per executor (2)"), warnings.get(0));
        assertTrue(warnings.get(1).contains("3 reduce task(s) before the communicator"), warnings.get(1));
        assertTrue(warnings.get(2).contains("no window opened"), warnings.get(2));
        assertTrue(warnings.get(3).startsWith("windowless: no window opened"), warnings.get(3));
        assertTrue(warnings.get(4).startsWith("leaked: 2 communicator(s) live on the endpoint path"),
                warnings.get(4));
    }

    @Test
    void theCountersOfTheWarmUpAreTakenOutButTheCommunicatorsLiveLevelIsNot() {
        Map<String, Long> warm = Map.of("bytesToHost", 40L, "communicatorsJoined", 2L, "communicatorsLive", 2L);
        Map<String, Long> end = Map.of("bytesToHost", 340L, "communicatorsJoined", 2L, "communicatorsLive", 2L);
        assertEquals(Map.of("bytesToHost", 300L, "communicatorsJoined", 0L, "communicatorsLive", 2L),
                HcommMetrics.since(warm, end));
    }

    @Test
    void theSummaryNamesTheCommunicatorConfigurationAndItsCounters() {
        Preset preset = new Preset("t", List.of("remote-read"), List.of(256L), List.of(2), List.of("kryo"),
                List.of(ShuffleConfig.BUILTIN, ShuffleConfig.HCOMM, ShuffleConfig.HCOMM_COMMUNICATOR), 1, false,
                Map.of(), Map.of(), false, false);
        List<RunResult> runs = List.of(run(ShuffleConfig.BUILTIN, 0, 1, 4, Map.of()),
                run(ShuffleConfig.HCOMM, 0, 2, 3.6, Map.of()),
                run(ShuffleConfig.HCOMM_COMMUNICATOR, 0, 3, 5, Map.of("windowsOpened", 268L,
                        "bytesToHost", 134_000_000L, "communicatorsLive", 2L, Runner.COMMUNICATOR_FORMED_MS, 812L)));
        String md = SummaryReport.markdown(preset, runs, Map.of(preset.cells().get(0), "identical"), List.of(), 60,
                "test machine");
        assertTrue(md.contains("| hcomm-communicator |"), md);
        assertTrue(md.contains("**1.25×** (5.00 s)"), md);
        assertTrue(md.contains("`spark.executorEnv.HCOMM_SOFT_SOC=Ascend910B3`"), md);
        assertTrue(md.contains("hcomm-communicator: windows opened 268"), md);
        assertTrue(md.contains("copied device to host 134 MB"), md);
        assertTrue(md.contains("formed 812 ms after the executors registered"), md);
        assertTrue(md.contains("hcomm-communicator 1.25×"), "per-repetition ratio: " + md);
    }

    private static RunResult run(ShuffleConfig config, int rep, int sequence, double reduceSec,
            Map<String, Long> hcomm) {
        RunResult r = TestRuns.ok(CELL, config, rep, sequence, reduceSec);
        return new RunResult(r.cell(), r.config(), r.rep(), r.sequence(), r.startedAt(), r.jobSec(), r.reduceSec(),
                r.fetchWaitSec(), r.reduceTaskSec(), r.reduceCpuSec(), r.totalCpuSec(), r.jobProcessCpuSec(),
                r.reduceStages(), 1_000_000L, r.shuffleReadBytes(), r.remoteBytes(), r.localBytes(), r.failedTasks(),
                hcomm, r.executorForceTcp(), r.checksum(), r.records(), r.detail(), r.stages(), r.executorCpu(),
                r.profile(), r.host(), r.error());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Object o) {
        return (Map<String, Object>) o;
    }
}
