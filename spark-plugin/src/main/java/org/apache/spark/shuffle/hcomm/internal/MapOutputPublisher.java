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
 * Makes committed map outputs readable one-sidedly. Each output gets an index of {@code numPartitions + 1} offsets
 * in the registered send arena; its bytes are copied into the arena when they fit, otherwise the committed data
 * file is mapped and registered. Thread-safe; owns the arena and every mapped region until
 * {@link #release(int)} or {@link #close()}.
 */
final class MapOutputPublisher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MapOutputPublisher.class);

    private final Transport transport;
    private final Region arena;
    private final ArenaAllocator allocator;
    private final Map<Integer, List<Publication>> byShuffle = new HashMap<>();

    /** Where one output lives: arena offsets (or -1) and the mapped file region when not in the arena. */
    private record Publication(long mapId, long indexOffset, long indexBytes, long dataOffset, long dataBytes,
            Region mapped) {
    }

    MapOutputPublisher(Transport transport, long arenaSize) {
        this.transport = transport;
        this.arena = arenaSize > 0 ? transport.allocate("hcomm-send-arena", arenaSize) : null;
        this.allocator = new ArenaAllocator(arenaSize);
    }

    /**
     * Publishes the output of map task {@code mapId}; returns what the driver records, or {@code null} when the
     * arena has no room even for the index (the output is then read by Spark's own fetch).
     */
    synchronized Messages.Published publish(int shuffleId, long mapId, long[] lengths, File dataFile,
            String executorId) throws IOException {
        int n = lengths.length;
        long indexBytes = 8L * (n + 1);
        long indexOffset = allocator.allocate(indexBytes);
        if (indexOffset < 0) {
            LOG.warn("Send arena full ({} of {} bytes used): shuffle {} map {} is not published; reducers fetch it "
                    + "with Spark's transfer (raise spark.shuffle.hcomm.sendArenaSize)", allocator.used(),
                    allocator.capacity(), shuffleId, mapId);
            return null;
        }
        ByteBuffer index = view(indexOffset, indexBytes).order(ByteOrder.LITTLE_ENDIAN);
        long total = 0;
        index.putLong(0);
        for (long len : lengths) {
            total += len;
            index.putLong(total);
        }
        long dataOffset = -1;
        Region mapped = null;
        long dataAddress;
        try {
            if (total == 0) {
                dataAddress = arena.address() + indexOffset;
            } else if ((dataOffset = allocator.allocate(total)) >= 0) {
                copy(dataFile, view(dataOffset, total));
                dataAddress = arena.address() + dataOffset;
            } else {
                mapped = transport.mapFile("hcomm-map-" + shuffleId + "-" + mapId, dataFile.toPath(), total);
                dataAddress = mapped.address();
            }
        } catch (IOException | RuntimeException e) {
            allocator.release(indexOffset, indexBytes);
            if (dataOffset >= 0) {
                allocator.release(dataOffset, total);
            }
            throw e;
        }
        byShuffle.computeIfAbsent(shuffleId, k -> new ArrayList<>())
                .add(new Publication(mapId, indexOffset, indexBytes, dataOffset, total, mapped));
        return new Messages.Published(shuffleId, mapId, executorId, arena.address() + indexOffset, dataAddress, n);
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
        if (pubs == null) {
            return;
        }
        for (Publication p : pubs) {
            allocator.release(p.indexOffset(), p.indexBytes());
            if (p.dataOffset() >= 0) {
                allocator.release(p.dataOffset(), p.dataBytes());
            }
            if (p.mapped() != null) {
                p.mapped().close();
            }
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
