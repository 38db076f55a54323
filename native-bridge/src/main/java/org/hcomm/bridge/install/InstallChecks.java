package org.hcomm.bridge.install;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.raw.HcommSymbol;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * The quick checks: the library loads, it has the functions the chosen read strategy needs, and (where the install
 * has headers) its structs have the binding's layout. Executors run them before the first native call that passes
 * a struct ({@code HcommNative}); the doctor runs the same, then more. None calls into the library but soft
 * HComm's {@code HcommSoftVersion()}, which takes no argument.
 */
public final class InstallChecks {
    /** What soft HComm's version string must contain. */
    public static final String SOFT_ABI_TAG = "abi-v4";

    /** The three findings (library; symbols and ABI, or SKIP when the library did not open) and the opened library. */
    public record Quick(List<Finding> findings, NativeLibrary library) {
        /** The first FAIL, or null. */
        public Finding firstFailure() {
            return findings.stream().filter(Finding::failed).findFirst().orElse(null);
        }
    }

    private InstallChecks() {}

    /** Library, symbols and ABI; symbols and ABI are both judged even when one fails, so each says its own. */
    public static Quick quick(Install install, Need strategy) {
        List<Finding> out = new ArrayList<>();
        NativeLibrary lib = null;
        Finding library;
        try {
            lib = open(install);
            String version = install.provider() == Provider.SOFT ? softVersion(lib) : null;
            library = Finding.pass(Check.LIBRARY, describe(install) + (version == null ? "" : ", version "
                    + version));
            out.add(library);
            out.add(symbols(lib, strategy, install.provider()));
            out.add(abi(install, version, strategy));
        } catch (UnsatisfiedLinkError e) {
            out.add(cannotOpen(install, e));
            out.add(Finding.skip(Check.SYMBOLS, "the library did not load"));
            out.add(Finding.skip(Check.ABI, "the library did not load"));
        }
        return new Quick(List.copyOf(out), lib);
    }

    private static NativeLibrary open(Install install) {
        if (!install.library().found()) {
            throw new UnsatisfiedLinkError("not found");
        }
        return NativeLibrary.getInstance(install.library().file().getAbsolutePath());
    }

    /** soft HComm's {@code HcommSoftVersion()}, or null when the library has none. */
    public static String softVersion(NativeLibrary lib) {
        try {
            return lib.getFunction("HcommSoftVersion").invokeString(new Object[0], false);
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
    }

    private static String describe(Install install) {
        Install.Location loc = install.library();
        String path = loc.file().getAbsolutePath();
        String cann = install.version() == null ? "" : ", CANN " + install.version();
        switch (loc.how()) {
            case "bundled":
                return "soft HComm bundled in the jar, extracted to " + path;
            case "explicit":
                return path + " (named explicitly)" + cann;
            default:
                return path + " (provider " + install.provider() + ", first in the search order"
                        + (install.libraryFromAscendHome() ? " from $ASCEND_HOME_PATH=" + install.ascendHome() : "")
                        + ")" + cann;
        }
    }

    private static Finding cannotOpen(Install install, UnsatisfiedLinkError e) {
        Install.Location loc = install.library();
        if (!loc.found()) {
            return Finding.fail(Check.LIBRARY, "no " + System.mapLibraryName(install.provider().libraryName())
                    + " found (provider " + install.provider() + "); tried " + String.join(", ", loc.tried()),
                    install.provider() == Provider.CANN
                    ? "source CANN's set_env.sh so that ASCEND_HOME_PATH is set, or name the file with "
                    + "spark.shuffle.hcomm.libraryPath (doctor: --library PATH)"
                    : "use the bundle jar built for this platform (it carries linux-x86-64/libhcomm_soft.so, and "
                    + "linux-aarch64/libhcomm_soft.so when built with aarch64-linux-gnu-gcc installed; this JVM "
                    + "looks under " + Platform.RESOURCE_PREFIX + "/)");
        }
        String file = loc.file().getAbsolutePath();
        // JNA's message: "Unable to load library '<file>':" then dlerror's lines, "<what>: <why>"
        String dlerror = String.valueOf(e.getMessage()).lines().skip(1).findFirst().orElse(e.getMessage());
        String what = dlerror.contains(": ") ? dlerror.substring(0, dlerror.indexOf(": ")) : "";
        String machine = elfMachine(loc.file().toPath());
        if (machine.equals("x86_64") || machine.equals("aarch64") || machine.startsWith("e_machine")) {
            if (!machine.equals(Install.arch())) {
                return Finding.fail(Check.LIBRARY, file + " does not load: it is not a library for this JVM's "
                        + "architecture (" + System.getProperty("os.arch") + "): its ELF header says " + machine,
                        "install the CANN package for " + Install.arch() + "-linux");
            }
        } else {
            return Finding.fail(Check.LIBRARY, file + " does not load: it is " + machine + " (" + dlerror + ")",
                    "name the HComm shared library itself (libhcomm.so of the CANN package)");
        }
        if (dlerror.contains("cannot open shared object file") && !what.isEmpty() && !file.endsWith(what)) {
            return Finding.fail(Check.LIBRARY, file + " does not load: a library it needs is missing: " + dlerror,
                    "run ldd " + file + " to see which; source CANN's set_env.sh so that LD_LIBRARY_PATH holds "
                    + "its lib64 directories, before starting the JVM");
        }
        return Finding.fail(Check.LIBRARY, file + " does not load: " + dlerror, "check the file with ldd and file(1)");
    }

    /** The machine an ELF file is for ({@code x86_64}, {@code aarch64}, {@code e_machine N}), else what it is. */
    static String elfMachine(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] h = in.readNBytes(20);
            if (h.length < 20 || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') {
                return "not an ELF file";
            }
            int machine = (h[18] & 0xff) | (h[19] & 0xff) << 8; // little-endian, as both hosts CANN ships for
            switch (machine) {
                case 62:
                    return "x86_64";
                case 183:
                    return "aarch64";
                default:
                    return "e_machine " + machine;
            }
        } catch (IOException ex) {
            return "unreadable (" + ex.getMessage() + ")";
        }
    }

    /**
     * Which of the binding's functions the library lacks, judged for {@code strategy}: {@link Need#ON_THREAD} or
     * {@link Need#NBI_FENCE} (the endpoint API with that read strategy), {@link Need#COMMUNICATOR} (the HCCL
     * communicator path and the data plane) or {@link Need#DATA_PLANE} ({@code api=auto}: what both read with).
     * FAIL when a function the choice needs, or (soft HComm) its allocation, is missing; WARN when only the other
     * strategy's, the other API's or optional ones are; for the communicator path the endpoint API's absence (CANN
     * 8.5 has none) is said in a PASS, as nothing on that path calls it.
     */
    public static Finding symbols(NativeLibrary lib, Need strategy, Provider provider) {
        Map<Need, List<String>> missing = new EnumMap<>(Need.class);
        int present = 0;
        int looked = 0;
        for (HcommSymbol s : HcommSymbol.values()) {
            if (s.need() == Need.SOFT_ALLOCATION && provider != Provider.SOFT) {
                continue; // the plugin maps host memory itself with CANN
            }
            looked++;
            try {
                lib.getFunction(s.name());
                present++;
            } catch (UnsatisfiedLinkError e) {
                missing.computeIfAbsent(s.need(), k -> new ArrayList<>()).add(s.name());
            }
        }
        Need other = strategy == Need.ON_THREAD ? Need.NBI_FENCE : Need.ON_THREAD;
        List<Need> needed = strategy == Need.DATA_PLANE ? List.of(Need.DATA_PLANE) // api auto: either API will do
                : strategy == Need.COMMUNICATOR ? List.of(Need.COMMUNICATOR, Need.DATA_PLANE)
                : strategy == Need.ON_THREAD
                        ? List.of(Need.ENDPOINT_API, Need.DATA_PLANE, Need.ON_THREAD, Need.SOFT_ALLOCATION)
                        : List.of(Need.ENDPOINT_API, strategy, Need.SOFT_ALLOCATION);
        String file = lib.getFile() == null ? lib.getName() : lib.getFile().getAbsolutePath();
        List<String> fatal = new ArrayList<>();
        for (Need n : needed) {
            if (missing.containsKey(n)) {
                fatal.add("missing " + missing.get(n) + ", which " + n.who() + " needs");
            }
        }
        boolean communicator = strategy == Need.COMMUNICATOR;
        List<String> notes = new ArrayList<>(); // what may not work as configured: a WARN
        List<String> unused = new ArrayList<>(); // what the communicator path never calls: said, not warned
        if (!communicator && strategy != Need.DATA_PLANE && missing.containsKey(other)) {
            notes.add(other.who() + " would not work: missing " + missing.get(other));
        }
        for (Need n : List.of(Need.COMMUNICATOR, Need.ENDPOINT_API)) {
            if (!needed.contains(n) && missing.containsKey(n)) {
                (communicator ? unused : notes).add(n.who() + " would not work: missing " + missing.get(n));
            }
        }
        if (!communicator && missing.containsKey(Need.STREAM_COMPLETION)) {
            notes.add("optional " + missing.get(Need.STREAM_COMPLETION) + " missing (" + Need.STREAM_COMPLETION.who()
                    + ")");
        }
        // optional everywhere: said in a PASS, never a WARN (soft HComm has no such lock)
        String optional = "";
        for (Need n : List.of(Need.COMMUNICATOR_LOCK, Need.ONE_SIDED_WRITE)) {
            if (missing.containsKey(n)) {
                optional += "; optional " + missing.get(n) + " missing (" + n.who() + ")";
            }
        }
        String who = strategy == Need.DATA_PLANE ? "api=auto (the data plane both APIs read with)" : strategy.who();
        if (!fatal.isEmpty()) {
            boolean otherWorks = !communicator && strategy != Need.DATA_PLANE && fatal.size() == 1
                    && missing.containsKey(strategy) && !missing.containsKey(other);
            notes.addAll(unused);
            String advice = otherWorks ? "set spark.shuffle.hcomm.readStrategy=" + strategyName(other) + ", whose "
                    + "functions are all there"
                    : communicator ? "the communicator path needs the HCCL resource API of CANN 8.5 or later "
                    + "(HcclChannelAcquire, HcclGetHcclBuffer, HcclThreadAcquireWithStream) in libhcomm.so: use "
                    + "such a CANN, or provider soft"
                    : "this library is not the HComm of a CANN the binding supports (the README's 'Before you run on "
                    + "Ascend'): use a CANN whose libhcomm.so exports them, or provider soft";
            return Finding.fail(Check.SYMBOLS, file + ": " + String.join("; ", fatal)
                    + (notes.isEmpty() ? "" : "; " + String.join("; ", notes)), advice);
        }
        if (!notes.isEmpty()) {
            return Finding.warn(Check.SYMBOLS, present + " of " + looked + " functions, all that " + who
                    + " needs; " + String.join("; ", notes) + optional, "");
        }
        if (!unused.isEmpty()) {
            return Finding.pass(Check.SYMBOLS, present + " of " + looked + " functions, all that " + who + " needs ("
                    + String.join("; ", unused) + ", which this path does not call)" + optional);
        }
        if (!optional.isEmpty()) {
            return Finding.pass(Check.SYMBOLS, present + " of " + looked + " functions, all that both APIs and both "
                    + "read strategies need" + optional);
        }
        return Finding.pass(Check.SYMBOLS, "all " + present + " functions the binding calls, for both APIs and both "
                + "read strategies");
    }

    /** {@code onThread} or {@code nbiFence}: the configuration value of a strategy's need. */
    public static String strategyName(Need strategy) {
        return strategy == Need.NBI_FENCE ? "nbiFence" : "onThread";
    }

    /**
     * The layout check: soft HComm was built from the project's headers (its version names the ABI); a CANN install
     * with headers gets the layout probe compiled against them (for {@link Need#COMMUNICATOR} the communicator
     * path's structs from {@code include/hccl}, else the endpoint path's from {@code include/hcomm}); without
     * headers, what could not be checked.
     */
    public static Finding abi(Install install, String softVersion, Need strategy) {
        if (install.provider() == Provider.SOFT) {
            if (softVersion == null || !softVersion.contains(SOFT_ABI_TAG)) {
                return Finding.fail(Check.ABI, "soft HComm reports version '" + softVersion + "', not "
                        + SOFT_ABI_TAG, "use the soft HComm of this jar (do not mix jars and libraries of "
                        + "different builds)");
            }
            return Finding.pass(Check.ABI, "soft HComm " + softVersion + ": built from this project's headers, "
                    + "whose layout the build compared with gcc's");
        }
        if (strategy == Need.COMMUNICATOR) {
            if (install.hcclHeaders() == null) {
                return Finding.warn(Check.ABI, noHeaders(install, "include/hccl") + ": HcclCommConfig and "
                        + "HcclChannelDesc could not be checked against this install; the binding assumes "
                        + "HcclChannelDesc v1 (496 bytes) and HcclCommConfig with CANN's offsets (2,248 bytes, "
                        + "version 11; older versions read it by its size)",
                        "run the doctor where CANN's headers for this library are installed (the toolkit package)");
            }
            return CommunicatorProbe.check(install.hcclHeaders());
        }
        if (install.headers() == null) {
            return Finding.warn(Check.ABI, noHeaders(install, "include/hcomm") + ": struct sizes and offsets could "
                    + "not be checked against this install; the binding assumes HcommChannelDesc v4 (360 bytes), "
                    + "EndpointDesc 160, CommMem 24 and HcommThreadAlloc taking a pointer",
                    "run the doctor where CANN's headers for this library are installed (the toolkit package)");
        }
        return HeaderProbe.check(install.headers(), strategy);
    }

    /** Why an install's headers in {@code dir} (under {@code <arch>-linux}) say nothing about the library. */
    private static String noHeaders(Install install, String dir) {
        if (install.ascendHome() == null) {
            return "no $ASCEND_HOME_PATH";
        }
        if (!install.libraryFromAscendHome()) {
            return "the library is not the one under $ASCEND_HOME_PATH=" + install.ascendHome()
                    + ", so that install's headers say nothing about it";
        }
        return "no " + Install.archDir(install.ascendHome()).resolve(dir);
    }

    /** {@code libascendcl.so} next to the HComm library, else in {@code $ASCEND_HOME_PATH}'s lib64, else by name. */
    public static NativeLibrary ascendCl(Install install) {
        String name = System.mapLibraryName("ascendcl");
        List<File> candidates = new ArrayList<>();
        if (install.library().found()) {
            candidates.add(new File(install.library().file().getParentFile(), name));
        }
        if (install.ascendHome() != null) {
            candidates.add(Install.archDir(install.ascendHome()).resolve("lib64").resolve(name).toFile());
        }
        for (File f : candidates) {
            if (f.isFile()) {
                return NativeLibrary.getInstance(f.getAbsolutePath());
            }
        }
        return NativeLibrary.getInstance("ascendcl");
    }

    /**
     * {@code aclrtGetSocName()}: soft HComm's own (it answers its profile without {@code aclInit}); with CANN
     * {@code libascendcl.so}'s, and when it answers nothing before {@code aclInit(NULL)}, after it. ACL then stays
     * initialized for the rest of the doctor's run, as in an executor that used it (CANN may refuse a second
     * {@code aclInit} after {@code aclFinalize}).
     */
    public static String socName(Install install) {
        NativeLibrary acl;
        if (install.provider() == Provider.SOFT) {
            if (!install.library().found()) {
                throw new UnsatisfiedLinkError("soft HComm was not found");
            }
            acl = NativeLibrary.getInstance(install.library().file().getAbsolutePath());
        } else {
            acl = InstallChecks.ascendCl(install);
        }
        Function name = acl.getFunction("aclrtGetSocName");
        String soc = name.invokeString(new Object[0], false);
        if (soc != null || install.provider() == Provider.SOFT) {
            return soc;
        }
        Function init;
        try {
            init = acl.getFunction("aclInit");
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
        int rc = init.invokeInt(new Object[] {null});
        if (rc != 0) {
            throw new UnsatisfiedLinkError("aclrtGetSocName answered nothing and aclInit(NULL) returned " + rc);
        }
        return name.invokeString(new Object[0], false);
    }
}
