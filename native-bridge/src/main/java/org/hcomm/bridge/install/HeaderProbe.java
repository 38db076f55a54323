package org.hcomm.bridge.install;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.raw.AbiLayout;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * The ABI check against a CANN install's headers: compiles {@code layout_probe.c} (a resource of this jar, the
 * same source the build compiles against the project's headers) with the host's C++ compiler against the
 * install's {@code include/hcomm}, runs it and compares every size and offset with the binding's; and reads the
 * headers' declaration of {@code HcommThreadAlloc} to learn whether it takes a pointer (current ABI) or a count.
 */
final class HeaderProbe {
    /** sizeof(HcommChannelDesc) of each ABI version (docs/HCOMM_ABI.md §2.10). */
    private static final Map<Integer, String> CHANNEL_DESC_VERSIONS = Map.of(328, "the pre-ABI layout (no header)",
            344, "v1", 352, "v2 (no channelName)", 360, "v3 or v4");
    static final List<String> COMPILERS = List.of("c++", "g++", "clang++");
    private static final Pattern THREAD_ALLOC = Pattern.compile("HcommThreadAlloc\\s*\\(([^;{]*)\\)\\s*;");

    private HeaderProbe() {}

    static Finding check(Path headers, Need strategy) {
        String compiler = compiler();
        if (compiler == null) {
            return Finding.warn(Check.ABI, "no C++ compiler (" + String.join(", ", COMPILERS) + ") on PATH: the "
                    + "layout probe could not be compiled against " + headers + ", so sizes and offsets are "
                    + "unchecked", "install g++ (CANN's own kernels need it too) and run the doctor again");
        }
        Path dir = null;
        try {
            dir = Files.createTempDirectory("hcomm-abi-probe");
            Path source = dir.resolve("layout_probe.c");
            try (InputStream in = HeaderProbe.class.getResourceAsStream("layout_probe.c")) {
                Files.copy(in, source);
            }
            List<Path> includes = List.of(headers, headers.getParent());
            Run sizes = compileAndRun(compiler, includes, source, dir.resolve("sizes"), "-DHCOMM_PROBE_SIZES_ONLY");
            if (sizes.error != null) {
                Run desc = compileAndRun(compiler, includes, source, dir.resolve("desc"),
                        "-DHCOMM_PROBE_SIZES_ONLY", "-DHCOMM_PROBE_CHANNEL_DESC_ONLY");
                String size = desc.error == null ? desc.layout.getProperty("sizeof.HcommChannelDesc") : null;
                return Finding.fail(Check.ABI, "the layout probe does not compile against " + headers + ": "
                        + sizes.error + (size == null ? "" : " (their HcommChannelDesc is " + size.trim() + " bytes"
                        + channelDescNote(desc.layout) + ")"), "use a CANN whose HcommChannelDesc is ABI v4 (360 "
                        + "bytes) with the structs the binding passes (CommAbiHeader, CommAddr, EndpointLoc, "
                        + "EndpointDesc, CommMem)");
            }
            List<String> wrongSizes = AbiLayout.mismatches(sizes.layout);
            if (!wrongSizes.isEmpty()) {
                return Finding.fail(Check.ABI, "struct sizes differ from the binding's in " + headers + ": "
                        + String.join("; ", wrongSizes) + channelDescNote(sizes.layout),
                        "use a CANN whose HcommChannelDesc is ABI v4 (360 bytes): the "
                        + "binding would pass structs of the wrong size");
            }
            Run offsets = compileAndRun(compiler, includes, source, dir.resolve("offsets"));
            if (offsets.error != null) {
                return Finding.fail(Check.ABI, "a field the binding writes is missing from " + headers + ": "
                        + offsets.error, "use a CANN with the ABI v4 headers");
            }
            List<String> wrongOffsets = AbiLayout.mismatches(offsets.layout);
            if (!wrongOffsets.isEmpty()) {
                return Finding.fail(Check.ABI, "field offsets differ from the binding's in " + headers + ": "
                        + String.join("; ", wrongOffsets), "use a CANN with the ABI v4 headers, or report "
                        + "this layout to the project");
            }
            String agreed = offsets.layout.size() + " sizes and offsets agree with " + headers + " (compiled by "
                    + compiler + "; HcommChannelDesc " + offsets.layout.getProperty("sizeof.HcommChannelDesc")
                    + " bytes)";
            return threadAlloc(headers, strategy, agreed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Finding.warn(Check.ABI, "the layout probe was interrupted: sizes and offsets are unchecked", "");
        } catch (IOException e) {
            return Finding.warn(Check.ABI, "the layout probe could not run: " + e, "");
        } finally {
            delete(dir);
        }
    }

    /** The HcommThreadAlloc form the headers declare, judged for the strategy that calls it. */
    private static Finding threadAlloc(Path headers, Need strategy, String agreed) throws IOException {
        List<String> forms = new ArrayList<>();
        for (Path h : headerFiles(headers)) {
            String text = stripComments(Files.readString(h, StandardCharsets.UTF_8));
            Matcher m = THREAD_ALLOC.matcher(text);
            while (m.find()) {
                String[] params = m.group(1).split(",");
                if (params.length == 4) {
                    forms.add((params[2].contains("*") ? "pointer" : "count") + " in " + h.getFileName());
                }
            }
        }
        if (forms.isEmpty()) {
            return Finding.warn(Check.ABI, agreed + "; no declaration of HcommThreadAlloc found, so whether its "
                    + "third argument is a pointer is unchecked", "");
        }
        boolean pointer = forms.stream().anyMatch(f -> f.startsWith("pointer"));
        if (pointer) {
            return Finding.pass(Check.ABI, agreed + "; HcommThreadAlloc takes a pointer (" + String.join(", ", forms)
                    + ")");
        }
        String summary = agreed + "; but HcommThreadAlloc takes the notify count by value (uint32_t, the form "
                + "before the 2026-03-30 ABI; " + String.join(", ", forms) + "), and the binding passes a pointer";
        String advice = "use a CANN whose hcomm_res.h declares HcommThreadAlloc(CommEngine, uint32_t, const "
                + "uint32_t *, ThreadHandle *)";
        return strategy == Need.ON_THREAD
                ? Finding.fail(Check.ABI, summary + ", which readStrategy=onThread calls", advice
                        + ", or readStrategy=nbiFence (which does not call it) where the product supports it")
                : Finding.warn(Check.ABI, summary + " (readStrategy=nbiFence does not call it)", advice);
    }

    private static String channelDescNote(Properties sizes) {
        String size = sizes.getProperty("sizeof.HcommChannelDesc");
        if (size == null) {
            return "";
        }
        String version = CHANNEL_DESC_VERSIONS.get(Integer.parseInt(size.trim()));
        return version == null ? "" : "; a " + size.trim() + "-byte HcommChannelDesc is " + version;
    }

    /** What one probe printed ({@code layout}), or why it did not compile or run ({@code error}). */
    record Run(Properties layout, String error) {}

    /** Compiles the probe as C++ ({@code -DHCOMM_PROBE_INSTALL}, {@code defines}, -I {@code includes}), runs it. */
    static Run compileAndRun(String compiler, List<Path> includes, Path source, Path exe, String... defines)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(compiler, "-x", "c++", "-DHCOMM_PROBE_INSTALL"));
        cmd.addAll(List.of(defines));
        includes.forEach(i -> cmd.add("-I" + i));
        cmd.addAll(List.of(source.toString(), "-o", exe.toString()));
        String[] compiled = run(cmd, exe.resolveSibling(exe.getFileName() + ".cc.log"));
        if (compiled[0] != null) {
            return new Run(null, firstError(compiled[0]));
        }
        String[] ran = run(List.of(exe.toString()), exe.resolveSibling(exe.getFileName() + ".out"));
        if (ran[0] != null) {
            return new Run(null, "the probe failed: " + ran[0]);
        }
        Properties p = new Properties();
        p.load(new StringReader(ran[1]));
        return new Run(p, null);
    }

    /** Runs {@code cmd} (output to {@code log}) for at most a minute: {error or null, output}. */
    private static String[] run(List<String> cmd, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                return new String[] {"timed out after 60 s: " + String.join(" ", cmd), ""};
            }
            String text = Files.readString(log, StandardCharsets.UTF_8);
            return new String[] {p.exitValue() == 0 ? null : text.isEmpty() ? "exit " + p.exitValue() : text, text};
        } finally {
            if (p.isAlive()) { // the compiler driver's children (cc1plus, as, ld) too
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static String firstError(String compilerOutput) {
        return compilerOutput.lines().filter(l -> l.contains("error")).findFirst()
                .orElse(compilerOutput.lines().findFirst().orElse("")).trim();
    }

    /** The first of {@link #COMPILERS} on PATH, or null. */
    static String compiler() {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String c : COMPILERS) {
            for (String d : path.split(File.pathSeparator)) {
                if (Files.isExecutable(Path.of(d, c))) {
                    return c;
                }
            }
        }
        return null;
    }

    private static List<Path> headerFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".h")).sorted().toList();
        }
    }

    private static String stripComments(String text) {
        return text.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("//[^\n]*", " ");
    }

    static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: left for the system to clear
        }
    }
}
