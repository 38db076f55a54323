package org.apache.spark.shuffle.hcomm.internal.window;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

import org.apache.spark.SparkEnv;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportClientBootstrap;
import org.apache.spark.network.client.TransportClientFactory;
import org.apache.spark.network.server.NoOpRpcHandler;
import org.apache.spark.network.util.TransportConf;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.CommunicatorWindows;

/**
 * A reader executor's side of one communicator's windows: where each member's window server is, one connection per
 * owner (kept for the communicator's life), and per owner as many permits as its channel has lanes
 * ({@code WindowLayout.lanes()}: a notify is a flag, so each lane carries one window at a time): this executor's
 * tasks read one owner through that many windows at once, further ones wait their turn.
 * Thread-safe.
 */
public final class WindowReads implements AutoCloseable {
    final String executorId;
    final long epoch;
    final CommunicatorWindows windows;
    final ShuffleMetrics metrics;
    final long timeoutMillis;
    /** Bytes a task's read-ahead queues before the task consumed them. */
    final long maxBytesInFlight;
    /**
     * Owners one task reads at once: the receive windows shared out among the executor's task slots (at least one),
     * so that its tasks together never wait for a window another task holds.
     */
    final int exchangesPerTask;
    private final Map<String, InetSocketAddress> servers;
    private final Map<String, Semaphore> lanes = new ConcurrentHashMap<>();
    private final TransportContext context;
    private final TransportClientFactory clients;

    /**
     * {@code servers}: every other member's window server, by executor id; {@code auth}: how to connect to them
     * ({@link WindowServer#readerAuth()}).
     */
    public WindowReads(String executorId, long epoch, CommunicatorWindows windows,
            Map<String, InetSocketAddress> servers, List<TransportClientBootstrap> auth, ShuffleMetrics metrics,
            long timeoutMillis, long maxBytesInFlight) {
        this.maxBytesInFlight = maxBytesInFlight;
        this.executorId = executorId;
        this.epoch = epoch;
        this.windows = windows;
        this.servers = Map.copyOf(servers);
        this.metrics = metrics;
        this.timeoutMillis = timeoutMillis;
        TransportConf conf = WindowServer.transportConf();
        this.context = new TransportContext(conf, new NoOpRpcHandler(), true);
        this.clients = context.createClientFactory(auth);
        SparkEnv env = SparkEnv.get();
        this.exchangesPerTask = exchangesPerTask(windows.layout().windows(), env);
    }

    /** {@code windows} shared out among the task slots of {@code env}'s executor (its cores over task cpus). */
    private static int exchangesPerTask(int windows, SparkEnv env) {
        int cores = Runtime.getRuntime().availableProcessors();
        int taskCpus = 1;
        if (env != null) {
            cores = env.conf().getInt("spark.executor.cores", cores);
            taskCpus = env.conf().getInt("spark.task.cpus", 1);
        }
        return exchangesPerTask(windows, cores, taskCpus);
    }

    /** Receive windows per task slot, at least one: {@code windows / (cores / taskCpus)}. */
    static int exchangesPerTask(int windows, int cores, int taskCpus) {
        int slots = Math.max(1, cores / Math.max(1, taskCpus));
        return Math.max(1, windows / slots);
    }

    /** True when {@code ownerId} is a member with a window server and a channel that no failure poisoned. */
    public boolean readable(String ownerId) {
        return servers.containsKey(ownerId) && !windows.poisoned(ownerId);
    }

    /** True when {@code ownerId} is a member of this communicator with a window server. */
    public boolean member(String ownerId) {
        return servers.containsKey(ownerId);
    }

    /** Why {@link #readable} is false for {@code ownerId}. */
    public String unreadable(String ownerId) {
        if (!servers.containsKey(ownerId)) {
            return "executor " + ownerId + " is not a member of communicator " + epoch + " with a window server";
        }
        return "the channel to executor " + ownerId + " is poisoned for communicator " + epoch
                + " by an earlier failed window exchange";
    }

    public CommunicatorWindows windows() {
        return windows;
    }

    public long epoch() {
        return epoch;
    }

    /** The permits to read {@code ownerId}: one per lane of the channel to it, first come first served. */
    Semaphore lanes(String ownerId) {
        return lanes.computeIfAbsent(ownerId, k -> new Semaphore(windows.layout().lanes(), true));
    }

    TransportClient client(String ownerId) throws IOException, InterruptedException {
        InetSocketAddress a = servers.get(ownerId);
        return clients.createClient(a.getHostString(), a.getPort());
    }

    @Override
    public void close() {
        clients.close();
        context.close();
    }
}
