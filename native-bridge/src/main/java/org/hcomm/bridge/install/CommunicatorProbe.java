package org.hcomm.bridge.install;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.raw.AbiLayout;
import org.hcomm.bridge.raw.HcclChannelDesc;
import org.hcomm.bridge.raw.HcclCommConfig;

/**
 * The ABI check of the communicator path (Atlas A2/A3) against a CANN install's {@code include/hccl}: compiles
 * {@code layout_probe.c} with {@code -DHCOMM_PROBE_COMMUNICATOR} and compares {@code HcclCommConfig} and
 * {@code HcclChannelDesc} with the binding's.
 *
 * <p>{@code HcclChannelDesc} must be the binding's exactly: it is passed as an array, so its size is the stride.
 * {@code HcclCommConfig} is passed alone and declares its own size in its first 8 bytes; CANN reads
 * {@code min(that size, its own)} bytes of it ({@code CommConfig::Load}, 8.5 and later), and the struct grows at
 * its end from version to version (CANN 8.5: 2,104 bytes, 9.0: 2,240, master: 2,248 = the binding's). So every
 * field both know must sit at the same offset, and a field the install's struct lacks is fine only after every
 * field it has.
 */
final class CommunicatorProbe {
    private static final String CONFIG = "HcclCommConfig";
    private static final String DESC = "HcclChannelDesc";

    private CommunicatorProbe() {}

    static Finding check(Path hccl) {
        String compiler = HeaderProbe.compiler();
        if (compiler == null) {
            return Finding.warn(Check.ABI, "no C++ compiler (" + String.join(", ", HeaderProbe.COMPILERS) + ") on "
                    + "PATH: the layout probe could not be compiled against " + hccl + ", so HcclCommConfig and "
                    + "HcclChannelDesc are unchecked", "install g++ and run the doctor again");
        }
        Path dir = null;
        try {
            dir = Files.createTempDirectory("hcomm-abi-probe");
            Path source = dir.resolve("layout_probe.c");
            try (InputStream in = CommunicatorProbe.class.getResourceAsStream("layout_probe.c")) {
                Files.copy(in, source);
            }
            HeaderProbe.Run run = HeaderProbe.compileAndRun(compiler, includes(hccl, dir), source,
                    dir.resolve("communicator"), "-DHCOMM_PROBE_COMMUNICATOR");
            if (run.error() != null) {
                return Finding.fail(Check.ABI, "the communicator path's layout probe does not compile against "
                        + hccl + ": " + run.error(), "use a CANN of 8.5 or later, whose include/hccl declares "
                        + "HcclCommConfig (hccl_types.h) and HcclChannelDesc (hccl_res.h, or hccl_channel.h)");
            }
            return judge(run.layout(), hccl, compiler);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Finding.warn(Check.ABI, "the layout probe was interrupted: HcclCommConfig and HcclChannelDesc "
                    + "are unchecked", "");
        } catch (IOException e) {
            return Finding.warn(Check.ABI, "the layout probe could not run: " + e, "");
        } finally {
            HeaderProbe.delete(dir);
        }
    }

    /**
     * {@code include/hccl}, {@code include/hcomm} (CANN 9.x; {@code include/hccl} links some of its headers),
     * {@code include} ({@code acl/acl_rt.h}), and last stand-ins for {@code securec.h} and {@code acl/acl_rt.h},
     * which the headers include for inline helpers and prototypes only; an install's own are found first.
     */
    private static List<Path> includes(Path hccl, Path dir) throws IOException {
        List<Path> out = new ArrayList<>(List.of(hccl));
        Path hcomm = hccl.resolveSibling("hcomm");
        if (Files.isDirectory(hcomm)) {
            out.add(hcomm);
        }
        out.add(hccl.getParent());
        Path shim = Files.createDirectories(dir.resolve("shim/acl")).getParent();
        Files.writeString(shim.resolve("securec.h"), "#include <stddef.h>\ntypedef int errno_t;\n#define EOK 0\n"
                + "extern \"C\" errno_t memset_s(void *, size_t, int, size_t);\n"
                + "extern \"C\" errno_t memcpy_s(void *, size_t, const void *, size_t);\n"
                + "extern \"C\" errno_t strcpy_s(char *, size_t, const char *);\n"
                + "extern \"C\" errno_t strncpy_s(char *, size_t, const char *, size_t);\n");
        Files.writeString(shim.resolve("acl/acl_rt.h"), "typedef void *aclrtStream;\ntypedef int aclError;\n");
        out.add(shim);
        return out;
    }

    /** The probe's layout against the binding's, by the rules of the class comment. */
    static Finding judge(Properties layout, Path hccl, String compiler) {
        int configSize = Integer.parseInt(layout.getProperty("sizeof." + CONFIG).trim());
        int descSize = Integer.parseInt(layout.getProperty("sizeof." + DESC).trim());
        List<String> wrong = new ArrayList<>();
        List<String> newer = new ArrayList<>();
        if (descSize != HcclChannelDesc.SIZE) {
            wrong.add("sizeof." + DESC + ": C " + descSize + ", binding " + HcclChannelDesc.SIZE + " (the binding "
                    + "passes an array of them, so every descriptor after the first would be misread)");
        }
        int agree = 0;
        int lastKnown = -1; // the binding's offset of the last HcclCommConfig field the install's struct has
        for (String key : layout.stringPropertyNames()) {
            if (key.startsWith(CONFIG + ".") && !layout.getProperty(key).trim().equals("absent")) {
                lastKnown = Math.max(lastKnown, AbiLayout.binding(key));
            }
        }
        for (String key : new TreeSet<>(layout.stringPropertyNames())) {
            if (key.startsWith("sizeof.")) {
                continue;
            }
            String c = layout.getProperty(key).trim();
            int binding = AbiLayout.binding(key);
            if (c.equals("absent")) {
                if (key.startsWith(CONFIG + ".") && lastKnown >= 0 && binding > lastKnown) {
                    newer.add(key.substring(CONFIG.length() + 1)); // a later version's: past what the library reads
                } else {
                    wrong.add(key + ": not in " + hccl + "'s struct, binding writes it at offset " + binding);
                }
            } else if (Integer.parseInt(c) != binding) {
                wrong.add(key + ": C " + c + ", binding " + binding);
            } else {
                agree++;
            }
        }
        newer.sort(Comparator.comparingInt(f -> AbiLayout.binding(CONFIG + "." + f)));
        if (!wrong.isEmpty()) {
            return Finding.fail(Check.ABI, "the communicator path's structs differ from the binding's in " + hccl
                    + ": " + String.join("; ", wrong), "use a CANN whose HcclChannelDesc is v1 (496 bytes) and "
                    + "whose HcclCommConfig has its fields at the offsets of CANN's (hcclBufferSize at 24), or "
                    + "report this layout to the project");
        }
        String summary = agree + " field offsets of HcclCommConfig and HcclChannelDesc agree with " + hccl
                + " (compiled by " + compiler + "; HcclChannelDesc " + descSize + " bytes, HcclCommConfig "
                + configSize + " bytes)";
        if (configSize < HcclCommConfig.SIZE) {
            summary += "; this HcclCommConfig is an older version" + (newer.isEmpty() ? "" : ", without " + newer)
                    + ": the library reads the first " + configSize + " of the binding's " + HcclCommConfig.SIZE
                    + " bytes, which hold every field it knows";
        } else if (configSize > HcclCommConfig.SIZE) {
            summary += "; this HcclCommConfig is newer than the binding's (" + HcclCommConfig.SIZE + " bytes, "
                    + "version " + HcclCommConfig.VERSION + "): the library reads the fields of the version the "
                    + "binding declares";
        }
        return Finding.pass(Check.ABI, summary);
    }
}
