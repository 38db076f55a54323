package org.apache.spark.shuffle.hcomm.internal.read;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;

/** Where each published map output of one shuffle lives, as an executor learned it from the driver. Immutable. */
final class ShuffleDirectory {
    /** One map output: its owner and the addresses of its index and data in the owner's registered memory. */
    record Entry(String executorId, long indexAddress, long dataAddress, int numPartitions) {
    }

    static final ShuffleDirectory EMPTY = new ShuffleDirectory(Map.of());

    private final Map<Long, Entry> byMapId;

    private ShuffleDirectory(Map<Long, Entry> byMapId) {
        this.byMapId = byMapId;
    }

    static ShuffleDirectory of(Messages.ShuffleLocations l) {
        Map<Long, Entry> m = new HashMap<>(l.mapIds().length * 2);
        for (int i = 0; i < l.mapIds().length; i++) {
            m.put(l.mapIds()[i], new Entry(l.executorIds()[i], l.indexAddresses()[i], l.dataAddresses()[i],
                    l.numPartitions()[i]));
        }
        return new ShuffleDirectory(m);
    }

    /** The entry of map task {@code mapId} if {@code executorId} published it, else null. */
    Entry find(long mapId, String executorId) {
        Entry e = byMapId.get(mapId);
        return e != null && e.executorId().equals(executorId) ? e : null;
    }
}
