package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.spark.SparkEnv;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.hcomm.internal.conf.ChannelSecret;
import org.apache.spark.shuffle.hcomm.internal.channels.Roster;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.read.ReadPlanner;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.window.WindowServer;
import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.transport.LiveObjects;
import org.hcomm.bridge.transport.Transport;
import org.slf4j.Logger;

/**
 * Everything the HComm shuffle owns on one executor, wired together: the transport (endpoint), the send arena and
 * registered outputs ({@link MapOutputPublisher}), the receive buffer ({@link ReadResources}), the stage channels
 * (together {@link OneSidedParts}, by communicator in {@link PartsGenerations}), and what the shuffle manager's
 * readers and writers get ({@link #planner()}, {@link #publisher()}). Started by the executor component, closed at
 * executor shutdown in the reverse order. When the HComm library cannot load (and fallback is {@code auto}) it still
 * runs, with no transport: every block then goes through Spark's fetch.
 */
public final class ExecutorRuntime implements AutoCloseable {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    /**
     * Where the shuffle manager finds the runtime of its JVM. Spark creates the plugin and the ShuffleManager
     * separately and gives neither a handle on the other (which starts first differs between Spark lines), so this
     * is the executor's one piece of static state: set at start, cleared at close, read lazily by the manager.
     */
    private static final AtomicReference<ExecutorRuntime> CURRENT = new AtomicReference<>();

    private final String executorId;
    private final String host;
    private final Fallback fallback;
    private final ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
    private final DriverClient driver;
    /** The peers the driver told of: kept across communicators. */
    private final Roster roster;
    /** The communicator path's member (null on the endpoint path). */
    private final CommunicatorMember member;
    /** Its part in forming communicators and taking them up (null on the endpoint path). */
    private final CommunicatorSwitch communicators;
    /**
     * What reads one-sidedly: built at start (endpoint path) or for each communicator that formed (none until
     * then), and what was built for one not yet ready.
     */
    private final PartsGenerations parts;
    private final ReadPlanner sparkOnly;
    /** Spark's fetch alone in the communicator path's start-up window (its bytes are not a fallback's). */
    private final ReadPlanner beforeCommunicator;
    private final MetricsReports reports;
    private RpcEndpointRef agent;
    private volatile boolean closed;
    /** This executor's window server on the communicator path, else null. */
    private final WindowServer windowServer;

    private ExecutorRuntime(PluginContext plugin, HcommSettings settings, String host, Transport transport,
            CommunicatorMember member) {
        this.executorId = plugin.executorID();
        this.roster = new Roster(executorId);
        this.host = host;
        this.fallback = settings.fallback();
        this.driver = new DriverClient(plugin, metrics);
        this.reports = new MetricsReports(executorId, driver, metrics);
        this.member = member;
        this.sparkOnly = ReadPlanner.sparkOnly(executorId, fallback, metrics);
        this.beforeCommunicator = ReadPlanner.beforeCommunicator(executorId, fallback, metrics);
        this.parts = new PartsGenerations(transport == null ? null
                : new OneSidedParts(transport, settings, roster, host, metrics, driver));
        this.windowServer = member != null
                ? new WindowServer(executorId, host, metrics, settings.readTimeout().toMillis(), member.secret())
                : null;
        this.communicators = member == null ? null : new CommunicatorSwitch(executorId, member, parts, settings,
                host, metrics, driver, () -> closed, windowServer, this::reportOutsideTasks);
    }

    /**
     * Opens the transport (or records why it cannot), registers with the driver and starts the agent. On the
     * communicator path there is no transport yet: the executor registers as a candidate member and reads with
     * Spark's fetch until the driver formed its communicator ({@link CommunicatorSwitch}); one that cannot take part
     * ({@link CommunicatorMember#preflight}: its HCCL_OP_EXPANSION_MODE or its NPU) does not register, and its reduce
     * tasks fall back or fail with the reason, as after a failed join. {@code settings} are the process's, which the
     * shuffle manager shares.
     */
    public static ExecutorRuntime start(PluginContext plugin, HcommSettings settings, Map<String, String> fromDriver)
            throws Exception {
        String secret = ChannelSecret.resolve(settings, SparkEnv.get().securityManager(), fromDriver);
        String host = advertisedHost();
        CommunicatorMember member = null;
        Transport transport = null;
        String unusable = null; // why this executor cannot take part in communicators, found before any init
        if (CommunicatorMember.chooseApi(settings) == Api.COMMUNICATOR && HcommNative.isAvailable() && host != null) {
            try {
                HcommNative.ensureCommunicator();
                int device = Messages.RegisterExecutor.NO_DEVICE;
                try {
                    device = CommunicatorMember.device(plugin, settings);
                } catch (CommunicatorMember.UnusableDevice e) {
                    unusable = e.getMessage();
                }
                member = new CommunicatorMember(settings, plugin.executorID(), host, device, secret);
                if (unusable == null) {
                    unusable = member.preflight();
                }
            } catch (RuntimeException e) {
                TransportStart.unavailable(plugin, settings, e);
            }
        } else {
            transport = TransportStart.endpoint(plugin, settings, host, secret);
        }
        ExecutorRuntime rt = new ExecutorRuntime(plugin, settings, host, transport, member);
        try {
            SparkEnv env = SparkEnv.get();
            env.metricsSystem().registerSource(rt.metrics);
            if (transport != null || member != null) {
                rt.agent = env.rpcEnv().setupEndpoint(ExecutorAgent.NAME, new ExecutorAgent(env.rpcEnv(), rt));
            }
            if (transport != null) {
                rt.driver.register(host, transport.endpointDescriptor(), transport.listenPort(), rt.agent);
                LOG.info("HComm shuffle on executor {}: {}", rt.executorId, transport.describe());
            } else if (member != null && unusable != null) {
                // not a candidate member (no communicator waits for it); its reduce tasks fall back or fail with
                // this reason, as after a failed join (planner)
                rt.parts.failed(unusable);
                LOG.info("HComm shuffle on executor {}: the communicator path, but it joins no communicator: {}",
                        rt.executorId, unusable);
            } else if (member != null) {
                rt.driver.registerForCommunicator(host, member.device(),
                        rt.windowServer == null ? 0 : rt.windowServer.port(), rt.agent);
                LOG.info("HComm shuffle on executor {}: the communicator path (SoC {}, NPU {}); Spark's fetch until "
                        + "its communicator forms", rt.executorId, org.hcomm.bridge.communicator.Acl.socName(),
                        member.device() >= 0 ? Integer.toString(member.device()) : "assigned by the driver");
            }
            CURRENT.set(rt);
            return rt;
        } catch (Exception | Error e) {
            rt.close();
            throw e;
        }
    }

    /**
     * The executor's host as its block manager advertises it (an executor's RpcEnv has no address), or null before
     * Spark gave the block manager its id. Executors of a cluster initialise their block manager before their
     * plugins on every Spark line; the executor component never starts a runtime in local mode, where Spark gives
     * the block manager its id only after the plugins started.
     */
    private static String advertisedHost() {
        BlockManagerId id = SparkEnv.get().blockManager().blockManagerId();
        return id == null ? null : id.host();
    }

    /** This executor's part in forming communicators, or null off the communicator path. */
    CommunicatorSwitch communicators() {
        return communicators;
    }

    /** The parts this executor reads with, by generation (tests hold its monitor to stall a switch). */
    PartsGenerations generations() {
        return parts;
    }

    /** The executor runtime of this JVM, or null when the plugin is not active here. */
    public static ExecutorRuntime current() {
        return CURRENT.get();
    }

    String executorId() {
        return executorId;
    }

    /** This executor's soft NIC: its host and port (0 without a transport). */
    public String host() {
        return host;
    }

    public int listenPort() {
        OneSidedParts p = parts.current();
        return p == null ? 0 : p.transport.listenPort();
    }

    /** The NPU (logical id) this executor's latest communicator is on, or -1 before it joined one (or off the path). */
    public int communicatorDevice() {
        return member == null ? -1 : member.joinedDevice();
    }

    public ShuffleMetrics metrics() {
        return metrics;
    }

    public Fallback fallback() {
        return fallback;
    }

    /**
     * What decides a reduce task's reads: Spark's fetch alone until one-sided reads are possible. A task never waits
     * for a communicator that is forming (docs/ARCHITECTURE.md, "The communicator path", says why).
     */
    public ReadPlanner planner() {
        OneSidedParts p = parts.current();
        if (p == null && member != null) {
            metrics.tasksBeforeCommunicator.inc(); // no task waits for a communicator
            String failed = parts.failure();
            if (failed != null) { // not the start-up window: the communicator this executor was to join failed
                fallback.fallBackOrFail(() -> new IllegalStateException(failed + "; " + HcommConf.FALLBACK.key()
                        + "=never forbids Spark's shuffle fetch"), "communicator failed", () -> LOG.warn(
                                "{}. Every shuffle block is fetched by Spark's transfer (set {}=never to make this an "
                                        + "error)", failed, HcommConf.FALLBACK.key()));
                return sparkOnly;
            }
            return beforeCommunicator;
        }
        return p == null ? sparkOnly : p.planner;
    }

    /** Every publisher whose arena may hold outputs, the current one first; not a copy (read it, do not change it). */
    public List<MapOutputPublisher> publishers() {
        return parts.publishers();
    }

    /** What publishes map outputs for one-sided reads, or null while there is nothing to read them with. */
    public MapOutputPublisher publisher() {
        OneSidedParts p = parts.current();
        return p == null ? null : p.publisher;
    }

    /**
     * Receive-buffer chunks not free to lend (endpoint path), or receive windows leased (communicator path); -1
     * without a transport.
     */
    public int chunksNotFree() {
        OneSidedParts p = parts.current();
        if (p != null && p.onCommunicator()) { // its receive windows: none out once nothing reads
            var w = p.windowReads.windows();
            return w.layout().windows() - w.freeReceiveWindows();
        }
        return p == null ? -1 : p.resources.chunksNotFree();
    }

    public void unregisterShuffle(int shuffleId) {
        OneSidedParts p = parts.current();
        if (p != null && !p.onCommunicator()) {
            p.directories.forget(shuffleId);
            p.moved.release(shuffleId);
        }
    }

    // ---- told by the driver (ExecutorAgent) ----

    /**
     * Publishes outputs of this executor that the directory lacks, in the newest communicator it has parts in: one
     * that formed but that the driver has not yet said is ready counts, as its other members may already read in it.
     */
    Messages.Moved publishLocal(Messages.PublishLocal ask) {
        OneSidedParts p = parts.newest();
        if (p != null && p.onCommunicator()) {
            return new Messages.Moved(List.of(), "executor " + executorId + " stages nothing: its HCCL buffer is a window");
        }
        return p == null ? new Messages.Moved(List.of(), "no one-sided reads on executor " + executorId + " yet")
                : p.moved.publishLocal(ask);
    }

    void provision(Messages.ProvisionStage msg) {
        OneSidedParts p = parts.current();
        if (p != null && !p.onCommunicator()) {
            p.channels.provision(new StageAttempt(msg.stageId(), msg.attempt()));
        }
    }

    /** The driver's news of peers: kept, and the stage attempts going get channels to those that joined. */
    void peers(Messages.Peers news) {
        List<Messages.Peer> joined = roster.apply(news);
        OneSidedParts p = parts.current();
        if (p != null && !p.onCommunicator()) {
            p.channels.peersJoined(joined);
        }
    }

    void endStage(Messages.EndStage e) {
        OneSidedParts p = parts.current();
        if (p == null || p.onCommunicator()) {
            return;
        }
        StageAttempt stage = new StageAttempt(e.stageId(), e.attempt());
        p.leases.ended(stage);
        // reported by whichever thread destroys the channels: this one, the stage's last reader, or the poller
        p.channels.end(stage, ended -> reports.stageEnded(stage, ended));
    }

    /**
     * After each task (executor plugin, on the task's thread): without one-sided parts, or with a communicator's
     * (no stage channels, so no stage report), its counters go to the driver here, with the task's stage attempt.
     */
    void taskEnded() {
        OneSidedParts p = parts.current();
        if ((p == null || p.onCommunicator()) && !closed) {
            org.apache.spark.TaskContext task = org.apache.spark.TaskContext.get();
            reports.taskEnded(task == null ? new StageAttempt(-1, -1)
                    : new StageAttempt(task.stageId(), task.stageAttemptNumber()));
        }
    }

    /**
     * Sends the counters now when no stage report would (no parts, or a communicator's): after something changed them
     * outside any task, such as a retired communicator destroyed.
     */
    private void reportOutsideTasks() {
        OneSidedParts p = parts.current();
        if ((p == null || p.onCommunicator()) && !closed) {
            reports.taskEnded(new StageAttempt(-1, -1));
        }
    }

    /** Closes in the order HComm needs; reports native objects left behind. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        CURRENT.compareAndSet(this, null);
        OneSidedParts p = parts.current();
        OneSidedParts built = parts.close();
        if (p != null && !p.onCommunicator()) {
            p.resources.stopLending(); // from here on readers go to Spark's fetch, as before any step below
        }
        List<Runnable> steps = new ArrayList<>();
        steps.add(driver::close); // what was published and not yet told goes out first
        if (agent != null) {
            steps.add(() -> SparkEnv.get().rpcEnv().stop(agent));
        }
        if (windowServer != null) {
            steps.add(windowServer::close); // no new exchange; those under way end with their communicator below
        }
        if (p != null) {
            steps.addAll(p.closeSteps(() -> {
                LiveObjects left = p.leftOver();
                if (left != null && !left.isEmpty()) {
                    LOG.warn("Executor {}: native objects left after shutdown: {}", executorId, left);
                }
            }));
            if (member != null) {
                steps.add(metrics.communicatorsDestroyed::inc); // the transport's close destroyed the communicator
            }
        }
        if (built != null) {
            steps.addAll(built.closeSteps(metrics.communicatorsDestroyed::inc));
        }
        steps.addAll(parts.retiringCloses()); // earlier communicators still in their retire wait: closed now
        runSteps(steps);
    }

    private void runSteps(List<Runnable> steps) {
        runSteps(executorId, steps);
    }

    /** Runs every step, each even when one before failed; logs the failures. */
    static void runSteps(String executorId, List<Runnable> steps) {
        RuntimeException failure = null;
        for (Runnable step : steps) {
            try {
                step.run();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            LOG.warn("Executor {}: failure while closing the HComm shuffle", executorId, failure);
        }
    }
}
