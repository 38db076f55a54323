package org.apache.spark.shuffle.hcomm.internal;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes committed map outputs readable one-sidedly. Each output's index is {@code numPartitions + 1} big-endian
 * offsets, the layout of Spark's own index file: written into the registered send arena when it has room, else
 * Spark's committed index file is mapped and registered. Its bytes are copied into the arena when they fit and the
 * arena keeps an eighth of itself free for indexes afterwards, else the committed data file is mapped and
 * registered. So a full arena costs registrations, never an output: the arena lives as long as the application's
 * shuffles, and an application with many of them fills it. Thread-safe; owns the arena and every mapped region
 * until {@link #release(int)} or {@link #close()}.
 */
final class MapOutputPublisher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MapOutputPublisher.class);

    private final Transport transport;
    private final Region arena;
    private final ArenaAllocator allocator;
    /** Arena bytes a data copy must leave free, so indexes (tiny, one per output) keep fitting. */
    private final long indexReserve;
    private final ShuffleMetrics metrics;
    private final Map<Integer, List<Publication>> byShuffle = new HashMap<>();
    private boolean arenaFullLogged;

    /**
     * Where one output lives: arena offsets (or -1) and the mapped file regions (or null) of its index and data.
     */
    private record Publication(long mapId, long indexOffset, long indexBytes, Region mappedIndex, long dataOffset,
            long dataBytes, Region mappedData) {
    }

    MapOutputPublisher(Transport transport, long arenaSize, ShuffleMetrics metrics) {
        this.transport = transport;
        this.arena = arenaSize > 0 ? transport.allocate("hcomm-send-arena", arenaSize) : null;
        this.allocator = new ArenaAllocator(arenaSize);
        this.indexReserve = arenaSize / 8;
        this.metrics = metrics;
    }

    /**
     * Publishes the committed output of map task {@code mapId} (Spark's {@code dataFile} and {@code indexFile});
     * returns what the driver records.
     */
    synchronized Messages.Published publish(int shuffleId, long mapId, long[] lengths, File dataFile, File indexFile,
            String executorId) throws IOException {
        int n = lengths.length;
        long indexBytes = 8L * (n + 1);
        long total = 0;
        for (long len : lengths) {
            total += len;
        }
        long indexOffset = -1;
        long dataOffset = -1;
        Region mappedIndex = null;
        Region mappedData = null;
        try {
            long indexAddress;
            if ((indexOffset = allocator.allocate(indexBytes)) >= 0) {
                ByteBuffer index = view(indexOffset, indexBytes).order(ByteOrder.BIG_ENDIAN);
                long at = 0;
                index.putLong(0);
                for (long len : lengths) {
                    at += len;
                    index.putLong(at);
                }
                indexAddress = arena.address() + indexOffset;
            } else {
                arenaFull(shuffleId, mapId);
                mappedIndex = transport.mapFile("hcomm-index-" + shuffleId + "-" + mapId, indexFile.toPath(),
                        indexBytes);
                indexAddress = mappedIndex.address();
                metrics.indexesMapped.inc();
            }
            long dataAddress;
            if (total == 0) {
                dataAddress = indexAddress; // nothing is read from it
            } else if (allocator.free() - total >= indexReserve && (dataOffset = allocator.allocate(total)) >= 0) {
                copy(dataFile, view(dataOffset, total));
                dataAddress = arena.address() + dataOffset;
                metrics.outputsCopied.inc();
            } else {
                mappedData = transport.mapFile("hcomm-map-" + shuffleId + "-" + mapId, dataFile.toPath(), total);
                dataAddress = mappedData.address();
                metrics.outputsMapped.inc();
            }
            byShuffle.computeIfAbsent(shuffleId, k -> new ArrayList<>()).add(new Publication(mapId, indexOffset,
                    indexBytes, mappedIndex, dataOffset, total, mappedData));
            return new Messages.Published(shuffleId, mapId, executorId, indexAddress, dataAddress, n);
        } catch (IOException | RuntimeException e) {
            free(new Publication(mapId, indexOffset, indexBytes, mappedIndex, dataOffset, total, mappedData));
            throw e;
        }
    }

    /** Logs (once per executor) that indexes no longer fit the arena. */
    private void arenaFull(int shuffleId, long mapId) {
        if (!arenaFullLogged && allocator.capacity() > 0) {
            arenaFullLogged = true;
            LOG.info("Send arena full ({} of {} bytes used) at shuffle {} map {}: map outputs are published by "
                    + "registering Spark's index and data files until it has room again "
                    + "(spark.shuffle.hcomm.sendArenaSize; counters outputsMapped, indexesMapped)",
                    allocator.used(), allocator.capacity(), shuffleId, mapId);
        }
    }

    private ByteBuffer view(long offset, long bytes) {
        return arena.buffer().position((int) offset).limit((int) (offset + bytes)).slice();
    }

    private static void copy(File file, ByteBuffer dst) throws IOException {
        try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
            long pos = 0;
            while (dst.hasRemaining()) {
                int n = ch.read(dst, pos);
                if (n < 0) {
                    throw new IOException("map output " + file + " is shorter than its partition lengths say");
                }
                pos += n;
            }
        }
    }

    /** Frees what the shuffle's outputs used; reads of them fail from now on. */
    synchronized void release(int shuffleId) {
        List<Publication> pubs = byShuffle.remove(shuffleId);
        if (pubs != null) {
            pubs.forEach(this::free);
        }
    }

    private void free(Publication p) {
        if (p.indexOffset() >= 0) {
            allocator.release(p.indexOffset(), p.indexBytes());
        }
        if (p.dataOffset() >= 0) {
            allocator.release(p.dataOffset(), p.dataBytes());
        }
        if (p.mappedIndex() != null) {
            p.mappedIndex().close();
        }
        if (p.mappedData() != null) {
            p.mappedData().close();
        }
    }

    synchronized long arenaUsed() {
        return allocator.used();
    }

    @Override
    public synchronized void close() {
        for (Integer shuffleId : List.copyOf(byShuffle.keySet())) {
            release(shuffleId);
        }
        if (arena != null) {
            arena.close();
        }
    }
}
