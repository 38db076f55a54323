package org.hcomm.bridge.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.hcomm.bridge.install.Install;

/**
 * A directory laid out like {@code $ASCEND_HOME_PATH} ({@code <arch>-linux/lib64}, {@code <arch>-linux/include/hcomm}
 * and {@code include/hccl}, {@code version.cfg}), with libraries compiled here from C: an HComm built from soft
 * HComm's own sources (so it really works), exporting all or all but some functions; headers made from soft HComm's,
 * as they are or changed the way an older CANN differs; a {@code libascendcl.so} answering a chosen SoC name, or
 * soft HComm's whole ACL; libraries that cannot load.
 */
final class FakeInstall {
    static final Path CSRC = Path.of(System.getProperty("hcomm.test.csrc", "src/main/c"));
    final Path home;

    FakeInstall(Path home) throws IOException {
        this.home = home;
        Files.createDirectories(lib64());
        Files.writeString(home.resolve("version.cfg"), "Version=9.0.0-fake\n");
    }

    Path lib64() {
        return Install.archDir(home.toString()).resolve("lib64");
    }

    Path headers() {
        return Install.archDir(home.toString()).resolve("include/hcomm");
    }

    /** Compiles soft HComm's sources to position-independent objects in {@code dir}, once per test class. */
    static List<Path> softObjects(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        List<Path> objects = new ArrayList<>();
        try (Stream<Path> s = Files.list(CSRC)) {
            for (Path c : s.filter(p -> p.toString().endsWith(".c")).sorted().toList()) {
                Path o = dir.resolve(c.getFileName().toString().replace(".c", ".o"));
                cc("gcc", "-std=gnu11", "-fPIC", "-fvisibility=hidden", "-pthread", "-D_GNU_SOURCE", "-O0", "-I" + CSRC,
                        "-c", c.toString(), "-o", o.toString());
                objects.add(o);
            }
        }
        return objects;
    }

    /** libhcomm.so from the soft objects, exporting every function of soft HComm's export map but {@code drop}. */
    FakeInstall hcomm(List<Path> objects, Set<String> drop) throws IOException, InterruptedException {
        String map = Files.readString(CSRC.resolve("exports.map"), StandardCharsets.UTF_8);
        for (String name : drop) {
            map = map.replaceAll("\\b" + name + ";", "");
        }
        Path script = home.resolve("exports-" + drop.hashCode() + ".map");
        Files.writeString(script, map);
        List<String> cmd = new ArrayList<>(List.of("gcc", "-shared", "-pthread", "-Wl,--version-script=" + script,
                "-o", lib64().resolve("libhcomm.so").toString()));
        objects.forEach(o -> cmd.add(o.toString()));
        cc(cmd.toArray(String[]::new));
        return this;
    }

    /** Headers as CANN installs them, made from soft HComm's; {@code change} rewrites the types header's text. */
    FakeInstall headers(java.util.function.UnaryOperator<String> types, java.util.function.UnaryOperator<String> res)
            throws IOException {
        Files.createDirectories(headers());
        String defs = Files.readAllLines(CSRC.resolve("hcomm_types.h"), StandardCharsets.UTF_8).stream()
                .filter(l -> !l.startsWith("_Static_assert")) // C only; CANN's headers are C++
                .collect(Collectors.joining("\n", "", "\n"));
        Files.writeString(headers().resolve("hcomm_res_defs.h"), types.apply(defs));
        String api = Files.readString(CSRC.resolve("hcomm_api.h"), StandardCharsets.UTF_8)
                .replace("#include \"hcomm_types.h\"", "#include \"hcomm_res_defs.h\"");
        Files.writeString(headers().resolve("hcomm_res.h"), res.apply(api));
        Files.writeString(headers().resolve("hcomm_channel.h"), "#include \"hcomm_res.h\"\n");
        Files.writeString(headers().resolve("hcomm_primitives.h"), "#include \"hcomm_res.h\"\n");
        return this;
    }

    /**
     * {@code include/hccl} as CANN installs it, made from soft HComm's headers (after {@link #headers}): the
     * communicator section of the types leaves {@code hcomm_res_defs.h} for {@code hccl_types.h} (HcclCommConfig,
     * its 24-byte prefix written as CANN's {@code char reserved[24]}, then rewritten by {@code config}) and
     * {@code hccl_channel.h} (HcclChannelDesc), as in CANN 9.x; with {@code cann85} as in CANN 8.5 instead:
     * HcclChannelDesc in {@code hccl_res.h}, no {@code hccl_channel.h} and no {@code include/hcomm}.
     */
    FakeInstall hcclHeaders(java.util.function.UnaryOperator<String> config, boolean cann85) throws IOException {
        Path defs = headers().resolve("hcomm_res_defs.h");
        String text = Files.readString(defs, StandardCharsets.UTF_8);
        int from = text.indexOf("/* ---- the HCCL communicator path");
        int to = text.indexOf("/* ACL (libascendcl");
        String section = text.substring(from, to);
        Files.writeString(defs, text.substring(0, from) + text.substring(to));
        int desc = section.indexOf("#define HCCL_CHANNEL_MAGIC_WORD");
        String types = config.apply(section.substring(0, desc).replace("size_t size;\n    uint32_t magicWord;\n"
                + "    uint32_t version;\n    uint64_t reserved;", "char reserved[24];"));
        Path hccl = Files.createDirectories(headers().resolveSibling("hccl"));
        Files.writeString(hccl.resolve("hccl_types.h"), guarded("HCCL_TYPES", "#include \"hcomm_res_defs.h\"\n"
                + types));
        String channel = "#include \"hccl_types.h\"\n" + section.substring(desc);
        if (cann85) {
            Files.move(defs, hccl.resolve("hcomm_res_defs.h"));
            try (Stream<Path> s = Files.list(headers())) {
                for (Path h : s.toList()) {
                    Files.delete(h);
                }
            }
            Files.delete(headers());
            Files.writeString(hccl.resolve("hccl_res.h"), guarded("HCCL_RES", channel));
        } else {
            Files.writeString(hccl.resolve("hccl_res.h"), guarded("HCCL_RES", "#include \"hccl_types.h\"\n"));
            Files.writeString(hccl.resolve("hccl_channel.h"), guarded("HCCL_CHANNEL", channel));
        }
        return this;
    }

    private static String guarded(String name, String text) {
        return "#ifndef FAKE_" + name + "_H\n#define FAKE_" + name + "_H\n" + text + "#endif\n";
    }

    /**
     * libascendcl.so that is soft HComm's ACL: a stub that needs this install's libhcomm.so (built from soft HComm,
     * which exports the ACL functions), so that every ACL function resolves there and shares its devices and
     * streams; its SoC is soft HComm's profile ({@code HCOMM_SOFT_SOC}).
     */
    FakeInstall ascendClOfSoft() throws IOException, InterruptedException {
        Path c = home.resolve("acl-stub.c");
        Files.writeString(c, "int hcomm_fake_ascendcl(void) { return 0; }\n");
        cc("gcc", "-shared", "-fPIC", c.toString(), "-L" + lib64(), "-Wl,--no-as-needed", "-lhcomm",
                "-Wl,-rpath,$ORIGIN", "-o", lib64().resolve("libascendcl.so").toString());
        return this;
    }

    /** libascendcl.so whose aclrtGetSocName answers {@code soc}. */
    FakeInstall ascendCl(String soc) throws IOException, InterruptedException {
        Path c = home.resolve("acl.c");
        Files.writeString(c, "const char *aclrtGetSocName(void) { return \"" + soc + "\"; }\n"
                + "int aclInit(const char *config) { (void) config; return 0; }\n"
                + "int aclFinalize(void) { return 0; }\n");
        cc("gcc", "-shared", "-fPIC", c.toString(), "-o", lib64().resolve("libascendcl.so").toString());
        return this;
    }

    /** libhcomm.so that needs libgone.so, which is not there. */
    FakeInstall needingMissingLibrary() throws IOException, InterruptedException {
        Path gone = home.resolve("gone.c");
        Files.writeString(gone, "int gone(void) { return 0; }\n");
        cc("gcc", "-shared", "-fPIC", gone.toString(), "-o", home.resolve("libgone.so").toString());
        Path c = home.resolve("needs.c");
        Files.writeString(c, "int gone(void);\nint HcommEndpointCreate(void) { return gone(); }\n");
        cc("gcc", "-shared", "-fPIC", c.toString(), "-L" + home, "-lgone", "-o",
                lib64().resolve("libhcomm.so").toString());
        Files.delete(home.resolve("libgone.so"));
        return this;
    }

    /** The other architecture CANN ships for: aarch64 on x86_64 hosts, x86_64 on aarch64 ones. */
    static String otherArchitecture() {
        return Install.arch().equals("x86_64") ? "aarch64" : "x86_64";
    }

    /** libhcomm.so made from a working one with its ELF header naming {@link #otherArchitecture()}. */
    FakeInstall forAnotherArchitecture(Path working) throws IOException {
        byte[] elf = Files.readAllBytes(working);
        elf[18] = (byte) (otherArchitecture().equals("aarch64") ? 183 : 62); // e_machine: EM_AARCH64 / EM_X86_64
        elf[19] = 0;
        Files.write(lib64().resolve("libhcomm.so"), elf);
        return this;
    }

    static void cc(String... cmd) throws IOException, InterruptedException {
        Path log = Files.createTempFile("fake-install-cc", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("timed out: " + String.join(" ", cmd));
            }
            assertEquals(0, p.exitValue(), String.join(" ", cmd) + "\n" + Files.readString(log));
        } finally {
            Files.delete(log);
        }
    }
}
