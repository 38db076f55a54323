package org.apache.spark.shuffle.hcomm.internal.rpc;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.slf4j.Logger;

/**
 * What an executor asks and tells the driver component, through the plugin's RPC ({@code PluginContext.ask/send}),
 * every message packed by {@link Wire}. One per executor; thread-safe (Spark's RPC is). Owns the thread that sends
 * publications, stopped by {@link #close()}.
 */
public final class DriverClient {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    /** How long {@link #close()} waits for the sender to send what is queued. */
    private static final long CLOSE_WAIT_MS = 5_000;

    private final PluginContext plugin;
    private final String executorId;
    /** Publications not sent yet; guards itself, {@link #sender}, {@link #sending} and {@link #closed}. */
    private final List<Messages.Published> toPublish = new ArrayList<>();
    private Thread sender;
    /** Publications in the batch the sender is sending. */
    private int sending;
    private boolean closed;

    private final ShuffleMetrics metrics;

    public DriverClient(PluginContext plugin, ShuffleMetrics metrics) {
        this.plugin = plugin;
        this.metrics = metrics;
        this.executorId = plugin.executorID();
    }

    public String executorId() {
        return executorId;
    }

    /** Where this executor's endpoint is, and the agent through which the driver tells it things. */
    public void register(String host, byte[] endpoint, int port, RpcEndpointRef agent) throws Exception {
        plugin.ask(Wire.pack(new Messages.RegisterExecutor(executorId, host, endpoint, port), agent));
    }

    /**
     * This executor reads on the communicator path: the driver forms communicators with it as a member;
     * {@code windowPort} is where its window server listens (0: none).
     */
    public void registerForCommunicator(String host, int device, int windowPort, RpcEndpointRef agent)
            throws Exception {
        plugin.ask(Wire.pack(new Messages.RegisterExecutor(executorId, host, new byte[0], windowPort, true, device),
                agent));
    }

    /**
     * A map output is readable one-sidedly: queued, and sent with whatever else was published meanwhile in one
     * {@link Messages.PublishedBatch} by this client's sender thread (the map task does not wait for the driver).
     */
    public void published(Messages.Published output) {
        synchronized (toPublish) {
            if (closed) {
                return;
            }
            toPublish.add(output);
            if (sender == null) {
                sender = new Thread(this::sendPublications, "hcomm-publish-" + executorId);
                sender.setDaemon(true);
                sender.start();
            }
            toPublish.notifyAll();
        }
    }

    private void sendPublications() {
        while (true) {
            List<Messages.Published> batch;
            synchronized (toPublish) {
                while (toPublish.isEmpty() && !closed) {
                    try {
                        toPublish.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (toPublish.isEmpty()) {
                    return; // closed, and everything queued went out
                }
                batch = new ArrayList<>(toPublish);
                toPublish.clear();
                sending = batch.size();
            }
            try {
                plugin.send(Wire.pack(new Messages.PublishedBatch(batch)));
                metrics.publicationBatches.inc();
            } catch (IOException | RuntimeException e) {
                // the outputs stay readable: a reader that misses them asks this executor through the driver
                LOG.warn("Executor {} could not tell the driver of {} published map outputs; readers will ask for "
                        + "them", executorId, batch.size(), e);
            } finally {
                synchronized (toPublish) {
                    sending = 0;
                }
            }
        }
    }

    /**
     * Sends what is queued, then stops the sender (the executor's end); waits at most {@link #CLOSE_WAIT_MS} for it,
     * and says how many publications the driver has not heard of by then.
     */
    public void close() {
        Thread t;
        synchronized (toPublish) {
            closed = true;
            toPublish.notifyAll();
            t = sender;
        }
        if (t != null) {
            try {
                t.join(CLOSE_WAIT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        int queued;
        int inFlight;
        synchronized (toPublish) {
            queued = toPublish.size();
            inFlight = sending;
        }
        if (queued + inFlight > 0) {
            LOG.warn("Executor {} closes with {} map output publications still queued and {} still being sent after "
                    + "{} ms: the driver may never hear of them", executorId, queued, inFlight, CLOSE_WAIT_MS);
        }
    }

    /** Every published map output of a shuffle. */
    public Messages.ShuffleLocations lookup(int shuffleId) throws Exception {
        return (Messages.ShuffleLocations) Wire.reply(plugin.ask(Wire.pack(new Messages.LookupShuffle(shuffleId))));
    }

    /** Asks the owner of map outputs that moved to it to publish them; the shuffle's directory afterwards. */
    public Messages.ShuffleLocations publishMoved(int shuffleId, String ownerId, long[] mapIds) throws Exception {
        return (Messages.ShuffleLocations) Wire.reply(plugin.ask(Wire.pack(
                new Messages.PublishMoved(shuffleId, ownerId, mapIds))));
    }

    /** Makes sure this executor has (or gets) channels for the stage attempt. */
    public void ensureStage(StageAttempt stage) throws Exception {
        plugin.ask(Wire.pack(new Messages.EnsureStage(stage.stageId(), stage.attempt(), executorId)));
    }

    /** A window exchange with {@code peerId} failed in communicator {@code epoch}, poisoning their channel. */
    public void pairPoisoned(long epoch, String peerId, String why) throws IOException {
        plugin.send(Wire.pack(new Messages.PairPoisoned(executorId, epoch, peerId, why)));
    }

    /** After the stage attempt's channels were destroyed: what the end did, and the cumulative counters. */
    public void stageReport(StageAttempt stage, StageEnd end, ShuffleMetrics.Snapshot totals) throws IOException {
        plugin.send(Wire.pack(new Messages.StageReport(executorId, stage.stageId(), stage.attempt(),
                end.destroyCalls(), end.channelsDestroyed(), totals)));
    }

    /**
     * The cumulative counters of an executor without transport (no stage report carries them), after a task of
     * {@code stage}.
     */
    public void metricsReport(StageAttempt stage, ShuffleMetrics.Snapshot totals) throws IOException {
        plugin.send(Wire.pack(new Messages.MetricsReport(executorId, stage.stageId(), stage.attempt(), totals)));
    }
}
