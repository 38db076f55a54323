package org.apache.spark.shuffle.hcomm.internal.write;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.hcomm.bridge.transport.Region;

/**
 * Where one of {@link MapOutputPublisher}'s outputs lives: arena offsets (or -1) and mapped file regions (or null)
 * of its index and data, and what the driver was told of it (null until announced). An output Spark's writers wrote
 * into the arena also keeps its offsets and checksums: it has no file, so Spark's own readers and
 * {@link MapOutputPublisher#materialize} need them. Guarded by its publisher.
 */
final class Publication {
    final long mapId;
    final long indexBytes;
    final long dataBytes;
    Messages.Published told;
    long indexOffset = -1;
    long dataOffset = -1;
    Region mappedIndex;
    Region mappedData;
    /** Written into the arena: the partition offsets (numPartitions + 1) and Spark's checksums; else null. */
    long[] offsets;
    long[] checksums;
    /** Written into the arena with data: its extent, which Spark's readers lease; else null. */
    SendArena.Extent extent;
    /** Written into the arena and since copied to Spark's files (for decommission): Spark serves those. */
    boolean materialized;

    Publication(long mapId, long indexBytes, long dataBytes) {
        this.mapId = mapId;
        this.indexBytes = indexBytes;
        this.dataBytes = dataBytes;
    }

    /** An output Spark's writer wrote into the arena: index at {@code indexOffset}, data at {@code dataOffset}. */
    static Publication written(long mapId, long indexOffset, long dataOffset, long[] offsets, long[] checksums) {
        long dataBytes = offsets[offsets.length - 1];
        Publication p = new Publication(mapId, 8L * offsets.length, dataBytes);
        p.indexOffset = indexOffset;
        p.dataOffset = dataBytes == 0 ? -1 : dataOffset;
        p.extent = dataBytes == 0 ? null : new SendArena.Extent(dataOffset, dataBytes);
        p.offsets = offsets;
        p.checksums = checksums;
        return p;
    }

    /** The partition lengths of an output's offsets (Spark's index: numPartitions + 1 of them). */
    static long[] lengths(long[] offsets) {
        long[] lengths = new long[offsets.length - 1];
        for (int i = 0; i < lengths.length; i++) {
            lengths[i] = offsets[i + 1] - offsets[i];
        }
        return lengths;
    }
}
