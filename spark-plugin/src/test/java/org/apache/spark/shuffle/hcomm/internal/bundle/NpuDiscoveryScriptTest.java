package org.apache.spark.shuffle.hcomm.internal.bundle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.resource.ResourceInformation$;
import org.apache.spark.resource.ResourceUtils$;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundle's NPU discovery script, run with bash against a fake {@code npu-smi} (on PATH in a temporary directory)
 * that prints recorded {@code npu-smi info -m} outputs (the fixtures under {@code npu-smi/} say where each layout was
 * seen), and against fake {@code /dev/davinci<N>} files. Every output is parsed with Spark's own
 * {@link ResourceInformation} parser, as a Worker or executor parses it.
 */
class NpuDiscoveryScriptTest {
    private static final String A2 = "a2-910b3-8npu.txt";
    private static final String A3 = "a3-910_93-8npu.txt";

    @TempDir
    Path dir;
    private Path script;
    private Path bin;
    private Path dev;

    private record Run(int exit, String out, String err) {
    }

    @BeforeEach
    void setUp() throws IOException {
        script = Files.write(dir.resolve("npu-discovery.sh"), SparkDoctor.npuDiscoveryScript());
        bin = Files.createDirectories(dir.resolve("bin"));
        dev = Files.createDirectories(dir.resolve("dev"));
    }

    /** A fake npu-smi answering {@code info -m} with the fixture (without its # notes), anything else exit 2. */
    private void fakeNpuSmi(String fixture) throws IOException {
        Path table = dir.resolve(fixture);
        try (InputStream in = getClass().getResourceAsStream("npu-smi/" + fixture)) {
            Files.write(table, in.readAllBytes());
        }
        fakeNpuSmiScript("[ \"$1 $2\" = 'info -m' ] || exit 2\ngrep -v '^#' '" + table + "'\n");
    }

    private void fakeNpuSmiScript(String body) throws IOException {
        Path smi = Files.writeString(bin.resolve("npu-smi"), "#!/bin/sh\n" + body);
        assertTrue(smi.toFile().setExecutable(true));
    }

    private void davinci(String... names) throws IOException {
        for (String n : names) {
            Files.createFile(dev.resolve(n));
        }
    }

    private Run run(Map<String, String> env, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().clear();
        pb.environment().put("PATH", bin + ":/usr/local/bin:/usr/bin:/bin");
        pb.environment().put("HCOMM_NPU_DEV_DIR", dev.toString());
        pb.environment().putAll(env);
        pb.redirectError(dir.resolve("stderr").toFile());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the script did not end");
        return new Run(p.exitValue(), out, Files.readString(dir.resolve("stderr")));
    }

    private Run run(String... envPairs) throws Exception {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < envPairs.length; i += 2) {
            env.put(envPairs[i], envPairs[i + 1]);
        }
        return run(env);
    }

    /** The run's stdout parsed by Spark: its resource name and addresses. */
    private static ResourceInformation parsed(Run r) {
        assertEquals(0, r.exit(), () -> "exit " + r.exit() + ", stderr: " + r.err());
        return ResourceInformation$.MODULE$.parseJson(r.out());
    }

    private static void assertAddresses(Run r, String... expected) {
        ResourceInformation info = parsed(r);
        assertEquals("npu", info.name());
        assertArrayEquals(expected, info.addresses(), r.out());
    }

    private static void assertFails(Run r, String... inStderr) {
        assertNotEquals(0, r.exit(), r.out());
        assertEquals("", r.out());
        for (String s : inStderr) {
            assertTrue(r.err().contains(s), () -> "stderr lacks '" + s + "': " + r.err());
        }
    }

    @Test
    void theBundleCarriesTheExamplesScriptUnchanged() throws IOException {
        // one source: the build copies examples/npu-discovery.sh into the bundle, unfiltered
        assertArrayEquals(Files.readAllBytes(Path.of("../examples/npu-discovery.sh")), SparkDoctor.npuDiscoveryScript());
    }

    @Test
    void a2EightNpusGiveTheirLogicIdsAndSkipTheMcuRows() throws Exception {
        fakeNpuSmi(A2);
        Run r = run();
        assertAddresses(r, "0", "1", "2", "3", "4", "5", "6", "7");
        assertEquals("{\"name\": \"npu\", \"addresses\": [\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\"]}\n", r.out());
        assertEquals("", r.err());
    }

    @Test
    void a3TwoChipsPerNpuGiveSixteenLogicIdsFromTheLogicColumnNotThePhysicalOne() throws Exception {
        fakeNpuSmi(A3);
        String[] all = new String[16];
        for (int i = 0; i < 16; i++) {
            all[i] = Integer.toString(i);
        }
        assertAddresses(run(), all);
    }

    @Test
    void theLogicColumnIsFoundByItsHeaderAndOnlyComputeChipsCount() throws Exception {
        // logic ids differ from the NPU ids and from the physical ids; Mcu rows and other lines are skipped
        fakeNpuSmiScript("echo 'some banner line'\n"
                + "printf 'NPU ID  Chip ID  Chip Logic ID  Chip Phy-ID  Chip Name\\n'\n"
                + "printf '4 0 1 9 Ascend910\\n4 1 0 8 Ascend910\\n4 2 - - Mcu\\n'\n");
        assertAddresses(run(), "0", "1");
    }

    @Test
    void theResourceNameComesFromTheArgumentOrTheEnvironment() throws Exception {
        fakeNpuSmi(A2);
        assertEquals("ascend", parsed(run(Map.of(), "ascend")).name());
        assertEquals("npu2", parsed(run("HCOMM_NPU_RESOURCE_NAME", "npu2")).name());
        assertFails(run(Map.of(), "a\"b"), "resource name");
    }

    @Test
    void ascendRtVisibleDevicesRenumbersTheListedChips() throws Exception {
        // the executor inherits ASCEND_RT_VISIBLE_DEVICES=2,3 and sees chips 2 and 3 as 0 and 1: aclrtSetDevice(0)
        // opens chip 2
        fakeNpuSmi(A2);
        assertAddresses(run("ASCEND_RT_VISIBLE_DEVICES", "2,3"), "0", "1");
        assertAddresses(run("ASCEND_RT_VISIBLE_DEVICES", "7"), "0");
        assertAddresses(run("ASCEND_RT_VISIBLE_DEVICES", "5, 1,3"), "0", "1", "2");
        fakeNpuSmi(A3);
        assertAddresses(run("ASCEND_RT_VISIBLE_DEVICES", "14,15"), "0", "1");
    }

    @Test
    void anAscendRtVisibleDevicesIdTheHostLacksOrRepeatsIsAnError() throws Exception {
        fakeNpuSmi(A2);
        assertFails(run("ASCEND_RT_VISIBLE_DEVICES", "2,8"), "ASCEND_RT_VISIBLE_DEVICES='2,8' lists 8",
                "logical ids 0,1,2,3,4,5,6,7");
        assertFails(run("ASCEND_RT_VISIBLE_DEVICES", "1,1"), "lists 1 twice");
        assertFails(run("ASCEND_RT_VISIBLE_DEVICES", "0-3"), "'0-3' is not a logical device id");
    }

    @Test
    void ascendVisibleDevicesIsTheContainersPhysicalList() throws Exception {
        // the container runtime passed physical chips 4 and 5: the runtime in the container numbers them 0 and 1
        fakeNpuSmi(A2);
        assertAddresses(run("ASCEND_VISIBLE_DEVICES", "4,5"), "0", "1");
        assertAddresses(run("ASCEND_VISIBLE_DEVICES", "0-3"), "0", "1", "2", "3");
        assertAddresses(run("ASCEND_VISIBLE_DEVICES", "Ascend910-6"), "0");
        assertAddresses(run("ASCEND_VISIBLE_DEVICES", "4,5,6", "ASCEND_RT_VISIBLE_DEVICES", "2"), "0");
        assertFails(run("ASCEND_VISIBLE_DEVICES", "4,5,6", "ASCEND_RT_VISIBLE_DEVICES", "3"),
                "ASCEND_RT_VISIBLE_DEVICES='3' lists 3");
        assertFails(run("ASCEND_VISIBLE_DEVICES", "x"), "'x' is not a device id");
    }

    @Test
    void withoutNpuSmiTheDavinciFilesCountInPhysicalOrder() throws Exception {
        davinci("davinci4", "davinci6", "davinci10", "davinci_manager", "davinci_manager_docker");
        Run r = run();
        assertAddresses(r, "0", "1", "2");
        assertTrue(r.err().contains("no 'npu-smi' on PATH"), r.err());
        assertAddresses(run("ASCEND_VISIBLE_DEVICES", "4,6"), "0", "1");
        assertAddresses(run("ASCEND_RT_VISIBLE_DEVICES", "2"), "0");
        assertFails(run("ASCEND_VISIBLE_DEVICES", "4,5"), "lists 5 but there is no " + dev + "/davinci5");
    }

    @Test
    void nothingFoundExitsNonZeroNamingWhatToCheck() throws Exception {
        davinci("davinci_manager");
        assertFails(run(), "no Ascend NPU found", "no 'npu-smi' on PATH", dev + "/davinci<N>", "driver",
                "ASCEND_VISIBLE_DEVICES");
        fakeNpuSmiScript("echo 'NPU ID  Chip ID  Chip Logic ID  Chip Name'\n");
        assertFails(run(), "no Ascend NPU found", "listed no chip with a logic id");
    }

    @Test
    void aFailingNpuSmiFallsBackToTheDavinciFilesOrSaysWhy() throws Exception {
        fakeNpuSmiScript("echo 'dcmi model initialized failed, because the device is used. ret is -8020' >&2\n"
                + "exit 255\n");
        assertFails(run(), "no Ascend NPU found", "'npu-smi info -m' failed (exit 255)", "dcmi model initialized");
        davinci("davinci0", "davinci1");
        Run r = run();
        assertAddresses(r, "0", "1");
        assertTrue(r.err().contains("failed (exit 255)"), r.err());
    }

    @Test
    void npuSmiNamedByTheEnvironment() throws Exception {
        fakeNpuSmi(A2);
        Path moved = Files.move(bin.resolve("npu-smi"), dir.resolve("my-npu-smi"));
        assertAddresses(run("HCOMM_NPU_SMI", moved.toString()), "0", "1", "2", "3", "4", "5", "6", "7");
    }

    @Test
    void theReadmesResourcesFileForSeveralWorkersOnAHostIsWhatSparkParses() throws IOException {
        // README, "NPUs scheduled by Spark": a Worker given NPUs 4 to 7 by spark.worker.resourcesFile
        String json = "[{\"id\": {\"componentName\": \"spark.worker\", \"resourceName\": \"npu\"}, "
                + "\"addresses\": [\"4\", \"5\", \"6\", \"7\"]}]";
        String readme = Files.readString(Path.of("../README.md")).replaceAll("\\s+", " ");
        assertTrue(readme.contains(json), "README no longer shows " + json);
        Path file = Files.writeString(dir.resolve("npu-worker1.json"), json);
        var allocations = ResourceUtils$.MODULE$.parseAllocatedFromJsonFile(file.toString());
        assertEquals(1, allocations.length());
        ResourceInformation info = allocations.head().toResourceInformation();
        assertEquals("spark.worker", allocations.head().id().componentName());
        assertEquals("npu", info.name());
        assertArrayEquals(new String[] {"4", "5", "6", "7"}, info.addresses());
    }
}
