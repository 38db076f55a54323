package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.PackedIndex;
import org.hcomm.bridge.transport.Transport;

/**
 * Makes committed map outputs readable one-sidedly and keeps the executor's publications: which outputs of which
 * shuffle it holds, where, and what the driver was told of them, until their shuffle is released. Each output's index
 * is {@code numPartitions + 1} big-endian offsets, the layout of Spark's own index file. With
 * {@code writeTarget=arena} Spark's writers wrote the output straight into the registered send arena
 * ({@link ArenaMapOutputWriter}, recorded by {@link #written}): it is only announced. Otherwise the committed files
 * are placed by {@link FilePlacement}, under this publisher's lock. Thread-safe; owns the arena ({@link SendArena})
 * and every mapped region until {@link #release(int)} or {@link #close()}.
 */
public final class MapOutputPublisher implements AutoCloseable {
    private final SendArena arena;
    private final FilePlacement placement;
    private final ShuffleMetrics metrics;
    private final DriverClient driver;
    /** The largest packed index that travels with a publication ({@link PackedIndex}). */
    private final int packedIndexMax;
    /** Changed under this publisher's lock; concurrent maps, so Spark's readers find arena outputs without it. */
    private final Map<Integer, Map<Long, Publication>> byShuffle = new ConcurrentHashMap<>();
    /** {@code writeTarget=arena}: Spark's writers write into the arena, and outputs they could not are mapped. */
    private final boolean writesOnce;
    /** The largest output of each shuffle published here so far: what the next one of it is expected to be. */
    private final Map<Integer, Long> largest = new HashMap<>();
    private boolean closed;

    /** Registers a send arena of {@code arenaSize} bytes; outputs are announced to the driver by {@code driver}. */
    public MapOutputPublisher(Transport transport, long arenaSize, int packedIndexMax, ShuffleMetrics metrics,
            DriverClient driver, boolean writesOnce) {
        this.writesOnce = writesOnce;
        this.packedIndexMax = packedIndexMax;
        this.driver = driver;
        this.arena = new SendArena(transport, arenaSize, driver.executorId());
        this.metrics = metrics;
        this.placement = new FilePlacement(transport, arena, metrics, writesOnce);
    }

    /** Whether Spark's writers may write outputs straight into the arena: with {@code writeTarget=arena}, an arena. */
    synchronized boolean writesInPlace() {
        return writesOnce && !closed && arena.capacity() > 0;
    }

    /** How large the next output of the shuffle is expected to be: the largest of it published here, or 0. */
    synchronized long expectedBytes(int shuffleId) {
        return largest.getOrDefault(shuffleId, 0L);
    }

    SendArena arena() {
        return arena;
    }

    ShuffleMetrics metrics() {
        return metrics;
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
        Messages.Published written = announceWritten(shuffleId, mapId, lengths.length);
        driver.published(written != null ? written : publish(shuffleId, mapId, lengths, dataFile, indexFile));
    }

    /** What this executor published of map task {@code mapId} of the shuffle (and still holds), or null. */
    synchronized Messages.Published published(int shuffleId, long mapId) {
        Publication p = byShuffle.getOrDefault(shuffleId, Map.of()).get(mapId);
        return p == null ? null : p.told;
    }

    /**
     * Records an output Spark's writer committed into the arena ({@link ArenaMapOutputWriter}): its index is already
     * written at {@code indexOffset}, its data at {@code dataOffset}. From here this publisher owns both extents;
     * false (the caller still owns them) once it closed: the output belongs in Spark's file then.
     */
    synchronized boolean written(int shuffleId, long mapId, long indexOffset, long dataOffset, long[] offsets,
            long[] checksums) {
        if (closed) { // the arena is going: the writer must put this one in Spark's file
            return false;
        }
        Publication p = Publication.written(mapId, indexOffset, dataOffset, offsets, checksums);
        if (byShuffle.computeIfAbsent(shuffleId, k -> new ConcurrentHashMap<>()).putIfAbsent(mapId, p) != null) {
            // a task attempt's map id is unique: a second commit of it is a bug in the caller
            throw new IllegalStateException("shuffle " + shuffleId + " map " + mapId + " committed twice");
        }
        largest.merge(shuffleId, p.dataBytes, Math::max);
        metrics.outputsWrittenToArena.inc();
        return true;
    }

    /** The publication of an output written into the arena, made now; null when it was not written there. */
    private synchronized Messages.Published announceWritten(int shuffleId, long mapId, int numPartitions) {
        Publication p = byShuffle.getOrDefault(shuffleId, Map.of()).get(mapId);
        if (p == null || p.offsets == null) {
            return null;
        }
        if (p.told == null) {
            long index = arena.address(p.indexOffset);
            p.told = new Messages.Published(shuffleId, mapId, driver.executorId(), index,
                    p.dataOffset < 0 ? index : arena.address(p.dataOffset), numPartitions,
                    PackedIndex.pack(Publication.lengths(p.offsets), packedIndexMax));
        }
        return p.told;
    }

    /**
     * Publishes the committed output of map task {@code mapId} (Spark's {@code dataFile} and {@code indexFile});
     * returns what the driver records.
     */
    synchronized Messages.Published publish(int shuffleId, long mapId, long[] lengths, File dataFile, File indexFile)
            throws IOException {
        long total = 0;
        for (long len : lengths) {
            total += len;
        }
        largest.merge(shuffleId, total, Math::max);
        Publication p = new Publication(mapId, 8L * (lengths.length + 1), total);
        try {
            FilePlacement.Addresses at = placement.place(shuffleId, p, lengths, dataFile, indexFile);
            Publication before = byShuffle.computeIfAbsent(shuffleId, k -> new ConcurrentHashMap<>()).put(mapId, p);
            if (before != null) { // published again (moved back to this executor): the newer placement serves
                free(before);
            }
            p.told = new Messages.Published(shuffleId, mapId, driver.executorId(), at.index(), at.data(),
                    lengths.length, PackedIndex.pack(lengths, packedIndexMax));
            return p.told;
        } catch (IOException | RuntimeException e) {
            free(p);
            throw e;
        }
    }

    /** An output Spark's writer wrote into the arena and this publisher holds, or null; lock-free (read per block). */
    Publication inArena(int shuffleId, long mapId) {
        Map<Long, Publication> outputs = byShuffle.get(shuffleId);
        Publication p = outputs == null ? null : outputs.get(mapId);
        return p == null || p.offsets == null ? null : p;
    }

    /**
     * A view of partitions {@code [start, end)} of an output {@link #inArena}, for Spark's own readers (its extent
     * stays allocated until the lease is closed); null when it is gone (released, or the arena closing).
     */
    SendArena.Lease leaseBlocks(Publication p, int start, int end) {
        return arena.lease(p.extent, p.offsets[start], p.offsets[end] - p.offsets[start]);
    }

    /** Every output written into the arena and not copied to Spark's files: (shuffle id, map id) pairs. */
    synchronized List<long[]> arenaOnly() {
        List<long[]> out = new ArrayList<>();
        byShuffle.forEach((shuffleId, pubs) -> pubs.values().forEach(p -> {
            if (p.offsets != null && !p.materialized) {
                out.add(new long[] {shuffleId, p.mapId});
            }
        }));
        return out;
    }

    /**
     * Copies an output written into the arena to Spark's data, index and checksum files (once), so Spark can move
     * it (decommission) as it moves its own; readers keep reading it in the arena. False when it has no arena copy.
     * Copied outside this publisher's lock, under a lease of its extent (racing copies are safe: Spark keeps one).
     */
    boolean materialize(int shuffleId, long mapId, IndexShuffleBlockResolver resolver) throws IOException {
        Publication p;
        synchronized (this) {
            p = byShuffle.getOrDefault(shuffleId, Map.of()).get(mapId);
            if (p == null || p.offsets == null) {
                return false;
            }
            if (p.materialized) {
                return true;
            }
        }
        try (SendArena.Lease data = arena.lease(p.extent, 0, p.dataBytes)) {
            if (data == null) { // released meanwhile, or the arena is closing
                return false;
            }
            File tmp = resolver.createTempFile(resolver.getDataFile(shuffleId, mapId));
            SendArena.copyOut(data.view(), tmp);
            resolver.writeMetadataFileAndCommit(shuffleId, mapId, Publication.lengths(p.offsets), p.checksums, tmp);
        }
        synchronized (this) {
            if (!p.materialized) {
                p.materialized = true;
                metrics.outputsMaterialized.inc();
            }
        }
        return true;
    }

    /** Frees what the shuffle's outputs used; reads of them fail from now on. */
    public synchronized void release(int shuffleId) {
        largest.remove(shuffleId);
        Map<Long, Publication> pubs = byShuffle.remove(shuffleId);
        if (pubs != null) {
            pubs.values().forEach(this::free);
        }
    }

    private void free(Publication p) {
        if (p.indexOffset >= 0) {
            arena.release(p.indexOffset, p.indexBytes);
        }
        if (p.extent != null) { // written into the arena: Spark's readers may hold leases of it
            arena.release(p.extent);
        } else if (p.dataOffset >= 0) {
            arena.release(p.dataOffset, p.dataBytes);
        }
        if (p.mappedIndex != null) {
            p.mappedIndex.close();
        }
        if (p.mappedData != null) {
            p.mappedData.close();
        }
    }

    @Override
    public void close() {
        close(() -> { });
    }

    /** Releases every output and closes the arena; {@code after} runs once it is unmapped ({@link SendArena#close}). */
    public void close(Runnable after) {
        try {
            synchronized (this) {
                closed = true;
                for (Integer shuffleId : List.copyOf(byShuffle.keySet())) {
                    release(shuffleId);
                }
            }
        } finally {
            arena.close(after);
        }
    }
}
