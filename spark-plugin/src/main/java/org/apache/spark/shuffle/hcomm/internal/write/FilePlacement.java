package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.Transport;
import org.slf4j.Logger;

/**
 * Places a map output Spark committed to its data and index files into memory peers can read: the index (Spark's
 * layout, {@code numPartitions + 1} big-endian offsets) written into the send arena when it has room, else Spark's
 * index file mapped and registered; the bytes copied into the arena when they fit and the arena keeps an eighth of
 * itself free for indexes afterwards, else the data file mapped and registered. So a full arena costs registrations,
 * never an output: the arena lives as long as the application's shuffles, and an application with many of them
 * fills it. Threading: {@link #place} runs only under its {@link MapOutputPublisher}'s lock, which guards the
 * {@link Publication} it fills and this class's state.
 */
final class FilePlacement {
    private static final Logger LOG = LogCategory.PUBLISHER.logger();

    /** Where an output was placed: its index's and its data's address. */
    record Addresses(long index, long data) {
    }

    private final Transport transport;
    private final SendArena arena;
    private final ShuffleMetrics metrics;
    /** {@code writeTarget=arena}: an output placed from files is one Spark's writers found no room for in the arena. */
    private final boolean writesOnce;
    private boolean arenaFullLogged;

    FilePlacement(Transport transport, SendArena arena, ShuffleMetrics metrics, boolean writesOnce) {
        this.transport = transport;
        this.arena = arena;
        this.metrics = metrics;
        this.writesOnce = writesOnce;
    }

    /**
     * Places the output {@code p} describes (its index and data sizes); on failure {@code p} holds what was placed so
     * far, for the caller to free.
     */
    Addresses place(int shuffleId, Publication p, long[] lengths, File dataFile, File indexFile) throws IOException {
        long indexAddress = placeIndex(p, lengths, indexFile, shuffleId, p.mapId);
        // an empty output has no data to read: any address will do
        long dataAddress = p.dataBytes == 0 ? indexAddress : placeData(p, dataFile, shuffleId, p.mapId);
        return new Addresses(indexAddress, dataAddress);
    }

    /** Writes the offsets into the arena, or registers Spark's index file when the arena has no room. */
    private long placeIndex(Publication p, long[] lengths, File indexFile, int shuffleId, long mapId)
            throws IOException {
        p.indexOffset = arena.allocate(p.indexBytes);
        if (p.indexOffset >= 0) {
            ByteBuffer index = arena.view(p.indexOffset, p.indexBytes).order(ByteOrder.BIG_ENDIAN);
            long at = 0;
            index.putLong(0);
            for (long len : lengths) {
                at += len;
                index.putLong(at);
            }
            return arena.address(p.indexOffset);
        }
        arenaFull(shuffleId, mapId);
        p.mappedIndex = transport.mapFile("hcomm-index-" + shuffleId + "-" + mapId, indexFile.toPath(), p.indexBytes);
        metrics.indexesMapped.inc();
        return p.mappedIndex.address();
    }

    /**
     * Copies the bytes into the arena while it keeps its index reserve, else registers Spark's data file; with
     * {@code writeTarget=arena} (where Spark's writer found no room for it in the arena) always the latter: no copy.
     */
    private long placeData(Publication p, File dataFile, int shuffleId, long mapId) throws IOException {
        if (!writesOnce && (p.dataOffset = arena.allocateData(p.dataBytes)) >= 0) {
            arena.copyIn(dataFile, p.dataOffset, p.dataBytes);
            metrics.outputsCopied.inc();
            return arena.address(p.dataOffset);
        }
        p.mappedData = transport.mapFile("hcomm-map-" + shuffleId + "-" + mapId, dataFile.toPath(), p.dataBytes);
        metrics.outputsMapped.inc();
        return p.mappedData.address();
    }

    /** Logs (once per executor) that indexes no longer fit the arena. */
    private void arenaFull(int shuffleId, long mapId) {
        if (!arenaFullLogged && arena.capacity() > 0) {
            arenaFullLogged = true;
            LOG.info("Send arena full ({} of {} bytes used) at shuffle {} map {}: map outputs are published by "
                    + "registering Spark's index and data files until it has room again "
                    + "(spark.shuffle.hcomm.sendArenaSize; counters outputsMapped, indexesMapped)",
                    arena.used(), arena.capacity(), shuffleId, mapId);
        }
    }
}
