package org.apache.spark.shuffle.hcomm.internal.read;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import com.codahale.metrics.Counter;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.shuffle.hcomm.internal.fetch.MapRead;
import org.apache.spark.shuffle.hcomm.internal.fetch.OneSidedBlockFetcher;
import org.apache.spark.shuffle.hcomm.internal.fetch.ReadResources;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.hcomm.bridge.transport.PeerChannels;
import org.slf4j.Logger;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Iterator;
import scala.collection.Seq;

/**
 * Decides what a reduce task reads one-sidedly and what Spark's fetch reads, before the task reads: the task's own
 * executor's blocks and every block when HComm cannot read here go to Spark; a remote owner's blocks are read
 * one-sidedly when the stage attempt has a READY channel to it and its outputs are in the directory (asking the
 * driver again, and the owner to publish outputs that moved to it, when the tracker names outputs the directory
 * lacks); the rest fall back, or fail, as {@link Fallback} decides. Starts the one-sided reads
 * ({@link OneSidedBlockFetcher}) and holds the stage's channels until the task completes (the endpoint path). On the
 * communicator path a {@link RemotePlanner} of that path plans the remote owners' blocks instead. One per executor;
 * thread-safe: task threads plan concurrently, and what it keeps lives in its thread-safe collaborators.
 */
public final class ReadPlanner {
    private static final Logger LOG = LogCategory.READER.logger();

    /** A remote owner's blocks as the tracker lists them. */
    public record OwnerBlocks(BlockManagerId owner, List<Tuple3<BlockId, Object, Object>> blocks) {
    }

    /**
     * The plan of the communicator path, whose reads go through windows ({@code window.WindowReadPlanner}): for
     * the remote owners' blocks of a task, starts what reads them one-sidedly, adds those Spark's fetch reads to
     * {@code sparkBlocks}, and closes what it started when the task completes. Thread-safe, as the planner.
     */
    public interface RemotePlanner {
        /** The blocks read one-sidedly, their reads already under way, or null when there are none. */
        scala.collection.Iterator<Tuple2<BlockId, InputStream>> plan(int shuffleId, List<OwnerBlocks> remote,
                List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks, TaskContext context,
                ShuffleReadMetricsReporter readMetrics);
    }

    private final String executorId;
    private final String host;
    private final Fallback fallback;
    private final ShuffleMetrics metrics;
    /** Null without a transport: every block then goes to Spark's fetch. */
    private final ReadResources resources;
    private final StageLeases leases;
    private final DirectoryCache directories;
    private final Blame blame;
    /** Where the remote bytes Spark's fetch reads for this planner's tasks are counted. */
    private final Counter sparkBytes;
    /** Non-null on the communicator path: it plans the remote blocks. */
    private final RemotePlanner remotePlanner;

    /** A planner of an executor with a transport. */
    public ReadPlanner(String executorId, String host, Fallback fallback, ShuffleMetrics metrics,
            ReadResources resources, StageLeases leases, DirectoryCache directories, Blame blame) {
        this(executorId, host, fallback, metrics, resources, leases, directories, blame, metrics.bytesReadFallback);
    }

    private ReadPlanner(String executorId, String host, Fallback fallback, ShuffleMetrics metrics,
            ReadResources resources, StageLeases leases, DirectoryCache directories, Blame blame, Counter sparkBytes) {
        this(executorId, host, fallback, metrics, resources, leases, directories, blame, sparkBytes, null);
    }

    private ReadPlanner(String executorId, String host, Fallback fallback, ShuffleMetrics metrics,
            ReadResources resources, StageLeases leases, DirectoryCache directories, Blame blame, Counter sparkBytes,
            RemotePlanner remotePlanner) {
        this.remotePlanner = remotePlanner;
        this.sparkBytes = sparkBytes;
        this.executorId = executorId;
        this.host = host;
        this.fallback = fallback;
        this.metrics = metrics;
        this.resources = resources;
        this.leases = leases;
        this.directories = directories;
        this.blame = blame;
    }

    /** A planner of an executor where HComm is unavailable: Spark's fetch reads everything, its bytes counted. */
    public static ReadPlanner sparkOnly(String executorId, Fallback fallback, ShuffleMetrics metrics) {
        return new ReadPlanner(executorId, null, fallback, metrics, null, null, null, null,
                metrics.bytesReadFallback);
    }

    /**
     * The planner of an executor on the communicator path before its first communicator is ready: Spark's fetch
     * reads everything, its remote bytes counted as {@code bytesReadBeforeCommunicator}, not as a fallback.
     */
    public static ReadPlanner beforeCommunicator(String executorId, Fallback fallback, ShuffleMetrics metrics) {
        return new ReadPlanner(executorId, null, fallback, metrics, null, null, null, null,
                metrics.bytesReadBeforeCommunicator);
    }

    /**
     * The planner of an executor on the communicator path: {@code windows} plans the remote owners' blocks (a
     * member's read through a window, the rest by Spark's fetch).
     */
    public static ReadPlanner windowed(String executorId, Fallback fallback, ShuffleMetrics metrics,
            RemotePlanner windows) {
        return new ReadPlanner(executorId, null, fallback, metrics, null, null, null, null,
                metrics.bytesReadFallback, windows);
    }

    private boolean canRead() {
        return remotePlanner != null || (resources != null && resources.open());
    }

    /** The plan of the reduce task {@code context} reading partitions [startPartition, endPartition) of a shuffle. */
    public ReadPlan plan(int shuffleId, int startMapIndex, int endMapIndex, int startPartition, int endPartition,
            TaskContext context, ShuffleReadMetricsReporter readMetrics) {
        SparkEnv env = SparkEnv.get();
        Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> byAddress = env.mapOutputTracker()
                .getMapSizesByExecutorId(shuffleId, startMapIndex, endMapIndex, startPartition, endPartition);
        List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks = new ArrayList<>();
        List<OwnerBlocks> remote = new ArrayList<>();
        while (byAddress.hasNext()) {
            var entry = byAddress.next();
            if (entry._1().executorId().equals(executorId) || !canRead()) {
                sparkBlocks.add(entry);
            } else {
                remote.add(new OwnerBlocks(entry._1(), new ArrayList<>(ScalaCollections.asJava(entry._2()))));
            }
        }
        if (remotePlanner != null) {
            return new ReadPlan(remotePlanner.plan(shuffleId, remote, sparkBlocks, context, readMetrics), sparkBlocks,
                    new FallbackCountingMetrics(readMetrics, metrics, sparkBytes));
        }
        StageAttempt stage = new StageAttempt(context.stageId(), context.stageAttemptNumber());
        OneSidedBlockFetcher fetcher = null;
        boolean leased = false;
        try {
            // inside the try: a failure while planning (fallback `never`) must still release the stage lease,
            // else the stage's channels outlive its end by the end wait (30 s)
            if (!remote.isEmpty()) {
                leased = leases.acquire(stage);
                List<MapRead> oneSided = new ArrayList<>();
                // fetched once per task, refreshed when an owner's outputs are missing from it
                ShuffleDirectory[] directory = {leased ? directories.directory(shuffleId) : null};
                for (OwnerBlocks o : remote) {
                    if (leased) {
                        planOwner(stage, shuffleId, o, directory, oneSided, sparkBlocks);
                    } else {
                        // the attempt ended before this task leased it: with fallback `never`, killed as a
                        // reader of an ended attempt is, not a task error that would fail the job
                        ownerUnreadable(stage, shuffleId, o.owner(), o.blocks(), sparkBlocks,
                                "the stage's channels are gone");
                    }
                }
                fetcher = start(stage, shuffleId, oneSided, sparkBlocks, readMetrics, env);
            }
        } finally {
            OneSidedBlockFetcher f = fetcher;
            boolean l = leased;
            context.addTaskCompletionListener(ctx -> {
                // A task that stops reading early (a sort-merge join whose other side ended, a limit) never exhausts
                // the records iterator, which merges the read metrics at its end; merge here too, so Spark's task
                // metrics count every byte that was read. (Spark's own reader leaves such bytes to the next executor
                // heartbeat, i.e. loses them when the task ends first.)
                ctx.taskMetrics().mergeShuffleReadMetrics();
                try {
                    if (f != null) {
                        f.close();
                    }
                } finally {
                    if (l) { // else the stage's channels would wait the end wait out; not under reads still closing
                        (f != null ? f.retired() : CompletableFuture.completedFuture(null))
                                .whenComplete((ok, e) -> leases.release(stage));
                    }
                }
            });
        }
        return new ReadPlan(fetcher, sparkBlocks, new FallbackCountingMetrics(readMetrics, metrics, sparkBytes));
    }

    /** Starts the one-sided reads of {@code oneSided}, or sends them to Spark when no receive buffer is free. */
    private OneSidedBlockFetcher start(StageAttempt stage, int shuffleId, List<MapRead> oneSided,
            List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks,
            ShuffleReadMetricsReporter readMetrics, SparkEnv env) {
        if (oneSided.isEmpty()) {
            return null;
        }
        long bytes = 0;
        for (MapRead r : oneSided) {
            for (Tuple3<BlockId, Object, Object> b : r.blocks()) {
                bytes += (Long) b._2();
            }
        }
        OneSidedBlockFetcher fetcher = OneSidedBlockFetcher.open(resources, blame, metrics, stage, shuffleId,
                oneSided, bytes, readMetrics, env.serializerManager());
        if (fetcher == null) {
            for (MapRead r : oneSided) {
                fallBack(fallback, shuffleId, r.owner(), r.blocks(), sparkBlocks, "no free receive buffer chunks "
                        + "within " + HcommConf.READ_TIMEOUT.key() + " (raise " + HcommConf.RECEIVE_BUFFER_SIZE.key()
                        + ")");
            }
        }
        return fetcher;
    }

    /** Decides, for one remote owner's blocks, between one-sided reads and Spark's fetch. */
    private void planOwner(StageAttempt stage, int shuffleId, OwnerBlocks o, ShuffleDirectory[] known,
            List<MapRead> oneSided,
            List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks) {
        BlockManagerId owner = o.owner();
        PeerChannels.PeerChannel channel = leases.channelTo(stage, owner.executorId());
        if (channel == null) {
            ownerUnreadable(stage, shuffleId, owner, o.blocks(), sparkBlocks, "no READY channel to executor "
                    + owner.executorId() + " within " + HcommConf.CHANNEL_SETUP_TIMEOUT.key());
            return;
        }
        boolean crossHost = !owner.host().equals(host);
        // the partitions this task reads of each map output, in map order
        Map<Long, TreeMap<Integer, Tuple3<BlockId, Object, Object>>> byMap = new LinkedHashMap<>();
        Map<Long, Integer> mapIndex = new HashMap<>();
        List<Tuple3<BlockId, Object, Object>> otherKinds = new ArrayList<>();
        List<Tuple3<BlockId, Object, Object>> unpublished = new ArrayList<>();
        for (Tuple3<BlockId, Object, Object> b : o.blocks()) {
            if (!(b._1() instanceof ShuffleBlockId id)) {
                otherKinds.add(b); // e.g. push-based shuffle's merged blocks: not published one-sidedly
                continue;
            }
            byMap.computeIfAbsent(id.mapId(), k -> new TreeMap<>()).put(id.reduceId(), b);
            mapIndex.put(id.mapId(), (Integer) b._3());
        }
        known[0] = directoryFor(known[0], shuffleId, owner.executorId(), byMap.keySet());
        ShuffleDirectory directory = known[0];
        for (var m : byMap.entrySet()) {
            ShuffleDirectory.Entry where = directory.find(m.getKey(), owner.executorId());
            if (where == null) {
                unpublished.addAll(m.getValue().values());
                continue;
            }
            int first = m.getValue().firstKey();
            int end = m.getValue().lastKey() + 1;
            oneSided.add(new MapRead(owner, crossHost, m.getKey(), mapIndex.get(m.getKey()), first, end,
                    where.indexAddress(), where.dataAddress(), channel, new ArrayList<>(m.getValue().values()),
                    offsets(where, shuffleId, m.getKey(), first, end)));
        }
        if (!otherKinds.isEmpty()) {
            fallBack(fallback, shuffleId, owner, otherKinds, sparkBlocks, "blocks of a kind HComm does not read ("
                    + otherKinds.get(0)._1() + ")");
        }
        if (!unpublished.isEmpty()) {
            ownerUnreadable(stage, shuffleId, owner, unpublished, sparkBlocks, "map outputs not published for "
                    + "one-sided reads by executor " + owner.executorId() + " (lost, or its log says why)");
        }
    }

    /**
     * The offsets of partitions [first, end) that travelled with the output's publication, or null: then the reader
     * reads them from the owner's index (also when what travelled cannot be decoded: the index is the truth; warned
     * once per output, not by every task that meets it).
     */
    private long[] offsets(ShuffleDirectory.Entry where, int shuffleId, long mapId, int first, int end) {
        try {
            return where.offsets(first, end);
        } catch (IllegalArgumentException e) {
            if (directories.firstUndecodable(shuffleId, mapId)) {
                LOG.warn("Packed index of map output {} of shuffle {} on executor {} cannot be decoded ({}); reading "
                        + "its index instead", mapId, shuffleId, where.executorId(), e.getMessage());
            }
            return null;
        }
    }

    /**
     * {@code directory}, or a newer copy of it with every output of {@code mapIds} that the tracker places on
     * {@code ownerId} in it if it can be: outputs the copy lacks were published since it was fetched, or moved to
     * this owner (migrated off a decommissioned executor) and not yet published by it.
     */
    private ShuffleDirectory directoryFor(ShuffleDirectory directory, int shuffleId, String ownerId,
            Set<Long> mapIds) {
        ShuffleDirectory known = directory;
        long[] notFound = mapIds.stream().filter(id -> known.find(id, ownerId) == null).mapToLong(Long::longValue)
                .toArray();
        if (notFound.length > 0) {
            directory = directories.refresh(shuffleId);
            ShuffleDirectory refreshed = directory;
            long[] moved = Arrays.stream(notFound).filter(id -> refreshed.find(id, ownerId) == null).toArray();
            if (moved.length > 0) {
                directory = directories.publishMoved(shuffleId, ownerId, moved);
            }
        }
        return directory;
    }

    /** An owner that cannot serve these blocks one-sidedly: a fetch failure naming it, or Spark's fetch. */
    private void ownerUnreadable(StageAttempt stage, int shuffleId, BlockManagerId owner,
            List<Tuple3<BlockId, Object, Object>> blocks,
            List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks, String why) {
        fallBackOrFail(fallback, owner, blocks, sparkBlocks, why,
                () -> blame.ownerFailed(stage, shuffleId, owner, blocks.get(0), why));
    }

    /**
     * Blocks HComm cannot read for {@code reason}: Spark's fetch reads them (warned once per owner and reason), or,
     * as {@code fallback} decides, the task fails. Both paths' planners use it.
     */
    public static void fallBack(Fallback fallback, int shuffleId, BlockManagerId owner,
            List<Tuple3<BlockId, Object, Object>> blocks,
            List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks, String reason) {
        fallBackOrFail(fallback, owner, blocks, sparkBlocks, reason, () -> new IllegalStateException("HComm cannot "
                + "read " + blocks.size() + " blocks of shuffle " + shuffleId + " from executor " + owner.executorId()
                + ": " + reason + ", and " + HcommConf.FALLBACK.key() + "=never forbids Spark's fetch"));
    }

    /** Spark's fetch reads these blocks (warned once per owner and reason), or, as {@link Fallback} decides, fails. */
    public static void fallBackOrFail(Fallback fallback, BlockManagerId owner,
            List<Tuple3<BlockId, Object, Object>> blocks,
            List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks, String reason,
            Supplier<RuntimeException> failure) {
        fallback.fallBackOrFail(failure, owner.executorId() + "|" + reason,
                () -> LOG.warn("Shuffle blocks from executor {} are fetched by Spark's transfer instead of one-sided "
                        + "reads: {} (set {}=never to make this an error)", owner.executorId(), reason,
                        HcommConf.FALLBACK.key()));
        sparkBlocks.add(new Tuple2<>(owner, ScalaCollections.toSeq(blocks)));
    }
}
