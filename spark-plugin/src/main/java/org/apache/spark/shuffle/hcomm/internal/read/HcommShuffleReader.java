package org.apache.spark.shuffle.hcomm.internal.read;

import java.io.InputStream;
import java.util.List;

import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.internal.config.package$;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections;
import org.apache.spark.shuffle.hcomm.internal.compat.Sorters;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockFetcherIterator;
import org.apache.spark.util.SystemClock;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * A reduce task's reader, in the shape of Spark's own: it receives the {@link ReadPlan} ({@link ReadPlanner} decided
 * before it what is read one-sidedly and what Spark's {@link ShuffleBlockFetcherIterator} reads: the task's own
 * blocks and those HComm cannot read) and only reads: both streams of blocks go through what Spark's reader does,
 * deserialisation, record metrics, aggregation and key ordering. Confined to the task's thread.
 */
public final class HcommShuffleReader<K, C> implements ShuffleReader<K, C> {
    private final BaseShuffleHandle<K, ?, C> handle;
    private final ReadPlan plan;
    private final TaskContext context;
    private final ShuffleReadMetricsReporter readMetrics;

    public HcommShuffleReader(BaseShuffleHandle<K, ?, C> handle, ReadPlan plan, TaskContext context,
            ShuffleReadMetricsReporter readMetrics) {
        this.handle = handle;
        this.plan = plan;
        this.context = context;
        this.readMetrics = readMetrics;
    }

    @Override
    public Iterator<Product2<K, C>> read() {
        // Spark's fetch starts at construction, so its blocks arrive while the one-sided ones are consumed
        Iterator<Tuple2<BlockId, InputStream>> spark = plan.sparkBlocks().isEmpty() ? null
                : sparkFetch(SparkEnv.get(), plan.sparkBlocks());
        Iterator<Tuple2<BlockId, InputStream>> oneSided = plan.oneSided();
        Iterator<Tuple2<BlockId, InputStream>> streams = oneSided != null ? oneSided
                : spark != null ? spark : ScalaCollections.emptyIterator();
        if (oneSided != null && spark != null) {
            streams = ScalaCollections.concat(streams, spark);
        }
        return aggregate(records(streams));
    }

    private Iterator<Tuple2<BlockId, InputStream>> sparkFetch(SparkEnv env,
            List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> blocks) {
        SparkConf conf = env.conf();
        BlockManager bm = env.blockManager();
        SerializerManager sm = env.serializerManager();
        package$ config = package$.MODULE$;
        ShuffleReadMetricsReporter metrics = plan.sparkMetrics();
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
