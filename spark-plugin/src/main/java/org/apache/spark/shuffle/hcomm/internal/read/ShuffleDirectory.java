package org.apache.spark.shuffle.hcomm.internal.read;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.PackedIndex;

/** Where each published map output of one shuffle lives, as an executor learned it from the driver. Immutable. */
final class ShuffleDirectory {
    /**
     * One map output: its owner, the addresses of its index and data in the owner's registered memory, and the
     * communicator it was staged in (0 on the endpoint path): its addresses mean something only in that one;
     * {@code packedIndex}: its partition lengths ({@link PackedIndex}), or null when the reader must read its index.
     */
    record Entry(String executorId, long indexAddress, long dataAddress, int numPartitions, long epoch,
            byte[] packedIndex) {
        /** The offsets of partitions [first, end) and the end of the last, or null when they did not travel. */
        long[] offsets(int first, int end) {
            return packedIndex == null ? null : PackedIndex.offsets(packedIndex, numPartitions, first, end);
        }
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
                    l.numPartitions()[i], l.epochs()[i], l.packedIndexes()[i]));
        }
        return new ShuffleDirectory(m);
    }

    /** Whether {@code executorId} published map task {@code mapId} in another communicator than {@code epoch}. */
    boolean stale(long mapId, String executorId, long epoch) {
        Entry e = byMapId.get(mapId);
        return e != null && e.executorId().equals(executorId) && e.epoch() != epoch;
    }

    /** The entry of map task {@code mapId} if {@code executorId} published it in communicator {@code epoch}, else null. */
    Entry find(long mapId, String executorId, long epoch) {
        Entry e = byMapId.get(mapId);
        return e != null && e.executorId().equals(executorId) && e.epoch() == epoch ? e : null;
    }
}
