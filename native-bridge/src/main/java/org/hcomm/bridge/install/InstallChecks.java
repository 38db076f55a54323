package org.hcomm.bridge.install;

import com.sun.jna.NativeLibrary;
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
 * a struct; the doctor runs them first. None calls into the library.
 */
public final class InstallChecks {
    /** Whether the library could be opened, and the handle when it could. */
    public record Opened(Finding finding, NativeLibrary library) {}

    private InstallChecks() {}

    /** Opens (dlopen) the library {@code install} locates, naming where it came from, or why it does not open. */
    public static Opened library(Install install) {
        Install.Location loc = install.library();
        String versionNote = install.version() == null ? "" : ", CANN " + install.version();
        if (!loc.found()) {
            return new Opened(Finding.fail(Check.LIBRARY, "no " + System.mapLibraryName(
                    install.provider().libraryName()) + " found (provider " + install.provider() + "); tried "
                    + String.join(", ", loc.tried()), install.provider() == Provider.CANN
                    ? "source CANN's set_env.sh so that ASCEND_HOME_PATH is set, or name the file with "
                    + "spark.shuffle.hcomm.libraryPath (doctor: --library PATH)"
                    : "use the bundle jar built for this platform (it carries linux-x86-64/libhcomm_soft.so)"),
                    null);
        }
        try {
            NativeLibrary lib = NativeLibrary.getInstance(loc.file().getAbsolutePath());
            String what = loc.how().equals("bundled") ? "soft HComm bundled in the jar, extracted to "
                    + loc.file().getAbsolutePath() : loc.file().getAbsolutePath() + " (" + why(install) + ")";
            return new Opened(Finding.pass(Check.LIBRARY, what + versionNote), lib);
        } catch (UnsatisfiedLinkError e) {
            return new Opened(cannotOpen(loc, e), null);
        }
    }

    private static String why(Install install) {
        Install.Location loc = install.library();
        switch (loc.how()) {
            case "explicit":
                return "named explicitly";
            default:
                return "provider " + install.provider() + ", first in the search order"
                        + (install.ascendHome() != null && install.provider() == Provider.CANN
                        ? " from $ASCEND_HOME_PATH=" + install.ascendHome() : "");
        }
    }

    private static Finding cannotOpen(Install.Location loc, UnsatisfiedLinkError e) {
        String file = loc.file().getAbsolutePath();
        // JNA's message: "Unable to load library '<file>':" then dlerror's lines, "<what>: <why>"
        String dlerror = String.valueOf(e.getMessage()).lines().skip(1).findFirst().orElse(e.getMessage());
        String what = dlerror.contains(": ") ? dlerror.substring(0, dlerror.indexOf(": ")) : "";
        String machine = elfMachine(loc.file().toPath());
        if (!machine.equals(HOST_MACHINE)) {
            return Finding.fail(Check.LIBRARY, file + " does not load: it is not a library for this JVM's "
                    + "architecture (" + System.getProperty("os.arch") + "): its ELF header says " + machine,
                    "install the CANN package for " + Install.arch() + "-linux");
        }
        if (dlerror.contains("cannot open shared object file") && !what.isEmpty() && !file.endsWith(what)) {
            return Finding.fail(Check.LIBRARY, file + " does not load: a library it needs is missing: " + dlerror,
                    "run ldd " + file + " to see which; source CANN's set_env.sh so that LD_LIBRARY_PATH holds "
                    + "its lib64 directories, before starting the JVM");
        }
        return Finding.fail(Check.LIBRARY, file + " does not load: " + dlerror,
                "check the file with ldd and file(1)");
    }

    private static final String HOST_MACHINE = Install.arch();

    /** The machine an ELF file is for ({@code x86_64}, {@code aarch64}, or {@code e_machine N}), as its header says. */
    static String elfMachine(java.nio.file.Path file) {
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(file)) {
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
        } catch (java.io.IOException ex) {
            return "unreadable (" + ex.getMessage() + ")";
        }
    }

    /**
     * Which of the binding's functions the library lacks, judged for {@code strategy} ({@link Need#ON_THREAD} or
     * {@link Need#NBI_FENCE}): FAIL when a function every strategy needs, or the strategy's own, is missing; WARN
     * when only the other strategy's or optional ones are.
     */
    public static Finding symbols(NativeLibrary lib, Need strategy) {
        Map<Need, List<String>> missing = new EnumMap<>(Need.class);
        int present = 0;
        for (HcommSymbol s : HcommSymbol.values()) {
            try {
                lib.getFunction(s.name());
                present++;
            } catch (UnsatisfiedLinkError e) {
                missing.computeIfAbsent(s.need(), k -> new ArrayList<>()).add(s.name());
            }
        }
        Need other = strategy == Need.ON_THREAD ? Need.NBI_FENCE : Need.ON_THREAD;
        String file = lib.getFile() == null ? lib.getName() : lib.getFile().getAbsolutePath();
        List<String> fatal = new ArrayList<>();
        if (missing.containsKey(Need.EVERY_STRATEGY)) {
            fatal.add("missing " + missing.get(Need.EVERY_STRATEGY) + ", which " + Need.EVERY_STRATEGY.who()
                    + " needs");
        }
        if (missing.containsKey(strategy)) {
            fatal.add("missing " + missing.get(strategy) + ", which " + strategy.who() + " needs");
        }
        List<String> notes = new ArrayList<>();
        if (missing.containsKey(other)) {
            notes.add(other.who() + " would not work: missing " + missing.get(other));
        }
        if (missing.containsKey(Need.STREAM_COMPLETION)) {
            notes.add("optional " + missing.get(Need.STREAM_COMPLETION) + " missing (" + Need.STREAM_COMPLETION.who()
                    + ")");
        }
        if (!fatal.isEmpty()) {
            boolean otherWorks = !missing.containsKey(Need.EVERY_STRATEGY) && !missing.containsKey(other);
            return Finding.fail(Check.SYMBOLS, file + ": " + String.join("; ", fatal)
                    + (notes.isEmpty() ? "" : "; " + String.join("; ", notes)), otherWorks
                    ? "set spark.shuffle.hcomm.readStrategy=" + strategyName(other) + ", whose functions are all "
                    + "there" : "this library is not an HComm of a supported CANN (see ../shared/HCOMM_ABI.md §3, "
                    + "§8): use CANN with libhcomm.so exporting them, or provider soft");
        }
        if (!notes.isEmpty()) {
            return Finding.warn(Check.SYMBOLS, present + " of " + HcommSymbol.values().length + " functions, all "
                    + "that " + strategy.who() + " needs; " + String.join("; ", notes), "");
        }
        return Finding.pass(Check.SYMBOLS, "all " + present + " functions the binding calls, for both read "
                + "strategies");
    }

    /** {@code onThread} or {@code nbiFence}: the configuration value of a strategy's need. */
    public static String strategyName(Need strategy) {
        return strategy == Need.NBI_FENCE ? "nbiFence" : "onThread";
    }

    /** The need of a configuration value {@code onThread} / {@code nbiFence}; else an exception naming both. */
    public static Need strategy(String name) {
        switch (name) {
            case "onThread":
                return Need.ON_THREAD;
            case "nbiFence":
                return Need.NBI_FENCE;
            default:
                throw new IllegalArgumentException("read strategy " + name + " is not valid; use onThread or "
                        + "nbiFence");
        }
    }

    /**
     * The layout check: soft HComm was built from the project's headers (its version names the ABI); a CANN install
     * with headers gets the layout probe compiled against them; without headers, what could not be checked.
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
        if (install.headers() == null) {
            String where = install.ascendHome() == null ? "no $ASCEND_HOME_PATH"
                    : "no " + Install.archDir(install.ascendHome()).resolve("include/hcomm");
            return Finding.warn(Check.ABI, where + ": struct sizes and offsets could not be checked against "
                    + "this install; the binding assumes HcommChannelDesc v4 (360 bytes), EndpointDesc 160, "
                    + "CommMem 24 and HcommThreadAlloc taking a pointer (HCOMM_ABI.md §2, §8)",
                    "run the doctor where CANN's headers are installed (the toolkit package) to check them");
        }
        return HeaderProbe.check(install.headers(), strategy);
    }

    /** What soft HComm's version string must contain. */
    public static final String SOFT_ABI_TAG = "abi-v4";

    /** The quick checks in order, stopping at the first FAIL (later ones need what it found). */
    public static List<Finding> quick(Install install, Need strategy, java.util.function.Function<NativeLibrary,
            String> softVersion) {
        List<Finding> out = new ArrayList<>();
        Opened opened = library(install);
        out.add(opened.finding());
        if (opened.library() == null) {
            return out;
        }
        Finding symbols = symbols(opened.library(), strategy);
        out.add(symbols);
        if (symbols.failed()) {
            return out;
        }
        out.add(abi(install, install.provider() == Provider.SOFT ? softVersion.apply(opened.library()) : null,
                strategy));
        return out;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
