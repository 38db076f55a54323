package org.apache.spark.shuffle.hcomm.internal.write;

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

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.PackedIndex;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;

/**
 * Makes committed map outputs readable one-sidedly. Each output's index is {@code numPartitions + 1} big-endian
 * offsets, the layout of Spark's own index file: written into the registered send arena when it has room, else
 * Spark's committed index file is mapped and registered. Its bytes are copied into the arena when they fit and the
 * arena keeps an eighth of itself free for indexes afterwards, else the committed data file is mapped and
 * registered. So a full arena costs registrations, never an output: the arena lives as long as the application's
 * shuffles, and an application with many of them fills it. Thread-safe; owns the arena and every mapped region
 * until {@link #release(int)} or {@link #close()}.
 */
public final class MapOutputPublisher implements AutoCloseable {
    private static final Logger LOG = LogCategory.PUBLISHER.logger();

    private final Transport transport;
    private final Region arena;
    private final ArenaAllocator allocator;
    /** Arena bytes a data copy must leave free, so indexes (tiny, one per output) keep fitting. */
    private final long indexReserve;
    private final ShuffleMetrics metrics;
    private final DriverClient driver;
    /** The communicator its outputs are staged in (0: the endpoint path); readers of another one do not use them. */
    private final long epoch;
    /** The largest packed index that travels with a publication ({@link PackedIndex}). */
    private final int packedIndexMax;
    private final Map<Integer, List<Publication>> byShuffle = new HashMap<>();
    private boolean closed;
    private boolean arenaFullLogged;

    /**
     * Where one output lives: arena offsets (or -1) and mapped file regions (or null) of its index and data, and what
     * the driver was told of it.
     */
    private static final class Publication {
        final long mapId;
        final long indexBytes;
        final long dataBytes;
        Messages.Published told;
        long indexOffset = -1;
        long dataOffset = -1;
        Region mappedIndex;
        Region mappedData;

        Publication(long mapId, long indexBytes, long dataBytes) {
            this.mapId = mapId;
            this.indexBytes = indexBytes;
            this.dataBytes = dataBytes;
        }
    }

    /** Registers a send arena of {@code arenaSize} bytes; outputs are announced to the driver by {@code driver}. */
    public MapOutputPublisher(Transport transport, long arenaSize, int packedIndexMax, ShuffleMetrics metrics,
            DriverClient driver, long epoch) {
        this.transport = transport;
        this.packedIndexMax = packedIndexMax;
        this.driver = driver;
        this.epoch = epoch;
        this.arena = arenaSize > 0 ? transport.allocate("hcomm-send-arena", arenaSize) : null;
        this.allocator = new ArenaAllocator(arenaSize);
        this.indexReserve = arenaSize / 8;
        this.metrics = metrics;
    }

    String executorId() {
        return driver.executorId();
    }

    /**
     * Publishes a map task's committed output and queues the news for the driver (sent in a batch, without waiting):
     * a reader that asks before it arrived is answered from {@link #published(int, long)}.
     */
    void publishAndAnnounce(int shuffleId, long mapId, long[] lengths, File dataFile, File indexFile)
            throws Exception {
        driver.published(publish(shuffleId, mapId, lengths, dataFile, indexFile));
    }

    /** What this executor published of map task {@code mapId} of the shuffle (and still holds), or null. */
    synchronized Messages.Published published(int shuffleId, long mapId) {
        for (Publication p : byShuffle.getOrDefault(shuffleId, List.of())) {
            if (p.mapId == mapId) {
                return p.told;
            }
        }
        return null;
    }

    /**
     * Publishes the committed output of map task {@code mapId} (Spark's {@code dataFile} and {@code indexFile});
     * returns what the driver records.
     */
    synchronized Messages.Published publish(int shuffleId, long mapId, long[] lengths, File dataFile, File indexFile)
            throws IOException {
        try {
            return place(shuffleId, mapId, lengths, dataFile, indexFile);
        } catch (NotStaged e) { // the communicator path: the driver records it as read by Spark's fetch, by design
            LOG.debug("Executor {}: {}; reducers fetch it with Spark's transfer", driver.executorId(), e.getMessage());
            return new Messages.Published(shuffleId, mapId, driver.executorId(), Messages.Published.NOT_STAGED,
                    Messages.Published.NOT_STAGED, lengths.length, epoch, null);
        }
    }

    private Messages.Published place(int shuffleId, long mapId, long[] lengths, File dataFile, File indexFile)
            throws IOException {
        if (closed) { // retired with its communicator while the writer ran: readers fetch the output with Spark
            throw new NotStaged("shuffle " + shuffleId + " map " + mapId + ": the communicator it would be staged in "
                    + "was retired");
        }
        long total = 0;
        for (long len : lengths) {
            total += len;
        }
        Publication p = new Publication(mapId, 8L * (lengths.length + 1), total);
        try {
            long indexAddress = placeIndex(p, lengths, indexFile, shuffleId, mapId);
            // an empty output has no data to read: any address will do
            long dataAddress = total == 0 ? indexAddress : placeData(p, dataFile, shuffleId, mapId);
            byShuffle.computeIfAbsent(shuffleId, k -> new ArrayList<>()).add(p);
            p.told = new Messages.Published(shuffleId, mapId, driver.executorId(), indexAddress, dataAddress,
                    lengths.length, epoch, PackedIndex.pack(lengths, packedIndexMax));
            return p.told;
        } catch (IOException | RuntimeException e) {
            free(p);
            throw e;
        }
    }

    /** Writes the offsets into the arena, or registers Spark's index file when the arena has no room. */
    private long placeIndex(Publication p, long[] lengths, File indexFile, int shuffleId, long mapId)
            throws IOException {
        p.indexOffset = allocator.allocate(p.indexBytes);
        if (p.indexOffset >= 0) {
            ByteBuffer index = view(p.indexOffset, p.indexBytes).order(ByteOrder.BIG_ENDIAN);
            long at = 0;
            index.putLong(0);
            for (long len : lengths) {
                at += len;
                index.putLong(at);
            }
            stage(p.indexOffset, p.indexBytes);
            return arena.address() + p.indexOffset;
        }
        arenaFull(shuffleId, mapId);
        notStageable(shuffleId, mapId);
        p.mappedIndex = transport.mapFile("hcomm-index-" + shuffleId + "-" + mapId, indexFile.toPath(), p.indexBytes);
        metrics.indexesMapped.inc();
        return p.mappedIndex.address();
    }

    /** Copies the bytes into the arena while it keeps its index reserve, else registers Spark's data file. */
    private long placeData(Publication p, File dataFile, int shuffleId, long mapId) throws IOException {
        if (allocator.free() - p.dataBytes >= indexReserve && (p.dataOffset = allocator.allocate(p.dataBytes)) >= 0) {
            copy(dataFile, view(p.dataOffset, p.dataBytes));
            stage(p.dataOffset, p.dataBytes);
            metrics.outputsCopied.inc();
            return arena.address() + p.dataOffset;
        }
        notStageable(shuffleId, mapId);
        p.mappedData = transport.mapFile("hcomm-map-" + shuffleId + "-" + mapId, dataFile.toPath(), p.dataBytes);
        metrics.outputsMapped.inc();
        return p.mappedData.address();
    }

    /**
     * Makes bytes written into the arena readable by peers: nothing where the arena is host memory; on the
     * communicator path a host-to-device copy into the HCCL buffer (the readiness that follows is the driver's
     * directory: readers learn of an output only after this returned).
     */
    private void stage(long offset, long bytes) throws TransportException {
        arena.commit(offset, bytes);
        if (!transport.canRegisterFiles()) {
            metrics.bytesStaged.inc(bytes);
        }
    }

    /**
     * Where only the HCCL buffer can be read (the communicator path), an output that does not fit it is not
     * published: readers fetch it with Spark.
     */
    private void notStageable(int shuffleId, long mapId) throws NotStaged {
        if (!transport.canRegisterFiles()) {
            metrics.outputsNotStaged.inc();
            throw new NotStaged("shuffle " + shuffleId + " map " + mapId + " does not fit the HCCL buffer's send "
                    + "arena (" + allocator.used() + " of " + allocator.capacity() + " bytes used; "
                    + "spark.shuffle.hcomm.sendArenaSize, spark.shuffle.hcomm.communicator.bufferSize)");
        }
    }

    /** An output that was not published because the only memory peers can read is full. */
    public static final class NotStaged extends IOException {
        private static final long serialVersionUID = 1L;

        NotStaged(String message) {
            super(message);
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
    public synchronized void release(int shuffleId) {
        List<Publication> pubs = byShuffle.remove(shuffleId);
        if (pubs != null) {
            pubs.forEach(this::free);
        }
    }

    private void free(Publication p) {
        if (p.indexOffset >= 0) {
            allocator.release(p.indexOffset, p.indexBytes);
        }
        if (p.dataOffset >= 0) {
            allocator.release(p.dataOffset, p.dataBytes);
        }
        if (p.mappedIndex != null) {
            p.mappedIndex.close();
        }
        if (p.mappedData != null) {
            p.mappedData.close();
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (Integer shuffleId : List.copyOf(byShuffle.keySet())) {
            release(shuffleId);
        }
        if (arena != null) {
            arena.close();
        }
    }
}
