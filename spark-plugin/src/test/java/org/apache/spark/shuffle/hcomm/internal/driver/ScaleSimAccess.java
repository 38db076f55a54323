package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.hcomm.internal.channels.Roster;
import org.apache.spark.shuffle.hcomm.internal.channels.StageChannels;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.Wire;
import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.Transport;

/**
 * The scale simulation's door into the driver component's package-private entry points, shipped in the plugin's
 * test jar (the benchmarks module depends on it; no module puts classes into another's packages). Every call goes
 * to the REAL classes: {@link DriverState} through its RPC entry point {@code receive} with {@link Wire}-packed
 * messages (as {@code ShuffleDriverPlugin} does) or its listener entry points {@code provision}/{@code endStage}, and
 * {@link StageChannels} as {@code ExecutorRuntime} drives it.
 */
public final class ScaleSimAccess {
    private ScaleSimAccess() {
    }

    /** A new driver state (what the driver plugin creates at start). */
    public static Object newDriver() {
        return new DriverState();
    }

    public static void register(Object driver, String executorId, String host, byte[] endpoint, int port,
            RpcEndpointRef agent) {
        ((DriverState) driver).receive(Wire.pack(new Messages.RegisterExecutor(executorId, host, endpoint, port),
                agent));
    }

    public static void published(Object driver, int shuffleId, long mapId, String executorId, long indexAddress,
            long dataAddress, int numPartitions) {
        ((DriverState) driver).receive(Wire.pack(new Messages.PublishedBatch(List.of(new Messages.Published(shuffleId,
                mapId, executorId, indexAddress, dataAddress, numPartitions)))));
    }

    /** The driver's answer to one executor's LookupShuffle (the per-shuffle directory), as it goes on the wire. */
    public static Object lookup(Object driver, int shuffleId) {
        return ((DriverState) driver).receive(Wire.pack(new Messages.LookupShuffle(shuffleId)));
    }

    /** The SparkListener path: a stage with parents was submitted. */
    public static void provision(Object driver, int stageId, int attempt) {
        ((DriverState) driver).provision(new StageAttempt(stageId, attempt));
    }

    /** The executor path: the first reduce task of an executor asks for the stage's channels. */
    public static void ensure(Object driver, int stageId, int attempt, String executorId) {
        ((DriverState) driver).receive(Wire.pack(new Messages.EnsureStage(stageId, attempt, executorId)));
    }

    public static void endStage(Object driver, int stageId, int attempt) {
        ((DriverState) driver).endStage(new StageAttempt(stageId, attempt));
    }

    /** An executor's report after its one destroy call (what ExecutorRuntime sends). */
    public static Object stageReport(String executorId, int stageId, int attempt, int destroyCalls, int channels) {
        return new Messages.StageReport(executorId, stageId, attempt, destroyCalls, channels,
                ShuffleMetrics.forExecutor().snapshot());
    }

    /** Delivers an executor's message to the driver, packed as the plugin's RPC carries it. */
    public static void receive(Object driver, Object message) {
        ((DriverState) driver).receive(Wire.pack((java.io.Serializable) message));
    }

    /**
     * Delivers an already packed message (see {@link #packed}) to the driver's RPC entry point: what the driver does
     * with it, without the sender's packing.
     */
    public static Object receivePacked(Object driver, Object wire) {
        return ((DriverState) driver).receive(wire);
    }

    /** The SparkListener path: an executor was removed. */
    public static void removed(Object driver, String executorId) {
        ((DriverState) driver).executorRemoved(executorId);
    }

    /** A message as it travels (the {@link Wire} packet Spark's RPC carries). */
    public static Object packed(Object message) {
        return Wire.pack((java.io.Serializable) message);
    }

    /** What an executor's agent does first with a packet from the driver. */
    public static Object unpack(Object wire) {
        return Wire.unpack(wire).message();
    }

    public static Object ensureMessage(int stageId, int attempt, String executorId) {
        return new Messages.EnsureStage(stageId, attempt, executorId);
    }

    public static Object lookupMessage(int shuffleId) {
        return new Messages.LookupShuffle(shuffleId);
    }

    public static Object publishedMessage(int shuffleId, long mapId, String executorId) {
        return new Messages.Published(shuffleId, mapId, executorId, 1L << 40, (1L << 40) + 4096, 200);
    }

    public static int destroyCallsOf(Object driver, int stageId, int attempt) {
        return ((DriverState) driver).destroyCallsOf(stageId, attempt);
    }

    public static boolean isProvision(Object message) {
        return message instanceof Messages.ProvisionStage;
    }

    public static boolean isEndStage(Object message) {
        return message instanceof Messages.EndStage;
    }

    public static boolean isPacket(Object wire) {
        return Wire.isPacket(wire);
    }

    public static boolean isPeers(Object message) {
        return message instanceof Messages.Peers;
    }

    /** Peer executor ids that joined, in a Peers message. */
    public static List<String> joinedIds(Object message) {
        List<String> ids = new ArrayList<>();
        for (Messages.Peer p : ((Messages.Peers) message).joined()) {
            ids.add(p.executorId());
        }
        return ids;
    }

    /** Peer executor ids that left, in a Peers message. */
    public static List<String> leftIds(Object message) {
        return new ArrayList<>(((Messages.Peers) message).left());
    }

    public static int stageOf(Object message) {
        return message instanceof Messages.ProvisionStage p ? p.stageId() : ((Messages.EndStage) message).stageId();
    }

    public static int attemptOf(Object message) {
        return message instanceof Messages.ProvisionStage p ? p.attempt() : ((Messages.EndStage) message).attempt();
    }

    /** A real executor's channel manager ({@link StageChannels}, with its poller thread) on a real transport. */
    public static final class Channels implements AutoCloseable {
        private final Roster roster;
        private final StageChannels channels;

        public Channels(Transport transport, String executorId) {
            this.roster = new Roster(executorId);
            // no receive buffer here, so nothing to reclaim when a stage's channels are destroyed
            this.channels = new StageChannels(transport, ShuffleMetrics.forExecutor(), roster, stage -> { });
        }

        /**
         * What ExecutorRuntime does with a message from the driver: Peers updates the roster (and gives stage
         * attempts going channels to newcomers), ProvisionStage makes one HcommChannelCreate.
         */
        public void receive(Object message) {
            if (message instanceof Messages.Peers p) {
                channels.peersJoined(roster.apply(p));
            } else {
                Messages.ProvisionStage p = (Messages.ProvisionStage) message;
                channels.provision(new StageAttempt(p.stageId(), p.attempt()));
            }
        }

        /** Waits until the channel to {@code peer} settled; true when READY. */
        public boolean awaitReady(int stageId, int attempt, String peer, long timeoutMs) throws InterruptedException {
            PeerChannels.PeerChannel ch = channels.await(new StageAttempt(stageId, attempt), peer,
                    timeoutMs);
            return ch != null && ch.state() == PeerChannels.State.READY;
        }

        /** What ExecutorRuntime.endStage does with an EndStage: one HcommChannelDestroy; returns channels destroyed. */
        public int end(int stageId, int attempt) {
            int[] n = new int[2];
            channels.end(new StageAttempt(stageId, attempt), e -> {
                n[0] = e.destroyCalls();
                n[1] = e.channelsDestroyed();
            });
            return n[1];
        }

        @Override
        public void close() {
            channels.close();
        }
    }
}
