package org.apache.spark.shuffle.hcomm.internal.read;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.PackedIndex;

/**
 * Where each published map output of one shuffle lives, as an executor learned it from the driver. Immutable but for
 * each entry's offsets, decoded once. Thread-safe.
 */
final class ShuffleDirectory {
    /**
     * One map output: its owner, the addresses of its index and data in the owner's registered memory, and the
     * communicator it was staged in (0 on the endpoint path): its addresses mean something only in that one; and
     * where its partitions lie, when their lengths travelled with its publication ({@link PackedIndex}).
     *
     * <p>The packed lengths are decoded once, when a reader first asks, into the offsets of every partition (8 bytes
     * a partition, in place of the 1 to 4 packed ones, which are dropped), so that each reduce task takes its range
     * out of them instead of decoding the varints from partition 0 again.
     */
    static final class Entry {
        /** Decoded offsets, or why the packed lengths cannot be decoded; {@code NONE} when none travelled. */
        private record Decoded(long[] offsets, String undecodable) {
            static final Decoded NONE = new Decoded(null, null);
        }

        private final String executorId;
        private final long indexAddress;
        private final long dataAddress;
        private final int numPartitions;
        /** The partition lengths as they travelled, until decoded (null then, or when the reader reads the index). */
        private byte[] packedIndex; // guarded by this
        private volatile Decoded decoded;

        Entry(String executorId, long indexAddress, long dataAddress, int numPartitions, byte[] packedIndex) {
            this.executorId = executorId;
            this.indexAddress = indexAddress;
            this.dataAddress = dataAddress;
            this.numPartitions = numPartitions;
            this.packedIndex = packedIndex;
        }

        String executorId() {
            return executorId;
        }

        long indexAddress() {
            return indexAddress;
        }

        long dataAddress() {
            return dataAddress;
        }

        /**
         * The offsets of partitions [first, end) and the end of the last, or null when they did not travel.
         *
         * @throws IllegalArgumentException when what travelled cannot be decoded, or the range is outside it
         */
        long[] offsets(int first, int end) {
            Decoded d = decoded();
            if (d.undecodable() != null) {
                throw new IllegalArgumentException(d.undecodable());
            }
            return d.offsets() == null ? null : PackedIndex.range(d.offsets(), first, end);
        }

        private Decoded decoded() {
            Decoded d = decoded;
            if (d != null) {
                return d;
            }
            synchronized (this) {
                if (decoded == null) {
                    try {
                        decoded = packedIndex == null ? Decoded.NONE
                                : new Decoded(PackedIndex.decode(packedIndex, numPartitions), null);
                    } catch (IllegalArgumentException e) {
                        decoded = new Decoded(null, e.getMessage());
                    }
                    packedIndex = null;
                }
                return decoded;
            }
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
                    l.numPartitions()[i], l.packedIndexes()[i]));
        }
        return new ShuffleDirectory(m);
    }

    /** The entry of map task {@code mapId} if {@code executorId} published it, else null. */
    Entry find(long mapId, String executorId) {
        Entry e = byMapId.get(mapId);
        return e != null && e.executorId().equals(executorId) ? e : null;
    }
}
