package org.apache.spark.shuffle.hcomm.internal.window;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.SparkEnv;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.client.RpcResponseCallback;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportClientBootstrap;
import org.apache.spark.network.crypto.AuthClientBootstrap;
import org.apache.spark.network.crypto.AuthServerBootstrap;
import org.apache.spark.network.sasl.SecretKeyHolder;
import org.apache.spark.network.server.NoOpRpcHandler;
import org.apache.spark.network.server.RpcHandler;
import org.apache.spark.network.server.StreamManager;
import org.apache.spark.network.server.TransportServer;
import org.apache.spark.network.server.TransportServerBootstrap;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.CommunicatorWindows;
import org.hcomm.bridge.transport.OwnerEnd;
import org.hcomm.bridge.transport.TransportException;
import org.hcomm.bridge.transport.WindowLayout;
import org.slf4j.Logger;

/**
 * An executor's window server (the owner's side): a server on Spark's own network library that takes
 * {@link WindowProtocol.Fetch}es from readers and streams the ranges they name from this executor's map outputs
 * (Spark's files: each range's offsets from its index file, one read per range) into a window of the HCCL buffer of the
 * communicator the reader named, one exchange per thread, as many at once as the buffer has send windows (further
 * requests wait for one, first come first served, up to the read timeout). Started once per executor, before it
 * registers (its port goes to the driver); communicators are added and removed as they form and retire. Every
 * connection authenticates as Spark's block transfer does with {@code spark.authenticate} (Spark's
 * {@code AuthServerBootstrap}), with the plugin's channel secret as the key whether or not that is on, so no request
 * from a process without the secret reaches it. Thread-safe.
 */
public final class WindowServer implements AutoCloseable {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    /** The application name window connections authenticate under (the key is the channel secret alone). */
    private static final String AUTH_APP = "hcomm-window";

    private final String executorId;
    private final ShuffleMetrics metrics;
    private final long timeoutMillis;
    private final TransportContext context;
    private final TransportServer server;
    private final Map<Long, CommunicatorWindows> byEpoch = new ConcurrentHashMap<>();
    private final Map<Long, Exchange> exchanges = new ConcurrentHashMap<>();
    private final AtomicLong nextWindowId = new AtomicLong(1);
    private final ExecutorService threads;
    private final String secret;

    /**
     * Starts the server on {@code host}, on a free port, taking connections that prove {@code secret} (the channel
     * secret, {@code ChannelSecret}).
     */
    public WindowServer(String executorId, String host, ShuffleMetrics metrics, long timeoutMillis, String secret) {
        this.secret = java.util.Objects.requireNonNull(secret, "the channel secret");
        this.executorId = executorId;
        this.metrics = metrics;
        this.timeoutMillis = timeoutMillis;
        AtomicInteger n = new AtomicInteger();
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "hcomm-window-owner-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        TransportConf conf = transportConf();
        this.context = new TransportContext(conf, new Handler(), true);
        List<TransportServerBootstrap> boot = List.of(new AuthServerBootstrap(conf, key(secret)));
        this.server = context.createServer(host, 0, boot);
    }

    /** Spark's key holder for window connections: the channel secret, whatever the application id. */
    private static SecretKeyHolder key(String secret) {
        return new SecretKeyHolder() {
            @Override
            public String getSaslUser(String appId) {
                return AUTH_APP;
            }

            @Override
            public String getSecretKey(String appId) {
                return secret;
            }
        };
    }

    /** How a reader connects to a window server that takes {@code secret}. */
    static List<TransportClientBootstrap> readerAuth(String secret) {
        return List.of(new AuthClientBootstrap(transportConf(), AUTH_APP, key(secret)));
    }

    /** How this executor's readers connect to the other members' window servers: with the same channel secret. */
    public List<TransportClientBootstrap> readerAuth() {
        return readerAuth(secret);
    }

    /** The window transport's settings: two threads each way is plenty for requests of a few hundred bytes. */
    static TransportConf transportConf() {
        Map<String, String> m = new HashMap<>();
        m.put("spark.hcommwindow.io.serverThreads", "2");
        m.put("spark.hcommwindow.io.clientThreads", "2");
        m.put("spark.hcommwindow.io.numConnectionsPerPeer", "1");
        return new TransportConf("hcommwindow", new MapConfigProvider(m));
    }

    public int port() {
        return server.getPort();
    }

    /** Serves readers of communicator {@code epoch} from {@code windows}. */
    public void serve(long epoch, CommunicatorWindows windows) {
        byEpoch.put(epoch, windows);
    }

    /** Stops serving communicator {@code epoch}: new requests are refused; exchanges under way fail on their own. */
    public void stopServing(long epoch) {
        byEpoch.remove(epoch);
    }

    @Override
    public void close() {
        byEpoch.clear();
        for (Exchange e : exchanges.values()) {
            e.cancel();
        }
        threads.shutdownNow();
        server.close();
        context.close();
    }

    private final class Handler extends RpcHandler {
        private final StreamManager streams = new NoOpRpcHandler().getStreamManager();

        @Override
        public void receive(TransportClient client, ByteBuffer message, RpcResponseCallback callback) {
            Object m;
            try {
                m = WindowProtocol.decode(message);
            } catch (IllegalArgumentException e) {
                callback.onFailure(e);
                return;
            }
            if (m instanceof WindowProtocol.Fetch f) {
                CommunicatorWindows w = byEpoch.get(f.epoch());
                if (w == null) {
                    metrics.windowsRefused.inc();
                    callback.onSuccess(WindowProtocol.encode(new WindowProtocol.Refused(true, "executor "
                            + executorId + " does not serve communicator " + f.epoch() + " (it serves "
                            + byEpoch.keySet() + ")")));
                    return;
                }
                Exchange e = new Exchange(nextWindowId.getAndIncrement(), f, w, callback);
                exchanges.put(e.id, e);
                try {
                    threads.execute(e);
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                    exchanges.remove(e.id);
                    callback.onSuccess(WindowProtocol.encode(new WindowProtocol.Refused(false, "executor "
                            + executorId + " is shutting down")));
                }
            } else if (m instanceof WindowProtocol.Cancel c) {
                Exchange e = exchanges.get(c.windowId());
                callback.onSuccess(WindowProtocol.encode(new WindowProtocol.Cancelled(e == null ? -1
                        : e.cancel(c.slicesIssued()))));
            } else {
                callback.onFailure(new IllegalArgumentException("not a request: " + m));
            }
        }

        @Override
        public StreamManager getStreamManager() {
            return streams;
        }
    }

    /** A range of one map output in Spark's files: its data file and its partitions' offsets (one more than them). */
    private record Located(java.io.File data, long[] offsets) {
        long[] lengths() {
            long[] l = new long[offsets.length - 1];
            for (int p = 0; p < l.length; p++) {
                l[p] = offsets[p + 1] - offsets[p];
            }
            return l;
        }
    }

    /** One exchange: lease a send window, answer with the plan, stream the ranges, wait for the last ACKs. */
    private final class Exchange implements Runnable {
        final long id;
        final WindowProtocol.Fetch fetch;
        final CommunicatorWindows windows;
        final RpcResponseCallback granted;
        /** Slices this exchange began to stage (counted before each {@link OwnerEnd#put}): all get signalled. */
        private long begun;
        private boolean cancelRequested;
        /** Slices the plan cuts the stream into, once streaming began: no cancel makes the owner signal more. */
        private long planned;
        /** Slices to signal in all once cancelled: {@link #begun}, or up to the waits the reader queued ahead. */
        private long horizon;

        Exchange(long id, WindowProtocol.Fetch fetch, CommunicatorWindows windows, RpcResponseCallback granted) {
            this.id = id;
            this.fetch = fetch;
            this.windows = windows;
            this.granted = granted;
        }

        /**
         * The reader cancels: no slice is begun after this; returns how many were begun, or the reader's
         * {@code slicesIssued} (at most the plan's) when more, each of which gets its DATA (a put waiting for its
         * slot's ACK goes on once the reader, skipping, acknowledges; a slice not begun is signalled without bytes,
         * {@link #signalAhead}).
         */
        synchronized long cancel(long slicesIssued) {
            cancelRequested = true;
            horizon = Math.max(horizon, Math.max(begun, Math.min(slicesIssued, planned)));
            return horizon;
        }

        /** Cancelled without the reader's count (the server closing). */
        long cancel() {
            return cancel(-1);
        }

        /** After a cancel, DATA without bytes for each slice the reader queued a wait for that was not begun. */
        private void signalAhead(OwnerEnd end) throws TransportException {
            long upTo;
            synchronized (this) {
                upTo = cancelRequested ? horizon : 0;
            }
            while (end.slicesPut() < upTo) {
                end.signal();
            }
        }

        /** Counts the next slice as begun, unless the reader cancelled. */
        private synchronized boolean begin() {
            if (cancelRequested) {
                return false;
            }
            begun++;
            return true;
        }

        private synchronized boolean cancelRequested() {
            return cancelRequested;
        }

        @Override
        public void run() {
            OwnerEnd end = null;
            try {
                List<Located> located;
                try {
                    located = locate(fetch.ranges());
                } catch (IOException | RuntimeException e) {
                    refuse("executor " + executorId + " cannot read the map outputs asked for: " + e);
                    return;
                }
                end = windows.openOwner(fetch.readerId(), fetch.lane(), fetch.readerSlots(), timeoutMillis);
                if (end == null) {
                    refuse("executor " + executorId + " had no send window free within the read timeout ("
                            + windows.layout().windows() + " windows, all serving; or its previous window to "
                            + fetch.readerId() + " in lane " + fetch.lane() + " did not end)");
                    return;
                }
                long[][] lengths = new long[located.size()][];
                for (int i = 0; i < lengths.length; i++) {
                    lengths[i] = located.get(i).lengths();
                }
                granted.onSuccess(WindowProtocol.encode(new WindowProtocol.Granted(id, end.slotOffsets(), lengths)));
                metrics.windowsServed.inc();
                stream(end, located, WindowProtocol.totalBytes(lengths));
                signalAhead(end);
                end.finish();
            } catch (IOException | RuntimeException e) {
                if (end != null) {
                    metrics.windowsPoisoned.inc();
                    LOG.warn("Executor {} failed window {} to executor {} after {} slices", executorId, id,
                            fetch.readerId(), end.slicesPut(), e);
                } else {
                    refuse("executor " + executorId + " failed to open the window: " + e);
                }
            } finally {
                if (end != null) {
                    end.close();
                }
                exchanges.remove(id);
            }
        }

        private void refuse(String why) {
            metrics.windowsRefused.inc();
            granted.onSuccess(WindowProtocol.encode(new WindowProtocol.Refused(false, why)));
        }

        /** The ranges end to end, cut into slices of the layout's size; stops early when the reader cancels. */
        private void stream(OwnerEnd end, List<Located> ranges, long total) throws IOException, TransportException {
            WindowLayout layout = windows.layout();
            synchronized (this) { // before the first slice: a reader cannot read ahead of what it was not sent
                planned = layout.sliceCount(total);
            }
            ByteBuffer staging = end.staging();
            for (Located r : ranges) { // page cache straight into the staging buffer
                try (FileChannel in = FileChannel.open(r.data().toPath(), StandardOpenOption.READ)) {
                    long at = r.offsets()[0];
                    long last = r.offsets()[r.offsets().length - 1];
                    while (at < last) {
                        int want = (int) Math.min(staging.remaining(), last - at);
                        int got = in.read(staging.slice().limit(want), at);
                        if (got < 0) {
                            throw new IOException(r.data() + " ends at " + at + ", before its index says (" + last
                                    + ")");
                        }
                        staging.position(staging.position() + got);
                        at += got;
                        if (!staging.hasRemaining()) {
                            if (!begin()) {
                                return;
                            }
                            end.put(staging.position());
                            staging = end.staging();
                        }
                    }
                }
            }
            if (staging.position() > 0 && begin()) {
                end.put(staging.position());
            }
            long want = layout.sliceCount(total);
            if (!cancelRequested() && end.slicesPut() != want) {
                throw new IOException("streamed " + end.slicesPut() + " slices, the plan has " + want);
            }
        }

        /**
         * Where each range lies in Spark's files: its data file, and its partitions' offsets read from the map
         * output's index file, one read per range (with windows every map output is in Spark's files:
         * {@code writeTarget=arena} does not apply, and moved outputs land there too).
         */
        private List<Located> locate(List<WindowProtocol.Range> ranges) throws IOException {
            IndexShuffleBlockResolver resolver =
                    (IndexShuffleBlockResolver) SparkEnv.get().shuffleManager().shuffleBlockResolver();
            List<Located> out = new ArrayList<>(ranges.size());
            for (WindowProtocol.Range r : ranges) {
                if (r.endPartition() <= r.startPartition() || r.startPartition() < 0) {
                    throw new IllegalArgumentException("empty range " + r);
                }
                java.io.File index = resolver.getIndexFile(r.shuffleId(), r.mapId(), scala.Option.empty());
                ByteBuffer b = ByteBuffer.allocate(8 * (r.endPartition() - r.startPartition() + 1));
                try (FileChannel in = FileChannel.open(index.toPath(), StandardOpenOption.READ)) {
                    long at = 8L * r.startPartition();
                    while (b.hasRemaining()) {
                        if (in.read(b, at + b.position()) < 0) {
                            throw new IOException("map output " + r + ": index " + index + " has no partition "
                                    + (r.endPartition() - 1));
                        }
                    }
                }
                b.flip();
                long[] offsets = new long[b.remaining() / 8];
                for (int p = 0; p < offsets.length; p++) {
                    offsets[p] = b.getLong();
                    if (p > 0 && offsets[p] < offsets[p - 1]) {
                        throw new IOException("map output " + r + ": index " + index + " goes backwards at "
                                + "partition " + (r.startPartition() + p));
                    }
                }
                out.add(new Located(resolver.getDataFile(r.shuffleId(), r.mapId(), scala.Option.empty()), offsets));
            }
            return out;
        }
    }
}
