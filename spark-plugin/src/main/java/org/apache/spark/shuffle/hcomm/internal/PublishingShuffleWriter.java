package org.apache.spark.shuffle.hcomm.internal;

import java.io.File;
import java.io.IOException;

import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Spark's own sort-shuffle writer, plus one step at commit: the committed output is published into registered
 * memory so reducers can read it one-sidedly. A failure to publish leaves the output to Spark's fetch (or fails
 * the task with fallback {@code never}).
 */
public final class PublishingShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    private static final Logger LOG = LoggerFactory.getLogger(PublishingShuffleWriter.class);

    private final ShuffleWriter<K, V> delegate;
    private final int shuffleId;
    private final long mapId;
    private final ExecutorRuntime runtime;
    private final IndexShuffleBlockResolver resolver;

    public PublishingShuffleWriter(ShuffleWriter<K, V> delegate, int shuffleId, long mapId, ExecutorRuntime runtime,
            IndexShuffleBlockResolver resolver) {
        this.delegate = delegate;
        this.shuffleId = shuffleId;
        this.mapId = mapId;
        this.runtime = runtime;
        this.resolver = resolver;
    }

    @Override
    public void write(Iterator<Product2<K, V>> records) throws IOException {
        delegate.write(records);
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        Option<MapStatus> status = delegate.stop(success);
        if (success && status.isDefined()) {
            File data = resolver.getDataFile(shuffleId, mapId);
            File index = resolver.getIndexFile(shuffleId, mapId, Option.empty());
            try {
                runtime.publish(shuffleId, mapId, delegate.getPartitionLengths(), data, index);
            } catch (Exception e) {
                if (runtime.fallbackNever()) {
                    throw new IllegalStateException("could not publish shuffle " + shuffleId + " map " + mapId
                            + " for one-sided reads, and " + HcommConf.FALLBACK.key() + "=never", e);
                }
                LOG.warn("Executor {}: shuffle {} map {} not published for one-sided reads; reducers fetch it with "
                        + "Spark's transfer", runtime.executorId(), shuffleId, mapId, e);
            }
        }
        return status;
    }

    @Override
    public long[] getPartitionLengths() {
        return delegate.getPartitionLengths();
    }
}
