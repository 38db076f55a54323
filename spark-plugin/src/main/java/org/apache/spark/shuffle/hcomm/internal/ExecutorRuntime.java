package org.apache.spark.shuffle.hcomm.internal;

import java.io.File;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskKilledException;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.transport.HcommTransport;
import org.hcomm.bridge.transport.LiveObjects;
import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportException;
import org.hcomm.bridge.transport.TransportOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the HComm shuffle owns on one executor: the transport (endpoint), the send arena and mapped outputs
 * ({@link MapOutputPublisher}), the receive buffer, the stage channels and the directory cache. Started by the
 * executor plugin, used by the shuffle manager's readers and writers, closed at executor shutdown in the reverse
 * order. When the HComm library cannot load (and fallback is {@code auto}) it still runs, with no transport:
 * every block then goes through Spark's fetch.
 */
public final class ExecutorRuntime implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorRuntime.class);
    /**
     * How long a reader whose read failed waits for the driver's end of its stage attempt before it blames the
     * owner: the end reaches the executors at about the same time, and an owner that hears it first destroys its
     * ends of the attempt's channels under the reads of tasks still running in it.
     */
    private static final long STAGE_END_GRACE_MS = 2_000;

    private final String executorId;
    /** This executor's host as its block manager advertises it (an owner with another one is on another host). */
    private final String host;
    private final PluginContext plugin;
    private final boolean fallbackNever;
    private final long setupTimeoutMs;
    private final long readTimeoutMs;
    private final long maxBytesInFlight;
    private final ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
    private final Transport transport;
    private final Region receiveRegion;
    private final ReceiveBuffer receive;
    private final MapOutputPublisher publisher;
    private final StageChannels channels;
    private final ConcurrentLinkedQueue<ReadBatch> idleBatches = new ConcurrentLinkedQueue<>();
    private final Map<Integer, ShuffleDirectory> directories = new ConcurrentHashMap<>();
    /** Map outputs that moved to this executor and were published ("shuffle/mapId"), so each is published once. */
    private final Map<String, Messages.Published> movedIn = new ConcurrentHashMap<>();
    /** Shuffles this executor released (Spark unregistered them): never published late. Guarded by movedIn. */
    private final Set<Integer> released = new java.util.HashSet<>();
    private final Set<StageChannels.StageKey> ensured = ConcurrentHashMap.newKeySet();
    /** Orders every metrics report this executor sends (stage reports come from several threads). */
    private final Object reportLock = new Object();
    private ShuffleMetrics.Snapshot lastTaskReport; // guarded by reportLock
    private RpcEndpointRef agent;
    private volatile boolean closed;

    /** What a reduce task borrows for its one-sided reads. */
    record ReadLease(List<ReceiveBuffer.Chunk> chunks, ReadBatch[] batches) {
    }

    private ExecutorRuntime(PluginContext plugin, SparkConf conf, String host, Transport transport) {
        this.executorId = plugin.executorID();
        this.host = host;
        this.plugin = plugin;
        this.fallbackNever = "never".equals(HcommConf.FALLBACK.get(conf));
        this.setupTimeoutMs = HcommConf.CHANNEL_SETUP_TIMEOUT.get(conf);
        this.readTimeoutMs = HcommConf.READ_TIMEOUT.get(conf);
        this.maxBytesInFlight = HcommConf.MAX_BYTES_IN_FLIGHT.get(conf);
        this.transport = transport;
        if (transport != null) {
            Region r = null;
            MapOutputPublisher p = null;
            try {
                r = transport.allocate("hcomm-receive-buffer", HcommConf.RECEIVE_BUFFER_SIZE.get(conf));
                p = new MapOutputPublisher(transport, HcommConf.SEND_ARENA_SIZE.get(conf), metrics);
            } catch (RuntimeException e) {
                transport.close();
                throw e;
            }
            this.receiveRegion = r;
            this.receive = new ReceiveBuffer(r, (int) (long) HcommConf.READ_CHUNK_SIZE.get(conf));
            this.publisher = p;
            this.channels = new StageChannels(transport, metrics, executorId, this::reclaim);
        } else {
            this.receiveRegion = null;
            this.receive = null;
            this.publisher = null;
            this.channels = null;
        }
    }

    /** Opens the transport (or records why it cannot), registers with the driver and starts the agent. */
    public static ExecutorRuntime start(PluginContext plugin, SparkConf conf, Map<String, String> fromDriver)
            throws Exception {
        HcommConf.validate(conf);
        String secret = ChannelSecret.resolve(conf, SparkEnv.get().securityManager(), fromDriver);
        String host = advertisedHost();
        Transport transport = openTransport(plugin, conf, host, secret);
        ExecutorRuntime rt = new ExecutorRuntime(plugin, conf, host, transport);
        try {
            SparkEnv env = SparkEnv.get();
            env.metricsSystem().registerSource(rt.metrics);
            if (transport != null) {
                rt.agent = env.rpcEnv().setupEndpoint(ExecutorAgent.NAME, new ExecutorAgent(env.rpcEnv(), rt));
                plugin.ask(Wire.pack(new Messages.RegisterExecutor(rt.executorId, rt.host,
                        transport.endpointDescriptor(), transport.listenPort()), rt.agent));
                LOG.info("HComm shuffle on executor {}: {}", rt.executorId, transport.describe());
            }
            return rt;
        } catch (Exception | Error e) {
            rt.close();
            throw e;
        }
    }

    private static Transport openTransport(PluginContext plugin, SparkConf conf, String host, String secret) {
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
        if ("never".equals(HcommConf.FALLBACK.get(conf))) {
            throw new IllegalStateException("HComm is unavailable on executor " + plugin.executorID() + " (provider "
                    + provider + "): " + why.getMessage() + "; " + HcommConf.FALLBACK.key()
                    + "=never forbids falling back to Spark's shuffle fetch", why);
        }
        LOG.warn("HComm is unavailable on executor {} (provider {}): {}. Every shuffle block is fetched by Spark's "
                + "transfer (set {}=never to make this an error)", plugin.executorID(), provider, why.toString(),
                HcommConf.FALLBACK.key());
        return null;
    }

    /**
     * The executor's host as its block manager advertises it (an executor's RpcEnv has no address). Executors of a
     * cluster initialise their block manager before their plugins on every Spark line; the executor component never
     * starts a runtime in local mode, where Spark gives the block manager its id only after the plugins started.
     */
    private static String advertisedHost() {
        BlockManagerId id = SparkEnv.get().blockManager().blockManagerId();
        return id == null ? null : id.host();
    }

    String executorId() {
        return executorId;
    }

    String host() {
        return host;
    }

    long readTimeoutMs() {
        return readTimeoutMs;
    }

    /** The port of this executor's soft NIC listener (0 without a transport). */
    int listenPort() {
        return transport == null ? 0 : transport.listenPort();
    }

    ShuffleMetrics metrics() {
        return metrics;
    }

    ReceiveBuffer receiveBuffer() {
        return receive;
    }

    boolean canRead() {
        return transport != null && !closed;
    }

    boolean fallbackNever() {
        return fallbackNever;
    }

    // ---- map side ----

    /** Publishes a committed map output (Spark's data and index files) and tells the driver where it is. */
    void publish(int shuffleId, long mapId, long[] partitionLengths, File dataFile, File indexFile) throws Exception {
        if (publisher == null) {
            return;
        }
        plugin.ask(Wire.pack(publisher.publish(shuffleId, mapId, partitionLengths, dataFile, indexFile, executorId)));
    }

    /**
     * Publishes map outputs that moved to this executor (Spark migrated their files here when it decommissioned
     * their first owner) from the files Spark keeps for them, once each; answers the driver's {@code PublishLocal}.
     */
    Messages.Moved publishLocal(Messages.PublishLocal ask) {
        synchronized (movedIn) { // against unregisterShuffle: nothing is published for a shuffle being released
            return publishLocalLocked(ask);
        }
    }

    private Messages.Moved publishLocalLocked(Messages.PublishLocal ask) {
        List<Messages.Published> done = new ArrayList<>();
        StringBuilder missing = new StringBuilder();
        for (long mapId : ask.mapIds()) {
            String key = ask.shuffleId() + "/" + mapId;
            try {
                Messages.Published p = movedIn.get(key);
                if (p == null && publisher != null && !released.contains(ask.shuffleId())) {
                    IndexShuffleBlockResolver resolver =
                            (IndexShuffleBlockResolver) SparkEnv.get().shuffleManager().shuffleBlockResolver();
                    File index = resolver.getIndexFile(ask.shuffleId(), mapId, scala.Option.empty());
                    File data = resolver.getDataFile(ask.shuffleId(), mapId, scala.Option.empty());
                    if (index.isFile() && data.isFile()) {
                        p = publisher.publish(ask.shuffleId(), mapId, lengthsOf(index), data, index, executorId);
                        movedIn.put(key, p);
                        metrics.outputsPublishedLate.inc();
                    }
                }
                if (p != null) {
                    done.add(p);
                } else {
                    missing.append(missing.length() == 0 ? "" : ", ").append("map ").append(mapId);
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("Executor {} could not publish map output {} of shuffle {} moved to it", executorId, mapId,
                        ask.shuffleId(), e);
                missing.append(missing.length() == 0 ? "" : ", ").append("map ").append(mapId).append(" (")
                        .append(e).append(')');
            }
        }
        return new Messages.Moved(done, missing.length() == 0 ? null : missing.toString());
    }

    /** The partition lengths of Spark's index file (numPartitions + 1 big-endian offsets). */
    private static long[] lengthsOf(File index) throws IOException {
        try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(
                new java.io.FileInputStream(index)))) {
            long entries = index.length() / 8;
            if (entries < 1 || index.length() % 8 != 0) {
                throw new IOException("not an index file: " + index + " (" + index.length() + " bytes)");
            }
            long[] lengths = new long[(int) entries - 1];
            long prev = in.readLong();
            for (int i = 0; i < lengths.length; i++) {
                long next = in.readLong();
                lengths[i] = next - prev;
                prev = next;
            }
            return lengths;
        }
    }

    /** The algorithm of Spark's shuffle checksums (its writers store one per partition), or null when they are off. */
    String checksumAlgorithm() {
        var config = org.apache.spark.internal.config.package$.MODULE$;
        SparkConf conf = SparkEnv.get().conf();
        return (Boolean) conf.get(config.SHUFFLE_CHECKSUM_ENABLED()) ? conf.get(config.SHUFFLE_CHECKSUM_ALGORITHM())
                : null;
    }

    /** Spark's corruption diagnosis by the owner's block manager (SPARK-36206): a {@code Cause}. */
    Object diagnoseCorruption(BlockManagerId owner, int shuffleId, long mapId, int reduceId, long checksum,
            String algorithm) {
        return SparkEnv.get().blockManager().blockStoreClient().diagnoseCorruption(owner.host(), owner.port(),
                owner.executorId(), shuffleId, mapId, reduceId, checksum, algorithm);
    }

    /** The map outputs for which the reader asks the tracker's owner to publish what moved to it. */
    ShuffleDirectory publishMoved(int shuffleId, String ownerId, long[] mapIds) {
        try {
            Messages.ShuffleLocations l = (Messages.ShuffleLocations) Wire.reply(plugin.ask(Wire.pack(
                    new Messages.PublishMoved(shuffleId, ownerId, mapIds))));
            ShuffleDirectory d = ShuffleDirectory.of(l);
            directories.put(shuffleId, d);
            return d;
        } catch (Exception e) {
            LOG.warn("Executor {} could not ask for the moved map outputs of shuffle {} on executor {}", executorId,
                    shuffleId, ownerId, e);
            return directory(shuffleId);
        }
    }

    public void unregisterShuffle(int shuffleId) {
        directories.remove(shuffleId);
        synchronized (movedIn) {
            released.add(shuffleId);
            movedIn.keySet().removeIf(k -> k.startsWith(shuffleId + "/"));
            if (publisher != null) {
                publisher.release(shuffleId);
            }
        }
    }

    // ---- reduce side ----

    ShuffleDirectory directory(int shuffleId) {
        ShuffleDirectory d = directories.get(shuffleId);
        return d != null ? d : refreshDirectory(shuffleId);
    }

    ShuffleDirectory refreshDirectory(int shuffleId) {
        try {
            Messages.ShuffleLocations l = (Messages.ShuffleLocations) Wire.reply(plugin.ask(Wire.pack(
                    new Messages.LookupShuffle(shuffleId))));
            ShuffleDirectory d = ShuffleDirectory.of(l);
            directories.put(shuffleId, d);
            return d;
        } catch (Exception e) {
            LOG.warn("Executor {} could not look up shuffle {} on the driver", executorId, shuffleId, e);
            return ShuffleDirectory.EMPTY;
        }
    }

    /** Makes sure the stage attempt's channels are (being) provisioned, and holds them until endStageRead. */
    boolean beginStageRead(StageChannels.StageKey stage) {
        if (!channels.acquire(stage)) {
            return false;
        }
        if (ensured.add(stage)) {
            try {
                plugin.ask(Wire.pack(new Messages.EnsureStage(stage.stageId(), stage.attempt(), executorId)));
            } catch (Exception e) {
                LOG.warn("Executor {} could not ask the driver for the channels of {}", executorId, stage, e);
            }
        }
        return true;
    }

    void endStageRead(StageChannels.StageKey stage) {
        channels.release(stage);
    }

    /**
     * Whether a read of {@code stage} failed because the stage attempt ended (waiting up to a short grace for the
     * driver's word): then the task is a zombie of a failed attempt, and the owner it read from is not to blame.
     */
    boolean stageEnded(StageChannels.StageKey stage) {
        try {
            return channels != null && channels.awaitEnd(stage, STAGE_END_GRACE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * How a task fails whose stage attempt ended while it read: killed, blaming no executor. A fetch failure would
     * name an owner that only destroyed its ends of the ended attempt's channels, and while the attempt is still
     * Spark's latest (before the stage is resubmitted) Spark unregisters the named executor's map outputs for it.
     */
    TaskKilledException endedWhileReading(StageChannels.StageKey stage, String what, Throwable cause) {
        LOG.info("Executor {}: {} ended while a task read ({}): the task stops without blaming an owner", executorId,
                stage, what, cause);
        return new TaskKilledException(stage + " ended while this task read its shuffle blocks (" + what + ")");
    }

    PeerChannels.PeerChannel channelTo(StageChannels.StageKey stage, String peer) {
        try {
            return channels.await(stage, peer, setupTimeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Chunks and two read batches for a reader of about {@code bytes} (the tracker's sizes), or null when no chunk
     * became free within the read timeout. It asks for no more chunks than the bytes need (plus one for the
     * offsets), nor more than maxBytesInFlight or half the buffer.
     */
    ReadLease borrowReadResources(long bytes) {
        long needed = bytes / receive.chunkSize() + 2;
        int max = (int) Math.max(2,
                Math.min(Math.min(receive.totalChunks() / 2, maxBytesInFlight / receive.chunkSize()), needed));
        List<ReceiveBuffer.Chunk> chunks;
        try {
            chunks = receive.borrow(2, max, readTimeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for receive buffer space", e);
        }
        if (chunks.isEmpty()) {
            return null; // the caller falls back (or fails, with fallback `never`)
        }
        ReadBatch[] batches = new ReadBatch[2];
        try {
            for (int i = 0; i < 2; i++) {
                ReadBatch b = idleBatches.poll();
                batches[i] = b != null ? b : transport.newReadBatch();
            }
        } catch (RuntimeException | Error e) {
            receive.giveBack(chunks); // or they are lost to every later task of this executor
            for (ReadBatch b : batches) {
                if (b != null) {
                    idleBatches.add(b);
                }
            }
            throw e;
        }
        return new ReadLease(chunks, batches);
    }

    /** A read batch of its own, for a probe that must not queue behind a batch's reads; the caller closes it. */
    ReadBatch newProbeBatch() {
        return transport.newReadBatch();
    }

    /**
     * For a reader of {@code stage} whose reads timed out: its batches are closed (their threads may still hold the
     * reads; freeing a thread stops it) and its chunks retired (a late reply could still land in them) until the
     * stage attempt's channels are destroyed, so neither serves another task meanwhile.
     */
    void retire(StageChannels.StageKey stage, List<ReceiveBuffer.Chunk> chunks, ReadBatch[] batches) {
        // the batches first: once the chunks are retired, the end of the attempt may reclaim them at any time
        boolean freed = true;
        for (ReadBatch b : batches) {
            try {
                b.close();
            } catch (RuntimeException e) {
                freed = false; // its thread may still hold reads: the chunks must never come back
                LOG.warn("HComm: could not free a read batch whose reads timed out", e);
            }
        }
        receive.retire(freed ? stage : null, chunks);
        metrics.chunksRetired.inc(chunks.size());
        LOG.warn("HComm: retired {} receive buffer chunks after a read timed out (reads may still land in them) {}; "
                + "{} of {} chunks retired in this executor", chunks.size(),
                freed ? "until the channels of " + stage + " are destroyed" : "for good", receive.retired(),
                receive.totalChunks());
        if (freed && channels.channelsDestroyed(stage)) {
            reclaim(stage); // the attempt ended while the reader waited
        }
    }

    /**
     * Lends again the chunks retired for {@code stage}: its channels are destroyed, so no read over them writes any
     * more (soft HComm joins a destroyed channel's receiver; on hardware its queue pair is gone). Called by
     * {@link StageChannels} under its lock, and by {@link #retire}; idempotent.
     */
    private void reclaim(StageChannels.StageKey stage) {
        int n = receive.reclaim(stage);
        if (n > 0) {
            metrics.chunksReclaimed.inc(n);
            LOG.info("HComm: the channels of {} are destroyed; {} retired receive buffer chunks are lent again",
                    stage, n);
        }
    }

    void giveBack(List<ReceiveBuffer.Chunk> chunks, ReadBatch[] batches) {
        receive.giveBack(chunks);
        for (ReadBatch b : batches) {
            if (closed) {
                b.close();
            } else {
                idleBatches.add(b);
            }
        }
    }

    // ---- told by the driver ----

    void provision(Messages.ProvisionStage p) {
        if (channels != null) {
            channels.provision(new StageChannels.StageKey(p.stageId(), p.attempt()), p.peers());
        }
    }

    void endStage(Messages.EndStage e) {
        if (channels == null) {
            return;
        }
        StageChannels.StageKey key = new StageChannels.StageKey(e.stageId(), e.attempt());
        ensured.remove(key);
        // reported by whichever thread destroys the channels: this one, the stage's last reader, or the poller;
        // snapshot and send under one lock, so the driver (which keeps the latest) never gets an older one last
        channels.end(key, ended -> {
            synchronized (reportLock) {
                try {
                    plugin.send(Wire.pack(new Messages.StageReport(executorId, e.stageId(), e.attempt(),
                            ended.destroyCalls(), ended.channelsDestroyed(), metrics.snapshot())));
                } catch (IOException ex) {
                    LOG.warn("Executor {} could not report the end of {}", executorId, key, ex);
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
                plugin.send(Wire.pack(new Messages.MetricsReport(executorId, now)));
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
        List<Runnable> steps = new ArrayList<>();
        if (agent != null) {
            steps.add(() -> SparkEnv.get().rpcEnv().stop(agent));
        }
        if (channels != null) {
            steps.add(channels::close);
        }
        steps.add(() -> {
            ReadBatch b;
            while ((b = idleBatches.poll()) != null) {
                b.close();
            }
        });
        if (receive != null) {
            steps.add(() -> {
                int onLoan = receive.onLoan();
                if (onLoan > 0) {
                    LOG.warn("Executor {} closes its receive buffer with {} chunks still on loan", executorId, onLoan);
                }
                int retired = receive.retired();
                if (retired > 0) {
                    LOG.warn("Executor {} closes its receive buffer with {} chunks retired after read timeouts",
                            executorId, retired);
                }
                receive.close();
                receiveRegion.close();
            });
        }
        if (publisher != null) {
            steps.add(publisher::close);
        }
        if (transport != null) {
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
