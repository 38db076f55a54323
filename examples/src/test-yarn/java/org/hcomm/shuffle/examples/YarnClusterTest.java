package org.hcomm.shuffle.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The HComm shuffle on a real YARN cluster ({@link MiniYarn}: Hadoop's MiniYARNCluster with one NodeManager on
 * localhost, in this JVM), submitted as a user submits it: spark-submit with the bundle in {@code --jars}, executors
 * with 512m heaps, and an NPU per executor through a resource type declared to YARN
 * ({@code spark.yarn.executor.resource.npu.amount}) and Spark's resource scheduling
 * ({@code spark.executor.resource.npu.*} with examples/npu-discovery.sh, which runs in each container against a fake
 * {@code npu-smi}, named by {@code HCOMM_NPU_SMI}). Each run's answer must be the built-in shuffle's (computed once
 * here, in local mode), every remote byte read one-sidedly (fallback {@code never}), and every channel created also
 * destroyed. One cluster serves the whole class. (The default line only: the yarn-test profile of this module.)
 */
class YarnClusterTest {
    private static final int EVENTS = 100_000;
    private static final String JOB = YarnShuffleJob.class.getName();
    /** One job: about a minute on two loaded cores; a stuck submission fails the test instead of hanging it. */
    private static final int SUBMIT_TIMEOUT_S = 300;

    private static MiniYarn yarn;
    private static String builtinChecksum;
    private static Path fakeNpuSmi;

    @BeforeAll
    static void startCluster() throws Exception {
        Path work = Path.of("target", "yarn-test").toAbsolutePath();
        deleteTree(work);
        builtinChecksum = builtinAnswer();
        yarn = MiniYarn.start(work);
        fakeNpuSmi = fakeNpuSmi(work.resolve("bin"));
    }

    @AfterAll
    static void stopCluster() {
        if (yarn != null) {
            yarn.close();
        }
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void clientModeOnTheCommunicatorPathWithAnNpuPerExecutor() throws Exception {
        // soft HComm as an Atlas A2 server: one HCCL communicator of both executors, each on its own NPU. YARN counts
        // npus but does not isolate them, so the script shows each container every NPU of the node ("0,1") and
        // Spark gives every executor the first: communicator.resource stays unset and the driver gives each
        // executor of a node its own id (YARN's count keeps them within the node's NPUs)
        Map<String, String> conf = npuConf();
        conf.put("spark.executorEnv.HCOMM_SOFT_SOC", "Ascend910B3");
        conf.put("spark.shuffle.hcomm.communicator.settle", "300ms");
        conf.put("spark.shuffle.hcomm.communicator.bufferSize", "32m");
        Properties r = run("client", conf, 2);
        assertEquals("client", r.getProperty("deployMode"));
        assertShuffleRight(r);
        assertTrue(metric(r, "windowsOpened") > 0, "no remote byte streamed through a window: " + r);
        assertEquals(2, metric(r, "communicatorsJoined"), "one communicator of both executors: " + r);
        assertEachExecutorHasTheNodesNpus(r, 2);
        String logs = String.join("\n", yarn.containerLogs(r.getProperty("appId")).values());
        for (String npu : List.of("0", "1")) {
            assertTrue(logs.matches("(?s).*HComm on executor \\d+: joined communicator \\d+ as rank \\d of 2 on NPU "
                    + npu + " .*"), "no executor joined on NPU " + npu);
        }
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void clusterModeWithAnNpuPerExecutor() throws Exception {
        Properties r = run("cluster", npuConf(), 2);
        assertEquals("cluster", r.getProperty("deployMode"));
        assertShuffleRight(r);
        assertEachExecutorHasTheNodesNpus(r, 2);
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void dynamicAllocationWithShuffleTracking() throws Exception {
        Map<String, String> conf = npuConf();
        conf.remove("spark.executor.instances");
        conf.putAll(Map.of("spark.dynamicAllocation.enabled", "true",
                "spark.dynamicAllocation.shuffleTracking.enabled", "true",
                "spark.shuffle.service.enabled", "false",
                "spark.dynamicAllocation.minExecutors", "0",
                "spark.dynamicAllocation.initialExecutors", "0",
                "spark.dynamicAllocation.maxExecutors", "2",
                "spark.dynamicAllocation.schedulerBacklogTimeout", "1s",
                "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout", "1s"));
        // no executor at the start: every one was asked of YARN by dynamic allocation for the job's tasks
        Properties r = run("client", conf, 0);
        assertShuffleRight(r);
        assertEachExecutorHasTheNodesNpus(r, 1);
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void aResourceTypeYarnDoesNotDeclareIsAnErrorNamingWhatToSet() throws Exception {
        // Spark alone only warns in the ApplicationMaster's log and starts executors without the type; the plugin's
        // driver asks the ResourceManager and stops the application before it asks for executors
        for (String mode : new String[] {"client", "cluster"}) {
            Map<String, String> conf = new LinkedHashMap<>(hcommConf());
            conf.putAll(npuConf());
            conf.put("spark.yarn.executor.resource.ascend.amount", "1");
            String name = "undeclared-" + mode;
            MiniYarn.Submitted s = yarn.submit(name, mode, conf, JOB, SUBMIT_TIMEOUT_S,
                    yarn.work.resolve(name + ".properties").toString(), Integer.toString(EVENTS), "2");
            System.out.printf("YarnClusterTest: an undeclared type in %s deploy mode refused in %.1f s%n", mode,
                    s.seconds());
            assertNotEquals(0, s.exitCode(), () -> "spark-submit succeeded:\n" + MiniYarn.tail(s.console()));
            for (String expected : List.of("spark.yarn.executor.resource.ascend.amount asks YARN for resource type "
                    + "'ascend', which YARN's ResourceManager does not declare (it declares memory-mb, npu, vcores)",
                    "yarn.resource-types=ascend", "yarn.nodemanager.resource-type.ascend")) {
                assertTrue(s.console().contains(expected), () -> mode + " deploy mode: the console does not say \""
                        + expected + "\":\n" + MiniYarn.tail(s.console()));
            }
        }
    }

    // ---- what the tests share ----

    /** Submits {@link YarnShuffleJob} with the HComm shuffle and {@code conf}; its result file once it succeeded. */
    private static Properties run(String deployMode, Map<String, String> conf, int executors) throws Exception {
        Map<String, String> all = new LinkedHashMap<>(hcommConf());
        all.putAll(conf);
        String name = deployMode + "-" + System.nanoTime();
        Path result = yarn.work.resolve(name + ".properties");
        MiniYarn.Submitted s = yarn.submit(name, deployMode, all, JOB, SUBMIT_TIMEOUT_S, result.toString(),
                Integer.toString(EVENTS), Integer.toString(executors));
        System.out.printf("YarnClusterTest: %s deploy mode, spark-submit took %.1f s%n", deployMode, s.seconds());
        assertEquals(0, s.exitCode(), () -> "spark-submit failed:\n" + MiniYarn.tail(s.console()));
        assertTrue(Files.exists(result), () -> "no result file; spark-submit said:\n" + MiniYarn.tail(s.console()));
        return YarnShuffleJob.read(result);
    }

    /** The plugin's two settings and fallback never: a block that does not go one-sidedly fails the job. */
    private static Map<String, String> hcommConf() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("spark.plugins", ClusterSupport.HCOMM_PLUGIN);
        c.put("spark.shuffle.manager", ClusterSupport.HCOMM_MANAGER);
        c.put("spark.shuffle.hcomm.fallback", "never");
        // the plugin's registered memory is off-heap: YARN counts it against the container (memoryOverhead)
        c.put("spark.shuffle.hcomm.sendArenaSize", "32m");
        c.put("spark.shuffle.hcomm.receiveBufferSize", "16m");
        return c;
    }

    /** One NPU per executor: YARN's resource type (counted by the scheduler) and Spark's (found by the script). */
    private static Map<String, String> npuConf() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("spark.executor.instances", "2");
        c.put("spark.yarn.executor.resource." + MiniYarn.NPU_TYPE + ".amount", "1");
        c.put("spark.executor.resource.npu.amount", "1");
        c.put("spark.executor.resource.npu.discoveryScript",
                Path.of("npu-discovery.sh").toAbsolutePath().toString());
        c.put("spark.executorEnv.HCOMM_NPU_SMI", fakeNpuSmi.toString());
        return c;
    }

    private static void assertShuffleRight(Properties r) {
        assertEquals(builtinChecksum, r.getProperty("checksum"), "the built-in shuffle's answer: " + r);
        long oneSided = metric(r, "bytesReadOneSided");
        assertTrue(oneSided > 0, "nothing read one-sidedly: " + r);
        assertEquals(0, metric(r, "bytesReadFallback"), "fallback bytes: " + r);
        if (metric(r, "communicatorsJoined") == 0) { // the communicator path has no channels per stage
            assertTrue(metric(r, "channelsCreated") > 0, "no channel created: " + r);
        }
        assertEquals(metric(r, "channelsCreated"), metric(r, "channelsDestroyed"), "channels: " + r);
        assertEquals(0, metric(r, "channelsLive"), "channels live: " + r);
    }

    /**
     * YARN allocated the npu type to the containers (its scheduler counted them), every executor has Spark's npu
     * resource with the addresses the fake npu-smi shows (the discovery script ran in its container), and each
     * executor's log says the plugin started there from the bundle that came with --jars.
     */
    private static void assertEachExecutorHasTheNodesNpus(Properties r, int atLeast) throws IOException {
        String appId = r.getProperty("appId");
        assertTrue(yarn.resourceSeconds(appId, MiniYarn.NPU_TYPE) > 0, "YARN allocated no " + MiniYarn.NPU_TYPE);
        Map<String, String> executors = new LinkedHashMap<>();
        r.stringPropertyNames().stream().filter(k -> k.startsWith("executor."))
                .forEach(k -> executors.put(k.substring("executor.".length()), r.getProperty(k)));
        assertTrue(executors.size() >= atLeast, "executors: " + executors);
        executors.forEach((id, npus) -> assertEquals("0,1", npus, "executor " + id + "'s npu addresses"));
        String logs = String.join("\n", yarn.containerLogs(appId).values());
        for (String id : executors.keySet()) {
            assertTrue(logs.contains("HComm shuffle on executor " + id + ": "),
                    "executor " + id + "'s log has no start line of the plugin");
        }
        assertTrue(logs.contains("HComm provider soft loaded from bundled:"), "soft HComm not loaded from the bundle");
        assertTrue(logs.contains(yarn.bundle.getFileName().toString()), "the bundle is on no executor's class path");
    }

    private static long metric(Properties r, String name) {
        String v = r.getProperty("metric." + name);
        assertNotEquals(null, v, "no metric " + name + ": " + r);
        return Long.parseLong(v);
    }

    /** The pipeline's answer with Spark's built-in shuffle, in local mode in this JVM (it is the same everywhere). */
    private static String builtinAnswer() {
        SparkConf conf = new SparkConf().setMaster("local[2]").setAppName("hcomm-yarn-builtin")
                .set("spark.ui.enabled", "false");
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            return Long.toHexString(EtlPipelineJob.pipeline(sc, EVENTS)._1());
        }
    }

    /**
     * An {@code npu-smi} that answers {@code info -m} with the table of a host of {@value MiniYarn#NODE_NPUS} Ascend
     * 910B3 NPUs (the layout of the plugin's recorded fixtures: Chip Logic ID column, an Mcu row under each NPU).
     */
    private static Path fakeNpuSmi(Path dir) throws IOException {
        Files.createDirectories(dir);
        StringBuilder table = new StringBuilder("\tNPU ID    Chip ID    Chip Logic ID    Chip Name\n");
        for (int i = 0; i < MiniYarn.NODE_NPUS; i++) {
            table.append("\t").append(i).append("         0          ").append(i).append("                Ascend 910B3\n");
            table.append("\t").append(i).append("         1          -                Mcu\n");
        }
        Path smi = dir.resolve("npu-smi");
        Files.writeString(smi, "#!/bin/sh\n[ \"$1 $2\" = 'info -m' ] || exit 2\ncat <<'EOF'\n" + table + "EOF\n");
        assertTrue(smi.toFile().setExecutable(true));
        return smi;
    }

    private static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
