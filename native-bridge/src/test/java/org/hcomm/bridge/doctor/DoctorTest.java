package org.hcomm.bridge.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.hcomm.bridge.raw.HcommSymbol;
import org.hcomm.bridge.raw.HcommSymbol.Need;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The doctor, run as a user runs it (its own JVM, {@code doctor [options]}), against soft HComm and against fake
 * CANN installs ({@link FakeInstall}) each built to fail one check: it must fail exactly that check (no other
 * fails), with a line that names the problem and what to do.
 */
class DoctorTest {
    @TempDir
    static Path work;
    static List<Path> objects;
    /** A working libhcomm.so (soft HComm's code, every function exported). */
    static Path working;

    @BeforeAll
    static void buildObjects() throws Exception {
        objects = FakeInstall.softObjects(work.resolve("obj"));
        working = new FakeInstall(work.resolve("working")).hcomm(objects, Set.of()).lib64().resolve("libhcomm.so");
    }

    /** What one doctor run printed: exit code, and per check its status and text. */
    record Run(int exit, Map<String, String> status, Map<String, String> text, String output) {
        void expect(String check, String status, String... phrases) {
            assertEquals(status, this.status.get(check), check + " in:\n" + output);
            for (String p : phrases) {
                assertTrue(text.get(check).contains(p), check + " should say '" + p + "' in:\n" + output);
            }
        }

        /** Every check but {@code except} is not FAIL. */
        void onlyFails(String check) {
            status.forEach((c, s) -> {
                if (!c.equals(check)) {
                    assertTrue(!s.equals("FAIL"), c + " failed too:\n" + output);
                }
            });
            assertEquals("FAIL", status.get(check), output);
            assertEquals(1, exit, output);
        }
    }

    static Run doctor(Path ascendHome, String... args) throws IOException, InterruptedException {
        return doctor(ascendHome, Map.of(), args);
    }

    /** The doctor with {@code env} added to this JVM's environment (and ASCEND_HOME_PATH, LD_LIBRARY_PATH as above). */
    static Run doctor(Path ascendHome, Map<String, String> env, String... args) throws IOException,
            InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-cp",
                System.getProperty("java.class.path"), Doctor.class.getName(), "doctor"));
        cmd.addAll(List.of(args));
        Path stdout = Files.createTempFile(work, "doctor", ".out");
        Path stderr = Files.createTempFile(work, "doctor", ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
        pb.environment().remove("LD_LIBRARY_PATH");
        pb.environment().remove("HCOMM_SOFT_SOC");
        pb.environment().putAll(env);
        if (ascendHome == null) {
            pb.environment().remove("ASCEND_HOME_PATH");
        } else {
            pb.environment().put("ASCEND_HOME_PATH", ascendHome.toString());
        }
        Process p = pb.start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) { // longer than the doctor's own deadlines, so they speak first
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor();
            throw new AssertionError("the doctor did not end in 300 s: " + String.join(" ", cmd));
        }
        String out = Files.readString(stdout, StandardCharsets.UTF_8);
        String err = Files.readString(stderr, StandardCharsets.UTF_8);
        Map<String, String> status = new LinkedHashMap<>();
        Map<String, String> text = new LinkedHashMap<>();
        String last = null;
        for (String line : out.split("\n")) {
            String[] w = line.trim().split("\\s+", 3);
            if (w.length == 3 && Set.of("PASS", "WARN", "FAIL", "SKIP").contains(w[0])) {
                status.put(w[1], w[0]);
                text.put(w[1], w[2]);
                last = w[1];
            } else if (last != null && line.trim().startsWith("do: ")) {
                text.put(last, text.get(last) + " " + line.trim());
            }
        }
        return new Run(p.exitValue(), status, text, err.isEmpty() ? out : out + "--- stderr:\n" + err);
    }

    private static FakeInstall install(String name) throws IOException {
        return new FakeInstall(work.resolve(name));
    }

    private static final UnaryOperator<String> AS_IS = UnaryOperator.identity();

    @Test
    void softHcommPassesEveryCheckAndReads256MiB() throws Exception {
        Run r = doctor(null);
        for (String check : List.of("library", "symbols", "abi", "product", "end-to-end")) {
            r.expect(check, "PASS");
        }
        r.expect("end-to-end", "PASS", "read 256 MiB", "GB/s", "every byte verified", "no live object left");
        r.expect("spark", "SKIP");
        assertEquals(0, r.exit, r.output);
    }

    @Test
    void aCannInstallThatFitsPassesEveryCheckAndReads() throws Exception {
        // without HcommMemAlloc/HcommMemFree: with CANN the plugin maps host memory itself and never calls them
        FakeInstall f = install("fits").hcomm(objects, Set.of("HcommMemAlloc", "HcommMemFree")).headers(AS_IS, AS_IS)
                .ascendCl("Ascend950PR_9599");
        Run r = doctor(f.home, "--provider", "cann", "--read-strategy", "nbiFence", "--bytes", "67108864",
                "--json", f.home.resolve("report.json").toString());
        r.expect("library", "PASS", f.lib64().resolve("libhcomm.so").toString(), "$ASCEND_HOME_PATH",
                "CANN 9.0.0-fake");
        r.expect("symbols", "PASS");
        r.expect("abi", "PASS", "agree with " + f.headers(), "HcommChannelDesc 360 bytes", "takes a pointer");
        r.expect("product", "PASS", "Ascend950PR_9599", "Atlas 350");
        r.expect("end-to-end", "PASS", "read 64 MiB", "readStrategy=nbiFence", "GB/s");
        assertEquals(0, r.exit, r.output);
        String json = Files.readString(f.home.resolve("report.json"));
        assertTrue(json.contains("\"ready\":true") && json.contains("\"check\":\"end-to-end\""), json);
    }

    @Test
    void aMissingRequiredFunctionFailsTheSymbolsCheckAndNoReadIsTried() throws Exception {
        FakeInstall f = install("no-destroy").hcomm(objects, Set.of("HcommChannelDestroy")).headers(AS_IS, AS_IS);
        Run r = doctor(f.home, "--provider", "cann");
        r.onlyFails("symbols");
        r.expect("symbols", "FAIL", "missing [HcommChannelDestroy], which the endpoint API (api=endpoint, both read strategies) needs");
        r.expect("end-to-end", "SKIP");
    }

    @Test
    void aMissingFunctionOfTheOtherStrategyIsAWarningAndTheReadWorks() throws Exception {
        FakeInstall f = install("no-drain").hcomm(objects, Set.of("HcommChannelDrainOnThread"))
                .headers(AS_IS, AS_IS);
        Run r = doctor(f.home, "--provider", "cann", "--read-strategy", "nbiFence", "--bytes", "8388608");
        r.expect("symbols", "WARN", "readStrategy=onThread would not work: missing [HcommChannelDrainOnThread]");
        r.expect("end-to-end", "PASS", "readStrategy=nbiFence");
        assertEquals(0, r.exit, r.output);

        Run onThread = doctor(f.home, "--provider", "cann", "--read-strategy", "onThread");
        onThread.onlyFails("symbols");
        onThread.expect("symbols", "FAIL", "missing [HcommChannelDrainOnThread], which readStrategy=onThread needs",
                "do: set spark.shuffle.hcomm.readStrategy=nbiFence");
    }

    @Test
    void aHeaderWithThe352ByteChannelDescFailsTheAbiCheck() throws Exception {
        FakeInstall f = install("desc-v2").hcomm(objects, Set.of())
                .headers(t -> t.replace("const char *channelName;", ""), AS_IS);
        Run r = doctor(f.home, "--provider", "cann");
        r.onlyFails("abi");
        r.expect("abi", "FAIL", "sizeof.HcommChannelDesc: C 352, binding 360", "a 352-byte HcommChannelDesc is v2",
                "do: use a CANN whose HcommChannelDesc is ABI v4");
        r.expect("end-to-end", "SKIP");
    }

    @Test
    void theOldHcommThreadAllocTakingACountFailsTheAbiCheckForOnThread() throws Exception {
        FakeInstall f = install("thread-alloc-count").hcomm(objects, Set.of()).headers(AS_IS,
                h -> h.replace("const uint32_t *notifyNumPerThread", "uint32_t notifyNumPerThread"));
        Run r = doctor(f.home, "--provider", "cann", "--read-strategy", "onThread");
        r.onlyFails("abi");
        r.expect("abi", "FAIL", "HcommThreadAlloc takes the notify count by value", "readStrategy=onThread calls");
    }

    @Test
    void aLibraryMissingADependencyFailsTheLibraryCheckNamingIt() throws Exception {
        FakeInstall f = install("missing-dependency").needingMissingLibrary();
        Run r = doctor(f.home, "--provider", "cann");
        r.onlyFails("library");
        r.expect("library", "FAIL", "a library it needs is missing", "libgone.so", "do: run ldd");
        r.expect("symbols", "SKIP");
    }

    @Test
    void aLibraryForAnotherArchitectureFailsTheLibraryCheck() throws Exception {
        FakeInstall f = install("aarch64").forAnotherArchitecture(working);
        Run r = doctor(f.home, "--provider", "cann");
        r.onlyFails("library");
        r.expect("library", "FAIL", "not a library for this JVM's architecture",
                "its ELF header says " + FakeInstall.otherArchitecture(), "do: install the CANN package");
    }

    @Test
    void aSocThatDoesNotSupportTheChosenStrategyFailsTheProductCheck() throws Exception {
        FakeInstall f = install("soc-950").hcomm(objects, Set.of()).headers(AS_IS, AS_IS)
                .ascendCl("Ascend950PR_9599");
        Run r = doctor(f.home, "--provider", "cann", "--read-strategy", "onThread");
        r.onlyFails("product");
        r.expect("product", "FAIL", "Ascend950PR_9599", "HcommChannelDrainOnThread is not supported",
                "do: set spark.shuffle.hcomm.readStrategy=nbiFence");
    }

    @Test
    void withoutHeadersOrAKnownSocTheDoctorSaysWhatItCouldNotCheckAndStillReads() throws Exception {
        FakeInstall f = install("no-headers").hcomm(objects, Set.of()).ascendCl("Ascend310P3");
        Run r = doctor(f.home, "--provider", "cann", "--bytes", "8388608");
        r.expect("abi", "WARN", "could not be checked", "the binding assumes HcommChannelDesc v4 (360 bytes)");
        r.expect("product", "WARN", "SoC Ascend310P3 is not one of the products the binding knows",
                "try both strategies");
        r.expect("end-to-end", "PASS", "read 8 MiB");
        assertEquals(0, r.exit, r.output);
    }

    @Test
    void aFileThatIsNotALibraryFailsTheLibraryCheckSayingSo() throws Exception {
        FakeInstall f = install("not-elf");
        Files.writeString(f.lib64().resolve("libhcomm.so"), "this is not a shared library\n");
        Run r = doctor(f.home, "--provider", "cann");
        r.onlyFails("library");
        r.expect("library", "FAIL", "it is not an ELF file", "do: name the HComm shared library itself");
    }

    @Test
    void theHeadersOfAnotherInstallDoNotSpeakForALibraryNamedExplicitly() throws Exception {
        FakeInstall f = install("headers-elsewhere").headers(AS_IS, AS_IS);
        Run r = doctor(f.home, "--provider", "cann", "--library", working.toString(), "--read-strategy",
                "nbiFence", "--bytes", "8388608");
        r.expect("library", "PASS", working.toString(), "(named explicitly)");
        r.expect("abi", "WARN", "the library is not the one under $ASCEND_HOME_PATH=" + f.home);
        assertEquals(0, r.exit, r.output);
    }

    // ---- the communicator path (Atlas A2/A3) ----

    private static final Map<String, String> A2 = Map.of("HCOMM_SOFT_SOC", "Ascend910B3", "HCCL_IF_IP", "127.0.0.1");

    /** The HCCL functions of the communicator path, as the binding's table lists them. */
    private static List<String> hcclFunctions() {
        return Stream.of(HcommSymbol.values()).filter(f -> f.need() == Need.COMMUNICATOR)
                .map(Enum::name).filter(n -> n.startsWith("Hccl")).toList();
    }

    @Test
    void softHcommAsAnA2TakesTheCommunicatorPathAndReadsThroughIt() throws Exception {
        Run r = doctor(null, A2);
        assertTrue(r.output.startsWith("hcomm doctor: provider soft, api auto: the communicator path (SoC "
                + "Ascend910B3"), r.output);
        for (String check : List.of("library", "symbols", "abi")) {
            r.expect(check, "PASS");
        }
        r.expect("product", "PASS", "SoC Ascend910B3 (soft HComm's profile", "Atlas A2",
                "api auto takes the communicator path");
        r.expect("end-to-end", "PASS", "read 256 MiB", "2-rank HCCL communicator", "hcclBufferSize 8 MB", "GB/s",
                "1 HCCS channel", "in 64 slices through a window of 2 slots x 4 MiB", "raised DATA",
                "read the owner's slot at the channel's base + its offset over HCCS", "raised ACK",
                "HcommReadOnThread in batch mode", "every byte verified", "both window ends finished balanced",
                "HcclCommDestroy", "no live object left in either process");
        assertEquals(0, r.exit, r.output);
    }

    @Test
    void aReadOfMoreThanOneWindowThatIsNoWholeNumberOfSlicesEndsWithAShortSlice() throws Exception {
        // 3 slices of 4 MiB through 2 slots (the third waits for slot 0's ACK), the last one 8 bytes: the HCCL
        // buffer stays one window per half
        Run r = doctor(null, A2, "--bytes", Long.toString((8L << 20) + 8));
        r.expect("end-to-end", "PASS", "read 8 MiB", "hcclBufferSize 8 MB", "in 3 slices", "every byte verified",
                "both window ends finished balanced", "no live object left in either process");
        assertEquals(0, r.exit, r.output);
    }

    @Test
    void forcingTheEndpointApiOnAnA2FailsTheProductCheckAndNoReadIsTried() throws Exception {
        Run r = doctor(null, A2, "--api", "endpoint");
        r.onlyFails("product");
        r.expect("product", "FAIL", "SoC Ascend910B3", "api=endpoint is set", "documented for Atlas 350 only",
                "HCCL_E_NOT_SUPPORT", "do: set spark.shuffle.hcomm.api=communicator");
        r.expect("end-to-end", "SKIP");
    }

    @Test
    void aCommunicatorThatCannotFormFailsTheEndToEndCheckNamingTheCallAndCode() throws Exception {
        Map<String, String> env = new HashMap<>(A2);
        env.put("HCOMM_SOFT_DEVICE_MEM_MB", "1"); // less than the 2 x 8 MB HCCL buffer each rank allocates
        Run r = doctor(null, env, "--bytes", "8388608");
        r.onlyFails("end-to-end");
        r.expect("end-to-end", "FAIL", "failed while joining the 2-rank communicator",
                "HcclCommInitRootInfoConfig failed: 24 HCCL_E_OOM", "hcclBufferSize 8 MB");
    }

    @Test
    void aCann85InstallOnAnA2PassesEveryCheckOfTheCommunicatorPathAndReads() throws Exception {
        // CANN 8.5: no endpoint API, no include/hcomm, HcclChannelDesc in hccl_res.h, HcclCommConfig of 2,104 bytes
        Set<String> drop = new HashSet<>(Set.of("HcommMemAlloc", "HcommMemFree"));
        Stream.of(HcommSymbol.values()).filter(f -> f.need() == Need.ENDPOINT_API).forEach(f -> drop.add(f.name()));
        FakeInstall f = install("cann85-a2").hcomm(objects, drop).headers(AS_IS, AS_IS)
                .hcclHeaders(t -> t.substring(0, t.indexOf("    char hcclBufferName[128];")) + "} HcclCommConfig;\n",
                        true)
                .ascendClOfSoft();
        Run r = doctor(f.home, A2, "--provider", "cann", "--bytes", "8388608");
        r.expect("library", "PASS", "CANN 9.0.0-fake");
        r.expect("symbols", "PASS", "all that api=communicator needs", "the endpoint API", "HcommEndpointCreate",
                "which this path does not call", "libascendcl.so has the 9 ACL functions");
        r.expect("abi", "PASS", "field offsets of HcclCommConfig and HcclChannelDesc agree with "
                + f.headers().resolveSibling("hccl"), "HcclCommConfig 2104 bytes", "an older version, without "
                + "[hcclBufferName, hcclQos, hcclSymWinMaxMemSizePerRank, hcclChannelSqDepth]");
        r.expect("product", "PASS", "SoC Ascend910B3", "Atlas A2", "the communicator path");
        r.expect("end-to-end", "PASS", "read 8 MiB", "hcclBufferSize 8 MB", "in 2 slices", "every byte verified",
                "CANN does not count live objects");
        assertEquals(0, r.exit, r.output);
    }

    @Test
    void aLibraryWithoutTheHcclFunctionsFailsTheSymbolsCheckOfTheCommunicatorPath() throws Exception {
        List<String> hccl = hcclFunctions();
        FakeInstall f = install("no-hccl").hcomm(objects, Set.copyOf(hccl)).headers(AS_IS, AS_IS)
                .hcclHeaders(AS_IS, false).ascendClOfSoft();
        Run r = doctor(f.home, A2, "--provider", "cann", "--api", "communicator");
        r.onlyFails("symbols");
        r.expect("symbols", "FAIL", "missing " + hccl + ", which api=communicator needs",
                "do: the communicator path needs the HCCL resource API of CANN 8.5 or later");
        r.expect("abi", "PASS", "agree with " + f.headers().resolveSibling("hccl"), "HcclCommConfig 2248 bytes");
        r.expect("end-to-end", "SKIP");
    }

    @Test
    void anAscendClWithoutTheDeviceFunctionsFailsTheSymbolsCheckOfTheCommunicatorPath() throws Exception {
        FakeInstall f = install("acl-soc-only").hcomm(objects, Set.of()).headers(AS_IS, AS_IS)
                .hcclHeaders(AS_IS, false).ascendCl("Ascend910_9391");
        Run r = doctor(f.home, "--provider", "cann");
        r.onlyFails("symbols");
        r.expect("symbols", "FAIL", f.lib64().resolve("libascendcl.so") + ": missing [aclrtCreateStream, "
                + "aclrtDestroyStream, aclrtGetDeviceCount, aclrtMemcpy, aclrtSetDevice, aclrtSynchronizeStream, "
                + "aclrtSynchronizeStreamWithTimeout], which "
                + "api=communicator needs", "do: source the set_env.sh");
        r.expect("product", "PASS", "SoC Ascend910_9391", "Atlas A3", "api auto takes the communicator path");
    }

    @Test
    void aHeaderWithAnotherHcclCommConfigLayoutFailsTheAbiCheckNamingTheField() throws Exception {
        FakeInstall f = install("config-layout").hcomm(objects, Set.of()).headers(AS_IS, AS_IS)
                .hcclHeaders(t -> t.replace("uint32_t hcclDeterministic;", "uint64_t hcclDeterministic;"), false)
                .ascendClOfSoft();
        Run r = doctor(f.home, A2, "--provider", "cann");
        r.onlyFails("abi");
        r.expect("abi", "FAIL", "the communicator path's structs differ from the binding's in "
                + f.headers().resolveSibling("hccl"), "HcclCommConfig.hcclDeterministic: C 32, binding 28",
                "HcclCommConfig.hcclCommName: C 40, binding 32", "do: use a CANN whose HcclChannelDesc is v1");
        r.expect("end-to-end", "SKIP");
    }

    @Test
    void anUnknownOptionOrAnOversizedReadIsAUsageErrorNamingWhatIsAllowed() throws Exception {
        Run r = doctor(null, "--provder", "soft");
        assertEquals(2, r.exit, r.output);
        assertTrue(r.output.contains("unknown option --provder (known: --provider, --library"), r.output);
        Run big = doctor(null, "--bytes", Long.toString((1L << 30) + 8));
        assertEquals(2, big.exit, big.output);
        assertTrue(big.output.contains("use a multiple of 8 from 8 to 1073741824 (1 GiB)"), big.output);
        Run api = doctor(null, "--api", "both");
        assertEquals(2, api.exit, api.output);
        assertTrue(api.output.contains("--api both is not valid; use auto, endpoint or communicator"), api.output);
        Run devices = doctor(null, "--devices", "1,1");
        assertEquals(2, devices.exit, devices.output);
        assertTrue(devices.output.contains("name two different NPUs"), devices.output);
    }
}
