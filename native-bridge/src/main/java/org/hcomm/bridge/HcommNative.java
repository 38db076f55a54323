package org.hcomm.bridge;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.CommAbiHeader;
import org.hcomm.bridge.raw.CommAddr;
import org.hcomm.bridge.raw.CommMem;
import org.hcomm.bridge.raw.EndpointDesc;
import org.hcomm.bridge.raw.EndpointLoc;
import org.hcomm.bridge.raw.HcommBatchTransferDesc;
import org.hcomm.bridge.raw.HcommChannelDesc;
import org.hcomm.bridge.raw.HcommLibrary;
import org.hcomm.bridge.raw.HcommSoftCounters;
import org.hcomm.bridge.raw.HcommSoftLibrary;
import org.hcomm.bridge.raw.ThreadConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds, loads and checks the HComm library, once per process, on first use (never in a static initializer, and
 * never throwing from one).
 *
 * <p>Provider (system property {@value #PROVIDER_PROPERTY}): {@code soft} (default) binds the project's
 * {@code libhcomm_soft.so}; {@code cann} binds CANN's {@code libhcomm.so} and takes {@code aclrtSynchronizeStream}
 * from {@code libascendcl.so}. Fixed search order:
 * <ol>
 *   <li>the file named by {@value #LIBRARY_PATH_PROPERTY} (when set, nothing else is tried);</li>
 *   <li>the system library path: for {@code cann} first {@code $ASCEND_HOME_PATH/<arch>-linux/lib64}, then the
 *       directories of {@code jna.library.path}, {@code java.library.path} and {@code LD_LIBRARY_PATH}, looking for
 *       {@code System.mapLibraryName("hcomm_soft")} or {@code ("hcomm")};</li>
 *   <li>{@code soft} only: the library bundled in the jar ({@code linux-x86-64/libhcomm_soft.so}, JNA's resource
 *       layout), extracted by JNA when it is inside a jar.</li>
 * </ol>
 * Right after loading, the ABI is checked: every {@link HcommLibrary} symbol must resolve (direct mapping binds
 * them all at once), the Java structs must have the ABI sizes, and soft HComm's {@code HcommSoftVersion()} must
 * name {@code abi-v4}. Any failure leaves the bridge unavailable with {@link #unavailabilityCause()} set.
 *
 * <p>Thread-safe. The result is fixed for the life of the process.
 */
public final class HcommNative {
    /** System property choosing the provider: {@code soft} (default) or {@code cann}. */
    public static final String PROVIDER_PROPERTY = "hcomm.provider";
    /** System property naming the library file to load explicitly. */
    public static final String LIBRARY_PATH_PROPERTY = "hcomm.library.path";
    /** What soft HComm's version string must contain. */
    public static final String SOFT_ABI_TAG = "abi-v4";

    private static final Logger LOG = LoggerFactory.getLogger(HcommNative.class);

    /** The library provider. */
    public enum Provider {
        SOFT("hcomm_soft"),
        CANN("hcomm");

        private final String libraryName;

        Provider(String libraryName) {
            this.libraryName = libraryName;
        }

        /** The base name given to {@link System#mapLibraryName(String)}. */
        public String libraryName() {
            return libraryName;
        }
    }

    private record State(Provider provider, String source, String version, HcommSoftLibrary soft,
            Throwable streamSyncCause, Throwable cause) {}

    private static volatile State state;

    private HcommNative() {}

    /** True when the library loaded and passed the ABI check. Loads it on the first call. */
    public static boolean isAvailable() {
        return state().cause == null;
    }

    /** Why the library is unavailable, or {@code null} when it is available. */
    public static Throwable unavailabilityCause() {
        return state().cause;
    }

    /** The configured provider ({@code null} only when the provider property itself is invalid). */
    public static Provider provider() {
        return state().provider;
    }

    /** Where the library was loaded from, e.g. {@code bundled:/tmp/.../libhcomm_soft.so}; null when unavailable. */
    public static String librarySource() {
        return state().source;
    }

    /** soft HComm's version string, or {@code "cann"}; null when unavailable. */
    public static String libraryVersion() {
        return state().version;
    }

    /** Whether {@code aclrtSynchronizeStream} is bound (always for soft; for CANN when libascendcl loaded). */
    public static boolean hasStreamSync() {
        State s = state();
        return s.cause == null && s.streamSyncCause == null;
    }

    /** Throws {@link IllegalStateException} (cause chained) unless the library is available. */
    static void ensureAvailable() {
        State s = state();
        if (s.cause != null) {
            throw new IllegalStateException("HComm library unavailable (provider " + s.provider + "): "
                    + s.cause.getMessage(), s.cause);
        }
    }

    static void ensureStreamSync() {
        ensureAvailable();
        State s = state();
        if (s.streamSyncCause != null) {
            throw new IllegalStateException("aclrtSynchronizeStream unavailable: " + s.streamSyncCause.getMessage(),
                    s.streamSyncCause);
        }
    }

    /** The soft-only functions, or null when the provider is not soft. */
    static HcommSoftLibrary soft() {
        ensureAvailable();
        return state().soft;
    }

    private static State state() {
        State s = state;
        if (s == null) {
            synchronized (HcommNative.class) {
                s = state;
                if (s == null) {
                    s = load();
                    state = s;
                }
            }
        }
        return s;
    }

    private static State load() {
        Provider provider = null;
        try {
            provider = parseProvider(System.getProperty(PROVIDER_PROPERTY, "soft"));
            List<String> tried = new ArrayList<>();
            String[] found = locate(provider, tried);
            if (found == null) {
                throw new UnsatisfiedLinkError("no " + System.mapLibraryName(provider.libraryName())
                        + " found; tried " + String.join(", ", tried));
            }
            File file = new File(found[1]);
            NativeLibrary lib = NativeLibrary.getInstance(file.getAbsolutePath());
            Native.register(HcommLibrary.class, lib);
            checkStructSizes();
            HcommSoftLibrary soft = null;
            String version = "cann";
            Throwable streamSyncCause = null;
            if (provider == Provider.SOFT) {
                soft = Native.load(file.getAbsolutePath(), HcommSoftLibrary.class);
                version = soft.HcommSoftVersion();
                if (version == null || !version.contains(SOFT_ABI_TAG)) {
                    throw new UnsatisfiedLinkError(file + " reports version '" + version + "', expected "
                            + SOFT_ABI_TAG);
                }
                Native.register(AclRuntime.class, lib);
            } else {
                streamSyncCause = bindAscendCl(file);
            }
            String source = found[0] + ":" + file.getAbsolutePath();
            LOG.info("HComm provider {} loaded from {} (version {})", provider, source, version);
            return new State(provider, source, version, soft, streamSyncCause, null);
        } catch (Throwable t) { // UnsatisfiedLinkError, LinkageError, bad property: all mean "unavailable"
            LOG.warn("HComm library unavailable (provider {}): {}", provider, t.toString());
            return new State(provider, null, null, null, t, t);
        }
    }

    private static Provider parseProvider(String value) {
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "soft":
                return Provider.SOFT;
            case "cann":
                return Provider.CANN;
            default:
                throw new IllegalArgumentException(PROVIDER_PROPERTY + "=" + value + " is not valid; use soft or cann");
        }
    }

    /** Returns {how, path} of the first candidate in the fixed order, or null. */
    private static String[] locate(Provider provider, List<String> tried) {
        String explicit = System.getProperty(LIBRARY_PATH_PROPERTY);
        if (explicit != null && !explicit.isBlank()) {
            tried.add(LIBRARY_PATH_PROPERTY + "=" + explicit);
            File f = new File(explicit);
            return f.isFile() ? new String[] {"explicit", f.getPath()} : null;
        }
        String fileName = System.mapLibraryName(provider.libraryName());
        for (String dir : systemDirs(provider)) {
            File f = new File(dir, fileName);
            tried.add(f.getPath());
            if (f.isFile()) {
                return new String[] {"system", f.getPath()};
            }
        }
        if (provider == Provider.SOFT) {
            String resource = Platform.RESOURCE_PREFIX + "/" + fileName;
            tried.add("classpath:" + resource);
            try {
                File f = Native.extractFromResourcePath(provider.libraryName(), HcommNative.class.getClassLoader());
                return new String[] {"bundled", f.getPath()};
            } catch (IOException e) {
                return null;
            }
        }
        return null;
    }

    private static Set<String> systemDirs(Provider provider) {
        Set<String> dirs = new LinkedHashSet<>();
        if (provider == Provider.CANN) {
            String ascend = System.getenv("ASCEND_HOME_PATH");
            if (ascend != null && !ascend.isBlank()) {
                dirs.add(cannLibDir(ascend));
            }
        }
        addPath(dirs, System.getProperty("jna.library.path"));
        addPath(dirs, System.getProperty("java.library.path"));
        addPath(dirs, System.getenv("LD_LIBRARY_PATH"));
        return dirs;
    }

    private static String cannLibDir(String ascendHome) {
        String arch = Platform.isARM() ? "aarch64" : "x86_64";
        return ascendHome + File.separator + arch + "-linux" + File.separator + "lib64";
    }

    private static void addPath(Set<String> dirs, String path) {
        if (path == null) {
            return;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (!d.isBlank()) {
                dirs.add(d);
            }
        }
    }

    /** CANN: aclrtSynchronizeStream from libascendcl.so next to libhcomm.so, else by name; returns why not. */
    private static Throwable bindAscendCl(File hcomm) {
        File sibling = new File(hcomm.getParentFile(), System.mapLibraryName("ascendcl"));
        try {
            NativeLibrary acl = sibling.isFile() ? NativeLibrary.getInstance(sibling.getAbsolutePath())
                    : NativeLibrary.getInstance("ascendcl");
            Native.register(AclRuntime.class, acl);
            return null;
        } catch (UnsatisfiedLinkError e) {
            LOG.warn("libascendcl unavailable, stream synchronisation disabled: {}", e.toString());
            return e;
        }
    }

    private static void checkStructSizes() {
        expectSize(new CommAbiHeader().size(), CommAbiHeader.SIZE, "CommAbiHeader");
        expectSize(new CommAddr().size(), CommAddr.SIZE, "CommAddr");
        expectSize(new EndpointLoc().size(), EndpointLoc.SIZE, "EndpointLoc");
        expectSize(new EndpointDesc().size(), EndpointDesc.SIZE, "EndpointDesc");
        expectSize(new CommMem().size(), CommMem.SIZE, "CommMem");
        expectSize(new ThreadConfig().size(), ThreadConfig.SIZE, "ThreadConfig");
        expectSize(new HcommChannelDesc().size(), HcommChannelDesc.SIZE, "HcommChannelDesc");
        expectSize(new HcommBatchTransferDesc().size(), HcommBatchTransferDesc.SIZE, "HcommBatchTransferDesc");
        expectSize(new HcommSoftCounters().size(), HcommSoftCounters.SIZE, "HcommSoftCounters");
    }

    private static void expectSize(int actual, int expected, String name) {
        if (actual != expected) {
            throw new UnsatisfiedLinkError("ABI mismatch: sizeof(" + name + ") is " + actual + " in Java, expected "
                    + expected);
        }
    }
}
