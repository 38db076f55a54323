package org.apache.spark.shuffle.hcomm.internal.rpc;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;

/**
 * What the driver and the executors say to each other. Executors ask the driver through the plugin's RPC
 * ({@code PluginContext.ask/send}); the driver tells executors through each executor's agent ({@code ExecutorAgent}).
 * They travel packed by {@link Wire}, so Spark's RPC only ever sees JDK and Spark classes.
 */
public final class Messages {
    private Messages() {
    }

    /**
     * Executor → driver at start: where its endpoint is; the agent's endpoint reference (where to tell it things)
     * rides along in the {@link Wire} packet. {@code device}: on the communicator path, the NPU (logical id) Spark's
     * resource scheduler gave the executor, or {@link #NO_DEVICE} for the driver to assign one. Reply: {@link Ack}.
     */
    public record RegisterExecutor(String executorId, String host, byte[] endpoint, int port, boolean communicator,
            int device) implements Serializable {
        /** No NPU named by Spark: the driver assigns the lowest free logical id on the executor's host. */
        public static final int NO_DEVICE = -1;

        /** An endpoint-path executor (Atlas 350): its endpoint descriptor and soft NIC port. */
        public RegisterExecutor(String executorId, String host, byte[] endpoint, int port) {
            this(executorId, host, endpoint, port, false, NO_DEVICE);
        }

        public RegisterExecutor(String executorId, String host, byte[] endpoint, int port, boolean communicator) {
            this(executorId, host, endpoint, port, communicator, NO_DEVICE);
        }
    }

    /**
     * Driver → the first member of a communicator it forms (an ask): make the root info
     * ({@code HcclGetRootInfo}) on NPU {@code device} (the logical id the driver holds for it). Reply:
     * {@link RootInfo}.
     */
    public record RootInfoAsk(long epoch, int device) implements Serializable {
        public RootInfoAsk(long epoch) {
            this(epoch, RegisterExecutor.NO_DEVICE);
        }
    }

    public record RootInfo(long epoch, byte[] bytes) implements Serializable {
    }

    /**
     * Driver → every member (an ask): join communicator {@code epoch} as {@code rank} of {@code members} (executor
     * ids, in rank order, on {@code hosts}) on NPU {@code device}, acquire channels to the others and build the
     * parts that read in it, but keep reading in the earlier one until {@link CommunicatorReady}. Reply: {@link Ack}
     * once joined and built, or not ok with the reason. {@code windowPorts}: each member's window server port (0:
     * none), in rank order.
     */
    public record JoinCommunicator(long epoch, byte[] rootInfo, List<String> members, List<String> hosts, int rank,
            int device, List<Integer> windowPorts) implements Serializable {
        public JoinCommunicator(long epoch, byte[] rootInfo, List<String> members, List<String> hosts, int rank) {
            this(epoch, rootInfo, members, hosts, rank, RegisterExecutor.NO_DEVICE);
        }

        public JoinCommunicator(long epoch, byte[] rootInfo, List<String> members, List<String> hosts, int rank,
                int device) {
            this(epoch, rootInfo, members, hosts, rank, device, java.util.Collections.nCopies(members.size(), 0));
        }
    }

    /**
     * Driver → every member (an ask), once every member joined communicator {@code epoch} and built its parts: read
     * in it from now on. So no member reads in a communicator where another cannot yet serve its outputs. Reply:
     * {@link Ack}.
     */
    public record CommunicatorReady(long epoch) implements Serializable {
    }

    /**
     * Driver → every member (an ask) when communicator {@code epoch} did not form: drop what was built for it, and
     * {@code reason} is why (what a reduce task under fallback {@code never} fails with while the executor has no
     * communicator). Reply: {@link Ack}.
     */
    public record CommunicatorFailed(long epoch, String reason) implements Serializable {
    }

    /**
     * Executor → driver (a send) when a window exchange with {@code peerId} failed in communicator {@code epoch}:
     * their channel is poisoned for that communicator (a late transfer or a stale notify may still arrive on it), so
     * the driver forms a new one of the same executors, which heals the pair (without it, under fallback
     * {@code never} the pair could not read from each other until the executors changed). {@code why}: the failure.
     */
    public record PairPoisoned(String executorId, long epoch, String peerId, String why) implements Serializable {
    }

    /**
     * Executor → driver when a map task commits: the map output is readable one-sidedly. {@code indexAddress} holds
     * {@code numPartitions + 1} big-endian longs (Spark's index-file layout), the offsets of each reduce partition
     * from {@code dataAddress}. {@code packedIndex}: the same offsets as partition lengths ({@link PackedIndex}),
     * or null when they are over the budget ({@code spark.shuffle.hcomm.publishedIndexMaxBytes}); with them a
     * reader's first read is data, without them it reads the index first. Travels in a {@link PublishedBatch}.
     * Both addresses are registered addresses of the owner: what a reader passes as a read's source.
     */
    public record Published(int shuffleId, long mapId, String executorId, long indexAddress, long dataAddress,
            int numPartitions, byte[] packedIndex) implements Serializable {
        /** Published with no packed index. */
        public Published(int shuffleId, long mapId, String executorId, long indexAddress, long dataAddress,
                int numPartitions) {
            this(shuffleId, mapId, executorId, indexAddress, dataAddress, numPartitions, null);
        }
    }

    /**
     * Executor → driver (a send, no reply): map outputs published since the last batch, in commit order. A map task
     * does not wait for the driver: what its executor published while the previous batch was on its way goes in
     * the next one. A reader that looks for an output before its batch arrived asks the owner through the driver
     * ({@link PublishMoved}), which answers from what it published.
     */
    public record PublishedBatch(List<Published> outputs) implements Serializable {
    }

    /** Executor → driver: every published map output of a shuffle. Reply: {@link ShuffleLocations}. */
    public record LookupShuffle(int shuffleId) implements Serializable {
    }

    /**
     * The directory of one shuffle, as parallel arrays (compact on the wire); {@code packedIndexes[i]} is null where
     * the output's offsets did not travel with it.
     */
    public record ShuffleLocations(int shuffleId, long[] mapIds, String[] executorIds, long[] indexAddresses,
            long[] dataAddresses, int[] numPartitions, byte[][] packedIndexes) implements Serializable {
    }

    /**
     * Executor → driver: map outputs that Spark's tracker places on {@code executorId} but the directory does not
     * (they moved there, e.g. migrated off a decommissioned executor); the driver asks that executor to publish
     * them from its local files ({@link PublishLocal}). Reply: {@link ShuffleLocations}, the shuffle's directory
     * afterwards.
     */
    public record PublishMoved(int shuffleId, String executorId, long[] mapIds) implements Serializable {
    }

    /** Driver → executor agent (ask): publish these map outputs if this executor has them. Reply: {@link Moved}. */
    public record PublishLocal(int shuffleId, long[] mapIds) implements Serializable {
    }

    /** An executor's answer to {@link PublishLocal}: what it published, and why the rest was not. */
    public record Moved(List<Published> published, String missing) implements Serializable {
    }

    /** Executor → driver: make sure this executor has channels for the stage attempt. Reply: {@link Ack}. */
    public record EnsureStage(int stageId, int attempt, String executorId) implements Serializable {
    }

    /** Where another executor takes channels: its endpoint descriptor and listen port (empty and 0: communicator). */
    public record Peer(String executorId, byte[] endpoint, int port) implements Serializable {
    }

    /**
     * Driver → executor: the executors it may make channels to changed. An executor hears of every other one once:
     * all of them when it registers, then each that registers or leaves after it, so what it receives grows with its
     * own peers, never per stage. {@code appTag} names the application's channels.
     */
    public record Peers(String appTag, List<Peer> joined, List<String> left) implements Serializable {
    }

    /**
     * Driver → executor: create this stage attempt's ends of channels to every peer it knows (one
     * HcommChannelCreate), and to each that joins while the attempt lasts. Its names and roles follow from the two
     * executor ids, so the message is the same few bytes whatever the cluster's size.
     */
    public record ProvisionStage(int stageId, int attempt) implements Serializable {
    }

    /** Driver → executor: the stage attempt ended; destroy its channels (one HcommChannelDestroy). */
    public record EndStage(int stageId, int attempt) implements Serializable {
    }

    /** Executor → driver after a stage's channels are destroyed, and the executor's cumulative counters. */
    public record StageReport(String executorId, int stageId, int attempt, int destroyCalls, int channelsDestroyed,
            ShuffleMetrics.Snapshot totals) implements Serializable {
    }

    /**
     * Executor → driver after a task, only from an executor without HComm transport (it has no channels, so no
     * {@link StageReport} ever carries its counters, e.g. the bytes its fallback fetched): its cumulative counters, and
     * the stage attempt of the task (-1 when unknown).
     */
    public record MetricsReport(String executorId, int stageId, int attempt, ShuffleMetrics.Snapshot totals)
            implements Serializable {
    }

    /** Driver's answer when there is nothing else to say. */
    public record Ack(boolean ok, String reason) implements Serializable {
        public static final Ack OK = new Ack(true, null);
    }
}
