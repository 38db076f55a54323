package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.slf4j.Logger;

/**
 * The driver's directory of published map outputs: per shuffle, where each map output lives, as the executor that
 * published it said. Records outputs of registered executors only, and answers executors' lookups with a shuffle's
 * whole directory. Threading: not thread-safe; called only while holding its {@link DriverState}'s lock, so whether
 * an executor is registered and the record of its output cannot race the executor's removal.
 */
final class OutputDirectory {
    private static final Logger LOG = LogCategory.DRIVER_STATE.logger();

    /** Whether an executor is registered (the driver state's registry, read under its lock). */
    private final Predicate<String> registered;
    /** Shuffle → map id → where the output lives, as its owner published it. */
    private final Map<Integer, Map<Long, Messages.Published>> shuffles = new HashMap<>();
    /** Shuffles removed (so an answer that arrives after the removal records nothing): bounded. */
    private final Set<Integer> removedShuffles = Collections.newSetFromMap(StageLedger.boundedMap());
    /** Executors not registered whose publications were dropped (warned once each): bounded. */
    private final Set<String> unregisteredPublishers = Collections.newSetFromMap(StageLedger.boundedMap());

    OutputDirectory(Predicate<String> registered) {
        this.registered = registered;
    }

    /** Records a published output; dropped when its executor is not registered (a batch after its removal). */
    void published(Messages.Published p) {
        if (!registered.test(p.executorId())) {
            if (unregisteredPublishers.add(p.executorId())) {
                LOG.warn("HComm shuffle: executor {} is not registered (removed?): dropped its map output {} of "
                        + "shuffle {}, and will drop its later ones without a warning", p.executorId(), p.mapId(),
                        p.shuffleId());
            }
            return; // a batch that arrived after its executor was removed: its outputs went with it
        }
        shuffles.computeIfAbsent(p.shuffleId(), k -> new HashMap<>()).put(p.mapId(), p);
    }

    /**
     * Records the outputs an executor published late (they moved to it, or were written before its communicator
     * formed), unless it or the shuffle went meanwhile (nothing stale is recorded). A shuffle the directory has no
     * output of yet is recorded too: all its map tasks may have run before any communicator formed.
     */
    void moved(String executorId, int shuffleId, List<Messages.Published> published) {
        if (registered.test(executorId) && !removedShuffles.contains(shuffleId)) {
            published.forEach(this::published);
        }
    }

    /** The shuffle's directory, as it goes to an executor. */
    Messages.ShuffleLocations lookup(int shuffleId) {
        Map<Long, Messages.Published> m = shuffles.getOrDefault(shuffleId, Map.of());
        int n = m.size();
        long[] ids = new long[n];
        String[] execs = new String[n];
        long[] idx = new long[n];
        long[] data = new long[n];
        int[] parts = new int[n];
        byte[][] packed = new byte[n][];
        int i = 0;
        for (var e : m.entrySet()) {
            ids[i] = e.getKey();
            execs[i] = e.getValue().executorId();
            idx[i] = e.getValue().indexAddress();
            data[i] = e.getValue().dataAddress();
            parts[i] = e.getValue().numPartitions();
            packed[i] = e.getValue().packedIndex();
            i++;
        }
        return new Messages.ShuffleLocations(shuffleId, ids, execs, idx, data, parts, packed);
    }

    /** Drops the outputs of a removed executor: they went with it. */
    void executorRemoved(String executorId) {
        for (Map<Long, Messages.Published> m : shuffles.values()) {
            m.values().removeIf(l -> l.executorId().equals(executorId));
        }
    }

    void shuffleRemoved(int shuffleId) {
        shuffles.remove(shuffleId);
        removedShuffles.add(shuffleId);
    }
}
