package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.slf4j.Logger;

/**
 * Map outputs that moved to this executor (Spark migrated their files here when it decommissioned their first owner),
 * published from the files Spark keeps for them when the driver asks, once each; never for a shuffle Spark already
 * unregistered here. The driver asks the same for outputs published here whose batch had not reached it yet: those
 * are answered as published. Thread-safe.
 */
public final class MovedOutputs {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final MapOutputPublisher publisher;
    private final ShuffleMetrics metrics;
    /** What was published ("shuffle/mapId"), so each output is published once. Guards itself and released. */
    private final Map<String, Messages.Published> movedIn = new HashMap<>();
    /** Shuffles this executor released (Spark unregistered them): never published late. */
    private final Set<Integer> released = new HashSet<>();

    public MovedOutputs(MapOutputPublisher publisher, ShuffleMetrics metrics) {
        this.publisher = publisher;
        this.metrics = metrics;
    }

    /** Answers the driver's {@code PublishLocal}: what was published, and why the rest was not. */
    public Messages.Moved publishLocal(Messages.PublishLocal ask) {
        synchronized (movedIn) { // against release: nothing is published for a shuffle being released
            List<Messages.Published> done = new ArrayList<>();
            StringBuilder missing = new StringBuilder();
            for (long mapId : ask.mapIds()) {
                try {
                    Messages.Published p = publishOne(ask.shuffleId(), mapId);
                    if (p != null) {
                        done.add(p);
                    } else {
                        missing.append(missing.length() == 0 ? "" : ", ").append("map ").append(mapId);
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.warn("Executor {} could not publish map output {} of shuffle {} moved to it",
                            publisher.executorId(), mapId, ask.shuffleId(), e);
                    missing.append(missing.length() == 0 ? "" : ", ").append("map ").append(mapId).append(" (")
                            .append(e).append(')');
                }
            }
            return new Messages.Moved(done, missing.length() == 0 ? null : missing.toString());
        }
    }

    private Messages.Published publishOne(int shuffleId, long mapId) throws IOException {
        Messages.Published own = publisher.published(shuffleId, mapId);
        if (own != null) {
            return own; // published at commit; its batch had not reached the driver when a reader looked
        }
        String key = shuffleId + "/" + mapId;
        Messages.Published p = movedIn.get(key);
        if (p == null && !released.contains(shuffleId)) {
            IndexShuffleBlockResolver resolver =
                    (IndexShuffleBlockResolver) SparkEnv.get().shuffleManager().shuffleBlockResolver();
            File index = resolver.getIndexFile(shuffleId, mapId, scala.Option.empty());
            File data = resolver.getDataFile(shuffleId, mapId, scala.Option.empty());
            if (index.isFile() && data.isFile()) {
                p = publisher.publish(shuffleId, mapId, lengthsOf(index), data, index);
                movedIn.put(key, p);
                metrics.outputsPublishedLate.inc();
            }
        }
        return p;
    }

    /** The partition lengths of Spark's index file (numPartitions + 1 big-endian offsets). */
    private static long[] lengthsOf(File index) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(index)))) {
            long entries = index.length() / 8;
            if (entries < 1 || index.length() % 8 != 0) {
                throw new IOException("not an index file: " + index + " (" + index.length() + " bytes)");
            }
            long[] lengths = new long[(int) entries - 1];
            long prev = in.readLong();
            for (int i = 0; i < lengths.length; i++) {
                long next = in.readLong();
                lengths[i] = next - prev;
                prev = next;
            }
            return lengths;
        }
    }

    /** Spark unregistered the shuffle: its outputs are freed and none of it is published from now on. */
    public void release(int shuffleId) {
        synchronized (movedIn) {
            released.add(shuffleId);
            movedIn.keySet().removeIf(k -> k.startsWith(shuffleId + "/"));
            publisher.release(shuffleId);
        }
    }
}
