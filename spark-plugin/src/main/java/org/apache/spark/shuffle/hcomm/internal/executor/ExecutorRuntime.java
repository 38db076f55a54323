package org.apache.spark.shuffle.hcomm.internal.executor;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.hcomm.internal.channels.StageChannels;
import org.apache.spark.shuffle.hcomm.internal.conf.ChannelSecret;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.shuffle.hcomm.internal.fetch.ReadResources;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.read.DirectoryCache;
import org.apache.spark.shuffle.hcomm.internal.read.ReadPlanner;
import org.apache.spark.shuffle.hcomm.internal.read.StageLeases;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;
import org.apache.spark.shuffle.hcomm.internal.write.MovedOutputs;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.transport.HcommTransport;
import org.hcomm.bridge.transport.LiveObjects;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportOptions;
import org.slf4j.Logger;

/**
 * Everything the HComm shuffle owns on one executor, wired together: the transport (endpoint), the send arena and
 * registered outputs ({@link MapOutputPublisher}), the receive buffer ({@link ReadResources}), the stage channels,
 * and what the shuffle manager's readers and writers get ({@link #planner()}, {@link #publisher()}). Started by the
 * executor component, closed at executor shutdown in the reverse order. When the HComm library cannot load (and
 * fallback is {@code auto}) it still runs, with no transport: every block then goes through Spark's fetch.
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
    private final Transport transport;
    private final ReadResources resources;
    private final MapOutputPublisher publisher;
    private final MovedOutputs moved;
    private final StageChannels channels;
    private final StageLeases leases;
    private final DirectoryCache directories;
    private final ReadPlanner planner;
    /** Orders every metrics report this executor sends (stage reports come from several threads). */
    private final Object reportLock = new Object();
    private ShuffleMetrics.Snapshot lastTaskReport; // guarded by reportLock
    private RpcEndpointRef agent;
    private volatile boolean closed;

    private ExecutorRuntime(PluginContext plugin, SparkConf conf, Fallback fallback, String host,
            Transport transport) {
        this.executorId = plugin.executorID();
        this.host = host;
        this.fallback = fallback;
        this.driver = new DriverClient(plugin);
        this.transport = transport;
        if (transport == null) {
            this.resources = null;
            this.publisher = null;
            this.moved = null;
            this.channels = null;
            this.leases = null;
            this.directories = null;
            this.planner = ReadPlanner.sparkOnly(executorId, fallback, metrics);
            return;
        }
        // what owns native memory or a thread, built in order; on a failure the ones built are closed, newest first
        ReadResources r = null;
        MapOutputPublisher p = null;
        StageChannels c = null;
        try {
            r = new ReadResources(transport, metrics, executorId, HcommConf.RECEIVE_BUFFER_SIZE.get(conf),
                    (int) (long) HcommConf.READ_CHUNK_SIZE.get(conf), HcommConf.MAX_BYTES_IN_FLIGHT.get(conf),
                    HcommConf.READ_TIMEOUT.get(conf));
            p = new MapOutputPublisher(transport, HcommConf.SEND_ARENA_SIZE.get(conf), metrics, driver);
            c = new StageChannels(transport, metrics, executorId, r::reclaim);
        } catch (RuntimeException | Error e) {
            for (AutoCloseable built : new AutoCloseable[] {p, r, transport}) {
                try {
                    if (built != null) {
                        built.close();
                    }
                } catch (Exception closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
        this.resources = r;
        this.publisher = p;
        this.channels = c;
        this.moved = new MovedOutputs(publisher, metrics);
        this.leases = new StageLeases(channels, driver, HcommConf.CHANNEL_SETUP_TIMEOUT.get(conf));
        this.directories = new DirectoryCache(driver);
        this.planner = new ReadPlanner(executorId, host, fallback, metrics, resources, leases, directories,
                new Blame(executorId, channels, resources));
    }

    /** Opens the transport (or records why it cannot), registers with the driver and starts the agent. */
    public static ExecutorRuntime start(PluginContext plugin, SparkConf conf, Map<String, String> fromDriver)
            throws Exception {
        HcommConf.validate(conf);
        String secret = ChannelSecret.resolve(conf, SparkEnv.get().securityManager(), fromDriver);
        String host = advertisedHost();
        Fallback fallback = Fallback.of(conf);
        Transport transport = openTransport(plugin, conf, fallback, host, secret);
        ExecutorRuntime rt = new ExecutorRuntime(plugin, conf, fallback, host, transport);
        try {
            SparkEnv env = SparkEnv.get();
            env.metricsSystem().registerSource(rt.metrics);
            if (transport != null) {
                rt.agent = env.rpcEnv().setupEndpoint(ExecutorAgent.NAME, new ExecutorAgent(env.rpcEnv(), rt));
                rt.driver.register(host, transport.endpointDescriptor(), transport.listenPort(), rt.agent);
                LOG.info("HComm shuffle on executor {}: {}", rt.executorId, transport.describe());
            }
            CURRENT.set(rt);
            return rt;
        } catch (Exception | Error e) {
            rt.close();
            throw e;
        }
    }

    private static Transport openTransport(PluginContext plugin, SparkConf conf, Fallback fallback, String host,
            String secret) {
        String provider = HcommConf.PROVIDER.get(conf);
        String path = HcommConf.LIBRARY_PATH.get(conf);
        System.setProperty(HcommNative.PROVIDER_PROPERTY, provider);
        System.setProperty(HcommNative.READ_STRATEGY_PROPERTY, HcommConf.READ_STRATEGY.get(conf));
        if (!path.isEmpty()) {
            System.setProperty(HcommNative.LIBRARY_PATH_PROPERTY, path);
        }
        Throwable why;
        try {
            if (host == null) { // the transport's failure: fallback `auto` fetches with Spark, `never` fails here
                throw new IllegalStateException("the executor started its plugins before Spark gave its block "
                        + "manager an id, so it cannot say where its HComm endpoint is");
            }
            InetAddress address = InetAddress.getByName(host);
            if (!(address instanceof Inet4Address)) {
                throw new IllegalStateException("host " + host + " resolves to " + address
                        + ", HComm host endpoints need IPv4");
            }
            return HcommTransport.open(new TransportOptions(address, "nbiFence".equals(HcommConf.READ_STRATEGY.get(
                    conf)), secret, HcommConf.duration(HcommConf.READ_TIMEOUT, conf),
                    HcommConf.duration(HcommConf.CHANNEL_SETUP_TIMEOUT, conf)));
        } catch (RuntimeException | IOException e) {
            why = e;
        }
        Throwable cause = why;
        fallback.fallBackOrFail(() -> new IllegalStateException("HComm is unavailable on executor "
                + plugin.executorID() + " (provider " + provider + "): " + cause.getMessage() + "; "
                + HcommConf.FALLBACK.key() + "=never forbids falling back to Spark's shuffle fetch", cause), null,
                () -> LOG.warn("HComm is unavailable on executor {} (provider {}): {}. Every shuffle block is fetched "
                        + "by Spark's transfer (set {}=never to make this an error)", plugin.executorID(), provider,
                        cause.toString(), HcommConf.FALLBACK.key()));
        return null;
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
        return transport == null ? 0 : transport.listenPort();
    }

    public ShuffleMetrics metrics() {
        return metrics;
    }

    public Fallback fallback() {
        return fallback;
    }

    /** What decides a reduce task's reads. */
    public ReadPlanner planner() {
        return planner;
    }

    /** What publishes map outputs for one-sided reads, or null without a transport. */
    public MapOutputPublisher publisher() {
        return publisher;
    }

    /** Receive-buffer chunks not free to lend (-1 without a transport). */
    public int chunksNotFree() {
        return resources == null ? -1 : resources.chunksNotFree();
    }

    public void unregisterShuffle(int shuffleId) {
        if (directories != null) {
            directories.forget(shuffleId);
            moved.release(shuffleId);
        }
    }

    // ---- told by the driver (ExecutorAgent) ----

    Messages.Moved publishLocal(Messages.PublishLocal ask) {
        return moved.publishLocal(ask);
    }

    void provision(Messages.ProvisionStage p) {
        if (channels != null) {
            channels.provision(new StageAttempt(p.stageId(), p.attempt()), p.peers());
        }
    }

    void endStage(Messages.EndStage e) {
        if (channels == null) {
            return;
        }
        StageAttempt stage = new StageAttempt(e.stageId(), e.attempt());
        leases.ended(stage);
        // reported by whichever thread destroys the channels: this one, the stage's last reader, or the poller;
        // snapshot and send under one lock, so the driver (which keeps the latest) never gets an older one last
        channels.end(stage, ended -> {
            synchronized (reportLock) {
                try {
                    driver.stageReport(stage, ended, metrics.snapshot());
                } catch (IOException ex) {
                    LOG.warn("Executor {} could not report the end of {}", executorId, stage, ex);
                }
            }
        });
    }

    /**
     * After each task (executor plugin). Without a transport this executor has no channels and is unknown to the
     * driver's stage plans, so no stage report ever carries its counters; it sends them here instead, when they
     * changed (so the driver sees the bytes its fallback fetched). Snapshot and send under one lock, so the driver
     * receives them in order.
     */
    void taskEnded() {
        if (transport != null || closed) {
            return;
        }
        synchronized (reportLock) {
            ShuffleMetrics.Snapshot now = metrics.snapshot();
            if (now.equals(lastTaskReport)) {
                return;
            }
            try {
                driver.metricsReport(now);
                lastTaskReport = now;
            } catch (IOException e) {
                LOG.warn("Executor {} could not report its shuffle metrics", executorId, e);
            }
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
        if (resources != null) {
            resources.stopLending(); // from here on readers go to Spark's fetch, as before any step below
        }
        List<Runnable> steps = new ArrayList<>();
        if (agent != null) {
            steps.add(() -> SparkEnv.get().rpcEnv().stop(agent));
        }
        if (transport != null) {
            steps.add(channels::close);
            steps.add(resources::close);
            steps.add(publisher::close);
            steps.add(transport::close);
            steps.add(() -> {
                LiveObjects left = transport.liveObjects();
                if (left != null && !left.isEmpty()) {
                    LOG.warn("Executor {}: native objects left after shutdown: {}", executorId, left);
                }
            });
        }
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
