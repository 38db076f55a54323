package org.hcomm.bridge;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Install;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.CommAbiHeader;
import org.hcomm.bridge.raw.CommAddr;
import org.hcomm.bridge.raw.CommMem;
import org.hcomm.bridge.raw.EndpointDesc;
import org.hcomm.bridge.raw.EndpointLoc;
import org.hcomm.bridge.raw.HcommBatchTransferDesc;
import org.hcomm.bridge.raw.HcclChannelDesc;
import org.hcomm.bridge.raw.HcclCommConfig;
import org.hcomm.bridge.raw.HcommChannelDesc;
import org.hcomm.bridge.raw.HcclLibrary;
import org.hcomm.bridge.raw.HcommAllocLibrary;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;
import org.hcomm.bridge.raw.HcommLibrary;
import org.hcomm.bridge.raw.HcommNbiLibrary;
import org.hcomm.bridge.raw.HcommOnThreadLibrary;
import org.hcomm.bridge.raw.HcommStreamLibrary;
import org.hcomm.bridge.raw.HcommSymbol.Need;
import org.hcomm.bridge.raw.HcommSoftCounters;
import org.hcomm.bridge.raw.HcommSoftLibrary;
import org.hcomm.bridge.raw.ThreadConfig;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.read.ReadStrategy;

/**
 * Finds, loads and checks the HComm library, once per process, on first use (never in a static initializer, and
 * never throwing from one).
 *
 * <p>Provider (system property {@value #PROVIDER_PROPERTY}): {@code soft} (default) binds the project's
 * {@code libhcomm_soft.so}; {@code cann} binds CANN's {@code libhcomm.so} and takes {@code aclrtSynchronizeStream}
 * from {@code libascendcl.so}. Where the file is looked for: {@link Install}.
 *
 * <p>Before anything is bound, the doctor's quick checks run ({@link InstallChecks#quick}): the library opens, it
 * exports every function the read strategy of {@value #READ_STRATEGY_PROPERTY} needs, and its struct layout is the
 * binding's (soft HComm's version names {@code abi-v4}; a CANN install's headers are compiled against when present).
 * The first failed check leaves the bridge unavailable with that check's line as {@link #unavailabilityCause()}, so
 * an install that does not fit is refused before the first native call that passes a struct. Then the functions
 * are bound by group ({@link org.hcomm.bridge.raw.HcommSymbol#binding()}): each read strategy apart, so an install lacking one
 * strategy's functions still serves the other ({@link #ensureStrategy}).
 *
 * <p>Thread-safe. The result is fixed for the life of the process.
 */
public final class HcommNative {
    /** System property choosing the provider: {@code soft} (default) or {@code cann}. */
    public static final String PROVIDER_PROPERTY = "hcomm.provider";
    /** System property naming the library file to load explicitly. */
    public static final String LIBRARY_PATH_PROPERTY = "hcomm.library.path";
    /** System property naming the read strategy the quick checks judge the symbols for (default onThread). */
    public static final String READ_STRATEGY_PROPERTY = "hcomm.readStrategy";
    /**
     * System property naming the API the quick checks judge the symbols for: {@code endpoint} (default; Atlas 350),
     * {@code communicator} (the HCCL communicator path of Atlas A2/A3), whose install needs no endpoint API, or
     * {@code auto} (either: the caller chooses by the SoC, {@link Acl#socName()}).
     */
    public static final String API_PROPERTY = "hcomm.api";

    private static final BridgeLog LOG = BridgeLog.of(HcommNative.class);

    private record State(Provider provider, String source, String version, HcommSoftLibrary soft,
            Throwable streamSyncCause, Map<ReadStrategy.Kind, Throwable> strategyCauses, Throwable endpointCause,
            Throwable communicatorCause, Install install, List<Finding> checks, Throwable cause) {}

    private static volatile State state;
    private static volatile String chosenApi = "endpoint";

    private HcommNative() {}

    /** True when the library loaded and passed the quick checks. Loads it on the first call. */
    public static boolean isAvailable() {
        return state().cause == null;
    }

    /** Why the library is unavailable, or {@code null} when it is available. */
    public static Throwable unavailabilityCause() {
        return state().cause;
    }

    /** What the loader found on this host (null only when the provider or strategy property was invalid). */
    public static Install install() {
        return state().install;
    }

    /** The quick checks' findings of the load (empty when the provider property itself was invalid). */
    public static List<Finding> quickChecks() {
        return state().checks;
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

    /** Throws {@link IllegalStateException} naming the missing functions unless the strategy's functions are bound. */
    public static void ensureStrategy(ReadStrategy.Kind kind) {
        ensureAvailable();
        Throwable cause = state().strategyCauses.get(kind);
        if (cause != null) {
            throw new IllegalStateException("HComm read strategy " + kind + " unavailable in " + state().source
                    + ": " + cause.getMessage(), cause);
        }
    }

    /** Throws {@link IllegalStateException} naming what is missing unless the endpoint API is bound. */
    public static void ensureEndpointApi() {
        ensureAvailable();
        Throwable cause = state().endpointCause;
        if (cause != null) {
            throw new IllegalStateException("the HComm endpoint API is unavailable in " + state().source + ": "
                    + cause.getMessage(), cause);
        }
    }

    /** Throws {@link IllegalStateException} naming what is missing unless the communicator path is bound. */
    public static void ensureCommunicator() {
        ensureAvailable();
        Throwable cause = state().communicatorCause;
        if (cause != null) {
            throw new IllegalStateException("the HCCL communicator path is unavailable in " + state().source + ": "
                    + cause.getMessage(), cause);
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
        Install install = null;
        List<Finding> checks = List.of();
        try {
            provider = Provider.parse(System.getProperty(PROVIDER_PROPERTY, "soft"), PROVIDER_PROPERTY);
            String api = System.getProperty(API_PROPERTY, "endpoint");
            if (!api.equals("endpoint") && !api.equals("communicator") && !api.equals("auto")) {
                throw new IllegalArgumentException(API_PROPERTY + "=" + api + " is not valid; use endpoint, "
                        + "communicator or auto");
            }
            install = Install.discover(provider, System.getProperty(LIBRARY_PATH_PROPERTY));
            if (api.equals("auto")) { // the SoC decides before anything is judged, as the doctor does
                api = communicatorSoc(install) ? "communicator" : "endpoint";
            }
            chosenApi = api;
            Need strategy = api.equals("communicator") ? Need.COMMUNICATOR
                    : InstallChecks.strategy(System.getProperty(READ_STRATEGY_PROPERTY, "onThread"));
            InstallChecks.Quick quick = InstallChecks.quick(install, strategy);
            checks = quick.findings();
            Finding failed = quick.firstFailure();
            if (failed != null) {
                throw new UnsatisfiedLinkError(failed.oneLine());
            }
            for (Finding f : checks) {
                if (f.status() == Finding.Status.WARN) {
                    LOG.warn("HComm quick check: {}", f.oneLine());
                }
            }
            NativeLibrary lib = quick.library();
            // the endpoint API is the endpoint path's (CANN 8.5 has only the communicator path): bound apart
            Throwable endpointCause = bind(HcommLibrary.class, lib).orElse(null);
            if (endpointCause != null && strategy != Need.COMMUNICATOR) {
                throw endpointCause;
            }
            Throwable dataPlaneCause = bind(HcommDataPlaneLibrary.class, lib).orElse(null);
            Map<ReadStrategy.Kind, Throwable> strategyCauses = new EnumMap<>(ReadStrategy.Kind.class);
            Throwable onThread = bind(HcommOnThreadLibrary.class, lib).orElse(dataPlaneCause);
            if (onThread != null) {
                strategyCauses.put(ReadStrategy.Kind.ON_THREAD, onThread);
            }
            bind(HcommNbiLibrary.class, lib).ifPresent(t -> strategyCauses.put(ReadStrategy.Kind.NBI_FENCE, t));
            Throwable streamSyncCause = bind(HcommStreamLibrary.class, lib).orElse(null);
            Throwable communicatorCause = bind(HcclLibrary.class, lib).orElse(dataPlaneCause);
            checkStructSizes();
            HcommSoftLibrary soft = null;
            String version = "cann";
            Throwable aclCause;
            if (provider == Provider.SOFT) {
                Native.register(HcommAllocLibrary.class, lib);
                soft = Native.load(lib.getFile().getAbsolutePath(), HcommSoftLibrary.class);
                version = soft.HcommSoftVersion();
                Native.register(AclRuntime.class, lib);
                aclCause = null;
            } else {
                aclCause = bindAscendCl(install);
                if (streamSyncCause == null) {
                    streamSyncCause = aclCause;
                }
            }
            if (communicatorCause == null) {
                communicatorCause = aclCause; // the communicator path copies to and from the device with ACL
            }
            String source = install.library().describe();
            LOG.info("HComm provider {} loaded from {} (version {})", provider, source, version);
            return new State(provider, source, version, soft, streamSyncCause, strategyCauses, endpointCause,
                    communicatorCause, install, checks, null);
        } catch (Throwable t) { // UnsatisfiedLinkError, LinkageError, bad property: all mean "unavailable"
            LOG.warn("HComm library unavailable (provider {}): {}", provider, t.toString());
            return new State(provider, null, null, null, t, Map.of(), t, t, install, checks, t);
        }
    }

    /** Whether the install's SoC is an Atlas A2 or A3 (the communicator path), as far as it can be read. */
    private static boolean communicatorSoc(Install install) {
        try {
            String soc = InstallChecks.socName(install);
            return soc != null && (soc.startsWith("Ascend910B") || soc.startsWith("Ascend910_93"));
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            LOG.warn("HComm: the SoC could not be read ({}); {}=auto takes the endpoint API", e.toString(),
                    API_PROPERTY);
            return false;
        }
    }

    /**
     * The API the loader judged the install for: {@code endpoint} or {@code communicator} ({@code auto} decided by
     * the SoC before the quick checks); loads the library on the first call.
     */
    public static String api() {
        state();
        return chosenApi;
    }

    /** Binds one group of functions; returns why it could not (a function missing), or empty. */
    private static Optional<Throwable> bind(Class<?> group, NativeLibrary lib) {
        try {
            Native.register(group, lib);
            return Optional.empty();
        } catch (UnsatisfiedLinkError e) {
            return Optional.of(e);
        }
    }

    /** CANN: aclrtSynchronizeStream from libascendcl.so ({@link InstallChecks#ascendCl}); returns why not. */
    private static Throwable bindAscendCl(Install install) {
        try {
            Native.register(AclRuntime.class, InstallChecks.ascendCl(install));
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
        expectSize(new HcclCommConfig().size(), HcclCommConfig.SIZE, "HcclCommConfig");
        expectSize(new HcclChannelDesc().size(), HcclChannelDesc.SIZE, "HcclChannelDesc");
    }

    private static void expectSize(int actual, int expected, String name) {
        if (actual != expected) {
            throw new UnsatisfiedLinkError("ABI mismatch: sizeof(" + name + ") is " + actual + " in Java, expected "
                    + expected);
        }
    }
}
