package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.File;
import java.io.IOException;

import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.slf4j.Logger;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Spark's own sort-shuffle writer, plus one step at commit: the committed output is published into registered
 * memory so reducers can read it one-sidedly. A failure to publish leaves the output to Spark's fetch (or fails
 * the task with fallback {@code never}). The publisher is the map task's from start to end: with
 * {@code writeTarget=arena} Spark's writer writes into its arena ({@link ArenaBlockResolver#taskWrites}). Used by
 * its map task's thread.
 */
public final class PublishingShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    private static final Logger LOG = LogCategory.WRITER.logger();

    private final ShuffleWriter<K, V> delegate;
    private final int shuffleId;
    private final long mapId;
    private final MapOutputPublisher publisher;
    private final Fallback fallback;
    private final IndexShuffleBlockResolver resolver;
    private final ArenaBlockResolver arena;

    /** {@code arena}: with {@code writeTarget=arena}, where Spark's writer finds {@code publisher}; else null. */
    public PublishingShuffleWriter(ShuffleWriter<K, V> delegate, int shuffleId, long mapId,
            MapOutputPublisher publisher, Fallback fallback, IndexShuffleBlockResolver resolver,
            ArenaBlockResolver arena) {
        this.delegate = delegate;
        this.shuffleId = shuffleId;
        this.mapId = mapId;
        this.publisher = publisher;
        this.fallback = fallback;
        this.resolver = resolver;
        this.arena = arena;
        if (arena != null) {
            arena.taskWrites(shuffleId, mapId, publisher);
        }
    }

    @Override
    public void write(Iterator<Product2<K, V>> records) throws IOException {
        delegate.write(records);
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        try {
            return stopAndPublish(success);
        } finally {
            if (arena != null) {
                arena.taskEnded(shuffleId, mapId);
            }
        }
    }

    private Option<MapStatus> stopAndPublish(boolean success) {
        Option<MapStatus> status = delegate.stop(success);
        if (success && status.isDefined()) {
            File data = resolver.getDataFile(shuffleId, mapId);
            File index = resolver.getIndexFile(shuffleId, mapId, Option.empty());
            try {
                publisher.publishAndAnnounce(shuffleId, mapId, delegate.getPartitionLengths(), data, index);
            } catch (Exception e) {
                fallback.fallBackOrFail(() -> new IllegalStateException("could not publish shuffle " + shuffleId
                        + " map " + mapId + " for one-sided reads, and " + HcommConf.FALLBACK.key() + "=never", e),
                        null, () -> LOG.warn("Executor {}: shuffle {} map {} not published for one-sided reads; "
                                + "reducers fetch it with Spark's transfer", publisher.executorId(), shuffleId, mapId,
                                e));
            }
        }
        return status;
    }

    @Override
    public long[] getPartitionLengths() {
        return delegate.getPartitionLengths();
    }
}
