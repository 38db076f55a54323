package org.apache.spark.shuffle.hcomm.internal.rpc;

import java.io.IOException;

import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;

/**
 * What an executor asks and tells the driver component, through the plugin's RPC ({@code PluginContext.ask/send}),
 * every message packed by {@link Wire}. One per executor; thread-safe (Spark's RPC is).
 */
public final class DriverClient {
    private final PluginContext plugin;
    private final String executorId;

    public DriverClient(PluginContext plugin) {
        this.plugin = plugin;
        this.executorId = plugin.executorID();
    }

    public String executorId() {
        return executorId;
    }

    /** Where this executor's endpoint is, and the agent through which the driver tells it things. */
    public void register(String host, byte[] endpoint, int port, RpcEndpointRef agent) throws Exception {
        plugin.ask(Wire.pack(new Messages.RegisterExecutor(executorId, host, endpoint, port), agent));
    }

    /** This executor reads on the communicator path: the driver forms communicators with it as a member. */
    public void registerForCommunicator(String host, RpcEndpointRef agent) throws Exception {
        plugin.ask(Wire.pack(new Messages.RegisterExecutor(executorId, host, new byte[0], 0, true), agent));
    }

    /** A map output is readable one-sidedly. */
    public void published(Messages.Published output) throws Exception {
        plugin.ask(Wire.pack(output));
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

    /** After the stage attempt's channels were destroyed: what the end did, and the cumulative counters. */
    public void stageReport(StageAttempt stage, StageEnd end, ShuffleMetrics.Snapshot totals) throws IOException {
        plugin.send(Wire.pack(new Messages.StageReport(executorId, stage.stageId(), stage.attempt(),
                end.destroyCalls(), end.channelsDestroyed(), totals)));
    }

    /** The cumulative counters of an executor without transport (no stage report carries them). */
    public void metricsReport(ShuffleMetrics.Snapshot totals) throws IOException {
        plugin.send(Wire.pack(new Messages.MetricsReport(executorId, totals)));
    }
}
