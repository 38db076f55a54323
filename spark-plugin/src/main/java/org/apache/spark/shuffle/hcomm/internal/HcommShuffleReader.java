package org.apache.spark.shuffle.hcomm.internal;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.internal.config.package$;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections;
import org.apache.spark.shuffle.hcomm.internal.compat.Sorters;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockFetcherIterator;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.util.SystemClock;
import org.apache.spark.util.collection.ExternalSorter;
import org.hcomm.bridge.transport.PeerChannels;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * A reduce task's reader: remote blocks whose owner has a READY channel and a published index are read one-sidedly
 * ({@link OneSidedBlockFetcher}); the task's own blocks, and blocks of peers HComm cannot reach, go through Spark's
 * {@link ShuffleBlockFetcherIterator} (local reads and the fallback). Both streams of blocks then go through what
 * Spark's own reader does: deserialisation, record metrics, aggregation and key ordering.
 */
public final class HcommShuffleReader<K, C> implements ShuffleReader<K, C> {
    private static final Logger LOG = LoggerFactory.getLogger(HcommShuffleReader.class);
    private static final Set<String> LOGGED_FALLBACKS = ConcurrentHashMap.newKeySet();

    private final BaseShuffleHandle<K, ?, C> handle;
    private final int startMapIndex;
    private final int endMapIndex;
    private final int startPartition;
    private final int endPartition;
    private final TaskContext context;
    private final ShuffleReadMetricsReporter readMetrics;
    private final ExecutorRuntime runtime;

    public HcommShuffleReader(BaseShuffleHandle<K, ?, C> handle, int startMapIndex, int endMapIndex,
            int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter readMetrics,
            ExecutorRuntime runtime) {
        this.handle = handle;
        this.startMapIndex = startMapIndex;
        this.endMapIndex = endMapIndex;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.context = context;
        this.readMetrics = readMetrics;
        this.runtime = runtime;
    }

    @Override
    public Iterator<Product2<K, C>> read() {
        SparkEnv env = SparkEnv.get();
        MapOutputTracker tracker = env.mapOutputTracker();
        Iterator<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> byAddress =
                tracker.getMapSizesByExecutorId(handle.shuffleId(), startMapIndex, endMapIndex, startPartition,
                        endPartition);
        List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks =
                new ArrayList<>();
        List<MapRead> oneSided = new ArrayList<>();
        String self = env.blockManager().blockManagerId().executorId();
        StageChannels.StageKey stage = new StageChannels.StageKey(context.stageId(), context.stageAttemptNumber());
        boolean leased = false;
        Map<BlockManagerId, List<Tuple3<BlockId, Object, Object>>> remote = new LinkedHashMap<>();
        while (byAddress.hasNext()) {
            var entry = byAddress.next();
            if (entry._1().executorId().equals(self) || runtime == null || !runtime.canRead()) {
                sparkBlocks.add(entry);
            } else {
                remote.put(entry._1(), new ArrayList<>(ScalaCollections.asJava(entry._2())));
            }
        }
        OneSidedBlockFetcher fetcher = null;
        try {
            // inside the try: a failure while planning (fallback `never`) must still release the stage lease,
            // else the stage's channels outlive its end by the end wait (30 s)
            if (!remote.isEmpty()) {
                leased = runtime.beginStageRead(stage);
                if (leased) {
                    planOneSided(stage, remote, oneSided, sparkBlocks);
                } else {
                    remote.forEach((bm, blocks) -> fallBack(bm, blocks, sparkBlocks,
                            "the stage's channels are gone"));
                }
            }
            if (!oneSided.isEmpty()) {
                long bytes = 0;
                for (MapRead r : oneSided) {
                    for (Tuple3<BlockId, Object, Object> b : r.blocks()) {
                        bytes += (Long) b._2();
                    }
                }
                var lease = runtime.borrowReadResources(bytes);
                if (lease != null) {
                    fetcher = new OneSidedBlockFetcher(runtime, stage, handle.shuffleId(), oneSided, readMetrics,
                            env.serializerManager(), lease.chunks(), lease.batches());
                } else {
                    for (MapRead r : oneSided) {
                        fallBack(r.owner(), r.blocks(), sparkBlocks, "no free receive buffer chunks within "
                                + HcommConf.READ_TIMEOUT.key() + " (raise " + HcommConf.RECEIVE_BUFFER_SIZE.key()
                                + ")");
                    }
                }
            }
        } finally {
            OneSidedBlockFetcher f = fetcher;
            boolean l = leased;
            context.addTaskCompletionListener(ctx -> {
                // A task that stops reading early (a sort-merge join whose other side ended, a limit) never
                // exhausts the records iterator, which merges the read metrics at its end; merge here too, so
                // Spark's task metrics count every byte that was read. (Spark's own reader leaves such bytes to
                // the next executor heartbeat, i.e. loses them when the task ends first.)
                ctx.taskMetrics().mergeShuffleReadMetrics();
                try {
                    if (f != null) {
                        f.close();
                    }
                } finally {
                    if (l) {
                        runtime.endStageRead(stage); // else the stage's channels would wait the end wait out
                    }
                }
            });
        }
        // Spark's fetch starts at construction, so its blocks arrive while the one-sided ones are consumed
        Iterator<Tuple2<BlockId, InputStream>> spark = sparkBlocks.isEmpty() ? null : sparkFetch(env, sparkBlocks);
        Iterator<Tuple2<BlockId, InputStream>> streams = fetcher != null ? fetcher
                : spark != null ? spark : ScalaCollections.emptyIterator();
        if (fetcher != null && spark != null) {
            streams = ScalaCollections.concat(streams, spark);
        }
        return aggregate(records(streams));
    }

    /** Decides, per remote block, between a one-sided read and Spark's fetch. */
    private void planOneSided(StageChannels.StageKey stage,
            Map<BlockManagerId, List<Tuple3<BlockId, Object, Object>>> remote, List<MapRead> oneSided,
            List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks) {
        ShuffleDirectory directory = runtime.directory(handle.shuffleId());
        for (var e : remote.entrySet()) {
            BlockManagerId owner = e.getKey();
            PeerChannels.PeerChannel channel = runtime.channelTo(stage, owner.executorId());
            if (channel == null) {
                String why = "no READY channel to executor " + owner.executorId() + " within "
                        + HcommConf.CHANNEL_SETUP_TIMEOUT.key();
                if (runtime.fallbackNever()) {
                    throw ownerFailed(stage, owner, e.getValue().get(0), why);
                }
                fallBack(owner, e.getValue(), sparkBlocks, why);
                continue;
            }
            boolean crossHost = !owner.host().equals(runtime.host());
            // the partitions this task reads of each map output, in map order
            Map<Long, TreeMap<Integer, Tuple3<BlockId, Object, Object>>> byMap = new LinkedHashMap<>();
            Map<Long, Integer> mapIndex = new HashMap<>();
            List<Tuple3<BlockId, Object, Object>> otherKinds = new ArrayList<>();
            List<Tuple3<BlockId, Object, Object>> unpublished = new ArrayList<>();
            for (Tuple3<BlockId, Object, Object> b : e.getValue()) {
                if (!(b._1() instanceof ShuffleBlockId id)) {
                    otherKinds.add(b); // e.g. push-based shuffle's merged blocks: not published one-sidedly
                    continue;
                }
                byMap.computeIfAbsent(id.mapId(), k -> new TreeMap<>()).put(id.reduceId(), b);
                mapIndex.put(id.mapId(), (Integer) b._3());
            }
            // outputs the tracker places on this owner that the directory does not: published since it was
            // fetched, or moved to this owner (migrated off a decommissioned executor) and not yet published by it
            ShuffleDirectory known = directory;
            long[] notFound = byMap.keySet().stream().filter(id -> known.find(id, owner.executorId()) == null)
                    .mapToLong(Long::longValue).toArray();
            if (notFound.length > 0) {
                directory = runtime.refreshDirectory(handle.shuffleId());
                ShuffleDirectory refreshed = directory;
                long[] moved = java.util.Arrays.stream(notFound)
                        .filter(id -> refreshed.find(id, owner.executorId()) == null).toArray();
                if (moved.length > 0) {
                    directory = runtime.publishMoved(handle.shuffleId(), owner.executorId(), moved);
                }
            }
            for (var m : byMap.entrySet()) {
                ShuffleDirectory.Entry where = directory.find(m.getKey(), owner.executorId());
                if (where == null) {
                    unpublished.addAll(m.getValue().values());
                    continue;
                }
                int first = m.getValue().firstKey();
                int end = m.getValue().lastKey() + 1;
                oneSided.add(new MapRead(owner, crossHost, m.getKey(), mapIndex.get(m.getKey()), first, end,
                        where.indexAddress(), where.dataAddress(), channel, new ArrayList<>(m.getValue().values())));
            }
            if (!otherKinds.isEmpty()) {
                fallBack(owner, otherKinds, sparkBlocks, "blocks of a kind HComm does not read ("
                        + otherKinds.get(0)._1() + ")");
            }
            if (!unpublished.isEmpty()) {
                String why = "map outputs not published for one-sided reads by executor " + owner.executorId()
                        + " (lost, or its log says why)";
                if (runtime.fallbackNever()) {
                    throw ownerFailed(stage, owner, unpublished.get(0), why);
                }
                fallBack(owner, unpublished, sparkBlocks, why);
            }
        }
    }

    /**
     * An owner that did not answer the stage's channel setup, or whose map outputs are not in the directory (it was
     * lost, and the driver forgot its outputs before Spark's map output tracker did), cannot serve its blocks
     * one-sidedly; with fallback `never` that is a fetch failure naming it (as Spark's own fetch from a lost executor
     * is), so Spark recomputes its map outputs instead of failing the task, with the same stale map statuses, until
     * the job aborts. A task of a stage attempt that has ended is killed instead: it must not blame a healthy owner.
     */
    private RuntimeException ownerFailed(StageChannels.StageKey stage, BlockManagerId owner,
            Tuple3<BlockId, Object, Object> first, String why) {
        if (runtime.stageEnded(stage)) {
            return runtime.endedWhileReading(stage, why, null);
        }
        BlockId block = first._1();
        long mapId = -1;
        int reduceId = -1;
        if (block instanceof ShuffleBlockId id) {
            mapId = id.mapId();
            reduceId = id.reduceId();
        } else if (block instanceof ShuffleBlockBatchId id) {
            mapId = id.mapId();
            reduceId = id.startReduceId();
        }
        int mapIndex = (Integer) first._3();
        return SneakyThrow.sneaky(new FetchFailedException(owner, handle.shuffleId(), mapId, mapIndex, reduceId,
                "HComm cannot read shuffle " + handle.shuffleId() + " from executor " + owner.executorId() + ": "
                        + why + ", and " + HcommConf.FALLBACK.key() + "=never forbids Spark's fetch", null));
    }

    private void fallBack(BlockManagerId owner, List<Tuple3<BlockId, Object, Object>> blocks,
            List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks,
            String reason) {
        if (runtime.fallbackNever()) {
            throw new IllegalStateException("HComm cannot read " + blocks.size() + " blocks of shuffle "
                    + handle.shuffleId() + " from executor " + owner.executorId() + ": " + reason + ", and "
                    + HcommConf.FALLBACK.key() + "=never forbids Spark's fetch");
        }
        if (LOGGED_FALLBACKS.add(owner.executorId() + "|" + reason)) {
            LOG.warn("Shuffle blocks from executor {} are fetched by Spark's transfer instead of one-sided reads: {} "
                    + "(set {}=never to make this an error)", owner.executorId(), reason, HcommConf.FALLBACK.key());
        }
        sparkBlocks.add(new Tuple2<>(owner, ScalaCollections.toSeq(blocks)));
    }

    private Iterator<Tuple2<BlockId, InputStream>> sparkFetch(SparkEnv env,
            List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> blocks) {
        SparkConf conf = env.conf();
        BlockManager bm = env.blockManager();
        SerializerManager sm = env.serializerManager();
        package$ config = package$.MODULE$;
        ShuffleReadMetricsReporter metrics = runtime == null ? readMetrics
                : new FallbackCountingMetrics(readMetrics, runtime.metrics());
        return new ShuffleBlockFetcherIterator(context, bm.blockStoreClient(), bm, env.mapOutputTracker(),
                ScalaCollections.asScala(blocks.iterator()),
                (scala.Function2<BlockId, InputStream, InputStream>) sm::wrapStream,
                (Long) conf.get(config.REDUCER_MAX_SIZE_IN_FLIGHT()) * 1024 * 1024,
                (Integer) conf.get(config.REDUCER_MAX_REQS_IN_FLIGHT()),
                (Integer) conf.get(config.REDUCER_MAX_BLOCKS_IN_FLIGHT_PER_ADDRESS()),
                (Long) conf.get(config.MAX_REMOTE_BLOCK_SIZE_FETCH_TO_MEM()),
                (Integer) conf.get(config.SHUFFLE_MAX_ATTEMPTS_ON_NETTY_OOM()),
                (Boolean) conf.get(config.SHUFFLE_DETECT_CORRUPT()),
                (Boolean) conf.get(config.SHUFFLE_DETECT_CORRUPT_MEMORY()),
                (Boolean) conf.get(config.SHUFFLE_CHECKSUM_ENABLED()),
                (String) conf.get(config.SHUFFLE_CHECKSUM_ALGORITHM()),
                metrics, false, new SystemClock()).toCompletionIterator();
    }

    /** Deserialised records of every block, counted, with the task's read metrics merged at the end. */
    private Iterator<Tuple2<Object, Object>> records(Iterator<Tuple2<BlockId, InputStream>> streams) {
        SerializerInstance serializer = handle.dependency().serializer().newInstance();
        Iterator<Tuple2<Object, Object>> recs = new AbstractIterator<>() {
            private Iterator<Tuple2<Object, Object>> current = ScalaCollections.emptyIterator();
            private boolean merged;

            @Override
            public boolean hasNext() {
                while (!current.hasNext()) {
                    if (!streams.hasNext()) {
                        if (!merged) {
                            merged = true;
                            context.taskMetrics().mergeShuffleReadMetrics();
                        }
                        return false;
                    }
                    DeserializationStream in = serializer.deserializeStream(streams.next()._2());
                    current = in.asKeyValueIterator();
                }
                return true;
            }

            @Override
            public Tuple2<Object, Object> next() {
                if (!hasNext()) {
                    throw new java.util.NoSuchElementException();
                }
                readMetrics.incRecordsRead(1);
                return current.next();
            }
        };
        return new InterruptibleIterator<>(context, recs);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Iterator<Product2<K, C>> aggregate(Iterator<Tuple2<Object, Object>> in) {
        ShuffleDependency<K, ?, C> dep = handle.dependency();
        Iterator result;
        if (dep.keyOrdering().isDefined()) {
            Option<Aggregator> agg;
            if (dep.aggregator().isDefined()) {
                Aggregator a = dep.aggregator().get();
                agg = dep.mapSideCombine()
                        ? Option.apply(new Aggregator(x -> x, a.mergeCombiners(), a.mergeCombiners()))
                        : Option.apply(a);
            } else {
                agg = Option.empty();
            }
            ExternalSorter sorter = Sorters.sorter(context, (Option) agg, (Option) dep.keyOrdering(),
                    dep.serializer());
            result = sorter.insertAllAndUpdateMetrics((Iterator) in);
        } else if (dep.aggregator().isDefined()) {
            Aggregator a = dep.aggregator().get();
            result = dep.mapSideCombine() ? a.combineCombinersByKey((Iterator) in, context)
                    : a.combineValuesByKey((Iterator) in, context);
        } else {
            result = in;
        }
        return result instanceof InterruptibleIterator ? result : new InterruptibleIterator(context, result);
    }
}
