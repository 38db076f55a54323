package org.apache.spark.shuffle.hcomm.internal.read;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.slf4j.Logger;

/**
 * An executor's copy of each shuffle's {@link ShuffleDirectory}, fetched from the driver when a reduce task first
 * needs it and again when the tracker names an output the copy lacks. The copy is shared by the executor's reduce
 * tasks, so each output's packed index is decoded once per copy ({@link ShuffleDirectory.Entry}). Thread-safe.
 */
public final class DirectoryCache {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final DriverClient driver;
    private final Map<Integer, ShuffleDirectory> directories = new ConcurrentHashMap<>();
    /** By shuffle, the outputs whose packed index a reader found undecodable (warned about once each). */
    private final Map<Integer, Set<Long>> undecodable = new ConcurrentHashMap<>();

    public DirectoryCache(DriverClient driver) {
        this.driver = driver;
    }

    ShuffleDirectory directory(int shuffleId) {
        ShuffleDirectory d = directories.get(shuffleId);
        return d != null ? d : refresh(shuffleId);
    }

    ShuffleDirectory refresh(int shuffleId) {
        try {
            ShuffleDirectory d = ShuffleDirectory.of(driver.lookup(shuffleId));
            directories.put(shuffleId, d);
            return d;
        } catch (Exception e) {
            LOG.warn("Executor {} could not look up shuffle {} on the driver", driver.executorId(), shuffleId, e);
            return ShuffleDirectory.EMPTY;
        }
    }

    /** The directory after asking the tracker's owner to publish the map outputs that moved to it. */
    ShuffleDirectory publishMoved(int shuffleId, String ownerId, long[] mapIds) {
        try {
            ShuffleDirectory d = ShuffleDirectory.of(driver.publishMoved(shuffleId, ownerId, mapIds));
            directories.put(shuffleId, d);
            return d;
        } catch (Exception e) {
            LOG.warn("Executor {} could not ask for the moved map outputs of shuffle {} on executor {}",
                    driver.executorId(), shuffleId, ownerId, e);
            return directory(shuffleId);
        }
    }

    /** Whether a reader meets map output {@code mapId}'s undecodable packed index for the first time here. */
    boolean firstUndecodable(int shuffleId, long mapId) {
        return undecodable.computeIfAbsent(shuffleId, k -> ConcurrentHashMap.newKeySet()).add(mapId);
    }

    /** Spark unregistered the shuffle. */
    public void forget(int shuffleId) {
        directories.remove(shuffleId);
        undecodable.remove(shuffleId);
    }
}
