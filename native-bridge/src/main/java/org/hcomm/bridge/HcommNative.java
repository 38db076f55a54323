package org.hcomm.bridge;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Install;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.AclEventLibrary;
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
import org.hcomm.bridge.raw.HcclCommLockLibrary;
import org.hcomm.bridge.raw.HcclWriteLibrary;
import org.hcomm.bridge.raw.HcommOnThreadLibrary;
import org.hcomm.bridge.raw.HcommStreamLibrary;
import org.hcomm.bridge.raw.HcommSymbol.Need;
import org.hcomm.bridge.raw.HcommSoftCounters;
import org.hcomm.bridge.raw.HcommSoftLibrary;
import org.hcomm.bridge.raw.ThreadConfig;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.read.ReadStrategy;

/**
 * Finds, loads and checks the HComm library, once per process (never in a static initializer, and never throwing
 * from one): as the first {@link #load(LoadOptions)} says, or with {@link LoadOptions#DEFAULTS} when the bridge is
 * used before any call to it.
 *
 * <p>Provider: {@code soft} binds the project's {@code libhcomm_soft.so}; {@code cann} binds CANN's
 * {@code libhcomm.so} and takes {@code aclrtSynchronizeStream} from {@code libascendcl.so}. Where the file is looked
 * for: {@link Install}.
 *
 * <p>Before anything is bound, the doctor's quick checks run ({@link InstallChecks#quick}): the library opens, it
 * exports every function the options' API and read strategy need, and its struct layout is the binding's (soft
 * HComm's version names {@code abi-v4}; a CANN install's headers are compiled against when present). API
 * {@code auto} is decided by the SoC first, as the doctor does. The first failed check leaves the bridge unavailable
 * with that check's line as {@link #unavailabilityCause()}, so an install that does not fit is refused before the
 * first native call that passes a struct. Then the functions are bound by group
 * ({@link org.hcomm.bridge.raw.HcommSymbol#binding()}): each read strategy apart, so an install lacking one
 * strategy's functions still serves the other ({@link #ensureStrategy}).
 *
 * <p>Thread-safe. The result is fixed for the life of the process.
 */
public final class HcommNative {
    private static final BridgeLog LOG = BridgeLog.of(HcommNative.class);

    private record State(LoadOptions options, Api api, String source, String version, HcommSoftLibrary soft,
            Throwable streamSyncCause, Map<ReadStrategy.Kind, Throwable> strategyCauses, Throwable endpointCause,
            Throwable communicatorCause, boolean commLock, Throwable aclEventsCause, Throwable writeCause, Install install,
            List<Finding> checks, Throwable cause) {}

    private static volatile State state;

    private HcommNative() {}

    /**
     * Loads the library as {@code options} say, unless it was loaded before: the first load holds for the life of
     * the process, and a later call with other options changes nothing but a warning. Returns {@link #isAvailable()}.
     */
    public static boolean load(LoadOptions options) {
        State s = state(options);
        if (!s.options.equals(options)) {
            LOG.warn("HComm library loaded before with {}; {} changes nothing (the library loads once per process)",
                    s.options, options);
        }
        return s.cause == null;
    }

    /** The options the library was loaded with; loads it with the defaults when nothing loaded it yet. */
    public static LoadOptions options() {
        return state().options;
    }

    /** True when the library loaded and passed the quick checks. Loads it on the first call. */
    public static boolean isAvailable() {
        return state().cause == null;
    }

    /** Why the library is unavailable, or {@code null} when it is available. */
    public static Throwable unavailabilityCause() {
        return state().cause;
    }

    /** What the loader found on this host (null only when looking for the library failed). */
    public static Install install() {
        return state().install;
    }

    /** The quick checks' findings of the load (empty when they did not run). */
    public static List<Finding> quickChecks() {
        return state().checks;
    }

    /** The provider of the load; loads the library on the first call. */
    public static Provider provider() {
        return state().options.provider();
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

    /**
     * Whether the library has {@code HcommAcquireComm}/{@code HcommReleaseComm} (optional: soft HComm has not), which
     * {@link org.hcomm.bridge.communicator.Communicator#claim()} then calls around its Java lock.
     */
    public static boolean hasCommLock() {
        State s = state();
        return s.cause == null && s.commLock;
    }

    /** Throws {@link IllegalStateException} (cause chained) unless the library is available. */
    static void ensureAvailable() {
        State s = state();
        if (s.cause != null) {
            throw new IllegalStateException("HComm library unavailable (provider " + s.options.provider() + "): "
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

    /**
     * Throws {@link IllegalStateException} (cause chained) unless the optional ACL group of events, stream abort,
     * asynchronous copies and pinned host memory ({@link AclEventLibrary}) is bound.
     */
    public static void ensureAclEvents() {
        ensureAvailable();
        Throwable cause = state().aclEventsCause;
        if (cause != null) {
            throw new IllegalStateException("ACL events, stream abort and pinned host memory are unavailable in "
                    + state().source + ": " + cause.getMessage(), cause);
        }
    }

    /** Throws {@link IllegalStateException} (cause chained) unless {@code HcommWriteOnThread} is bound (optional). */
    public static void ensureOneSidedWrite() {
        ensureCommunicator();
        Throwable cause = state().writeCause;
        if (cause != null) {
            throw new IllegalStateException("HcommWriteOnThread is unavailable in " + state().source + ": "
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
        return s != null ? s : state(LoadOptions.DEFAULTS);
    }

    private static State state(LoadOptions options) {
        State s = state;
        if (s == null) {
            synchronized (HcommNative.class) {
                s = state;
                if (s == null) {
                    s = loadNow(options);
                    state = s;
                }
            }
        }
        return s;
    }

    private static State loadNow(LoadOptions options) {
        Provider provider = options.provider();
        Install install = null;
        List<Finding> checks = List.of();
        Api api = Api.ENDPOINT;
        try {
            install = Install.discover(provider, options.libraryPath());
            // the SoC decides auto before anything is judged, as the doctor does
            api = options.api() == Api.AUTO ? Api.AUTO.resolve(socName(install)) : options.api();
            Need strategy = api == Api.COMMUNICATOR ? Need.COMMUNICATOR : options.strategyNeed();
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
            boolean commLock = bind(HcclCommLockLibrary.class, lib).isEmpty(); // optional: HcommAcquire/ReleaseComm
            Throwable writeCause = bind(HcclWriteLibrary.class, lib).orElse(null); // optional: HcommWriteOnThread
            checkStructSizes();
            HcommSoftLibrary soft = null;
            String version = "cann";
            Throwable aclCause;
            Throwable aclEventsCause; // optional: events, stream abort, async copies, pinned host memory
            if (provider == Provider.SOFT) {
                Native.register(HcommAllocLibrary.class, lib);
                soft = Native.load(lib.getFile().getAbsolutePath(), HcommSoftLibrary.class);
                version = soft.HcommSoftVersion();
                Native.register(AclRuntime.class, lib);
                aclCause = null;
                aclEventsCause = bind(AclEventLibrary.class, lib).orElse(null);
            } else {
                aclCause = bindAscendCl(install);
                aclEventsCause = aclCause != null ? aclCause
                        : bind(AclEventLibrary.class, InstallChecks.ascendCl(install)).orElse(null);
                if (streamSyncCause == null) {
                    streamSyncCause = aclCause;
                }
            }
            if (communicatorCause == null) {
                communicatorCause = aclCause; // the communicator path copies to and from the device with ACL
            }
            String source = install.library().describe();
            LOG.info("HComm provider {} loaded from {} (version {})", provider, source, version);
            return new State(options, api, source, version, soft, streamSyncCause, strategyCauses, endpointCause,
                    communicatorCause, commLock, aclEventsCause, writeCause, install, checks, null);
        } catch (Throwable t) { // UnsatisfiedLinkError, LinkageError: both mean "unavailable"
            LOG.warn("HComm library unavailable (provider {}): {}", provider, t.toString());
            return new State(options, api, null, null, null, t, Map.of(), t, t, false, t, t, install, checks, t);
        }
    }

    /** The install's SoC, or null when it cannot be read (api auto then takes the endpoint API). */
    private static String socName(Install install) {
        try {
            return InstallChecks.socName(install);
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            LOG.warn("HComm: the SoC could not be read ({}); api auto takes the endpoint API", e.toString());
            return null;
        }
    }

    /**
     * The API the loader judged the install for: {@link Api#ENDPOINT} or {@link Api#COMMUNICATOR} ({@code auto}
     * decided by the SoC before the quick checks); loads the library on the first call.
     */
    public static Api api() {
        return state().api;
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
