package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.function.Supplier;

import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.ShufflePartitionWriter;
import org.apache.spark.shuffle.api.metadata.MapOutputCommitMessage;

/**
 * Writes one map output straight into the registered send arena, where peers read it one-sidedly: Spark's own
 * writers (sort, serialized, bypass) stream each partition into it in turn, in Spark's index layout, so the output
 * is written once and no file holds it. The data extent starts small, grows in place when its neighbour is free and
 * moves (a copy, counted in {@code arenaRelocations}) when not; when the arena has no room left (it keeps an eighth
 * free for indexes) the output <em>overflows</em>: Spark's own file writer gets the partitions written so far and
 * every later byte, and the output is published from Spark's file as without this writer. Used by one task thread.
 */
final class ArenaMapOutputWriter implements ShuffleMapOutputWriter {
    /** The first data extent, unless the arena is smaller (an output's extent is trimmed at commit). */
    static final long FIRST_EXTENT = 4L << 20;
    /** Below this much room in the arena an output starts in Spark's file. */
    static final long MIN_ROOM = 64L << 10;

    private final MapOutputPublisher publisher;
    private final SendArena arena;
    private final int shuffleId;
    private final long mapId;
    /** Partition i starts at offsets[i] in the data extent; offsets[numPartitions] is the output's size. */
    private final long[] offsets;
    private final long indexOffset;
    private final Supplier<ShuffleMapOutputWriter> sparkWriter;
    private final ChecksumFile checksumFile;
    private final long expectedBytes;
    /** Keeps the arena mapped while this writes into it (until commit, abort or overflow); null: it was closing. */
    private final SendArena.Lease hold;
    private long dataOffset = -1;
    private long capacity;
    private ByteBuffer data;
    private long written;
    private int current = -1;
    /** After an overflow: Spark's writer, and its stream of the partition that was open then. */
    private ShuffleMapOutputWriter file;
    private OutputStream fileStream;
    private boolean done;

    /** Writes the checksum file Spark's diagnosis of a corrupt block reads (only when checksums are on). */
    interface ChecksumFile {
        void write(int shuffleId, long mapId, long[] checksums) throws IOException;
    }

    /** An output of {@code numPartitions} whose index extent ({@code 8 * (numPartitions + 1)} bytes) is reserved. */
    ArenaMapOutputWriter(MapOutputPublisher publisher, int shuffleId, long mapId, int numPartitions,
            long indexOffset, Supplier<ShuffleMapOutputWriter> sparkWriter, ChecksumFile checksumFile) {
        this(publisher, shuffleId, mapId, numPartitions, indexOffset, sparkWriter, checksumFile, 0);
    }

    /** As above, for an output of {@code expectedBytes} (its first extent is that large). */
    ArenaMapOutputWriter(MapOutputPublisher publisher, int shuffleId, long mapId, int numPartitions,
            long indexOffset, Supplier<ShuffleMapOutputWriter> sparkWriter, ChecksumFile checksumFile,
            long expectedBytes) {
        this.publisher = publisher;
        this.arena = publisher.arena();
        this.shuffleId = shuffleId;
        this.mapId = mapId;
        this.offsets = new long[numPartitions + 1];
        this.indexOffset = indexOffset;
        this.sparkWriter = sparkWriter;
        this.checksumFile = checksumFile;
        this.expectedBytes = expectedBytes;
        this.hold = arena.hold();
    }

    /**
     * Writes partition {@code partition} (after the earlier ones) from {@code bytes} bytes of {@code in} at
     * {@code position}: read straight into the arena when it has room (a serialized shuffle's single spill file).
     */
    void readPartition(int partition, FileChannel in, long position, long bytes) throws IOException {
        ShufflePartitionWriter w = getPartitionWriter(partition);
        if (file == null && room(written + bytes)) {
            if (!arena.copyIn(in, position, dataOffset + written, bytes)) {
                throw spillEnds(partition, bytes);
            }
            data.position((int) (written + bytes));
            written += bytes;
            return;
        }
        try (OutputStream out = w.openStream()) { // no room after all: through the stream, which overflows
            ByteBuffer buffer = ByteBuffer.allocate(64 << 10);
            for (long done = 0; done < bytes; ) {
                buffer.clear().limit((int) Math.min(buffer.capacity(), bytes - done));
                int n = in.read(buffer, position + done);
                if (n < 0) {
                    throw spillEnds(partition, bytes);
                }
                out.write(buffer.array(), 0, n);
                done += n;
            }
        }
    }

    private IOException spillEnds(int partition, long bytes) {
        return new IOException("shuffle " + shuffleId + " map " + mapId + ": the spill file ends before partition "
                + partition + "'s " + bytes + " bytes");
    }

    @Override
    public ShufflePartitionWriter getPartitionWriter(int reducePartitionId) throws IOException {
        if (reducePartitionId <= current || reducePartitionId >= offsets.length - 1) {
            throw new IllegalArgumentException("shuffle " + shuffleId + " map " + mapId + ": partition "
                    + reducePartitionId + " after " + current + " of " + (offsets.length - 1));
        }
        for (int i = current + 1; i <= reducePartitionId; i++) {
            offsets[i] = written; // skipped partitions are empty
        }
        current = reducePartitionId;
        return new Partition(reducePartitionId, file == null ? null : file.getPartitionWriter(reducePartitionId));
    }

    /**
     * One partition's writer: a stream into the arena, or, after an overflow, Spark's partition writer's stream (never
     * its channel: Spark's file writer buffers its stream until commit, so a channel after stream writes would
     * write ahead of them).
     */
    private final class Partition implements ShufflePartitionWriter {
        private final int id;
        private final ShufflePartitionWriter sparks;
        private long bytes;

        Partition(int id, ShufflePartitionWriter sparks) {
            this.id = id;
            this.sparks = sparks;
        }

        @Override
        public OutputStream openStream() throws IOException {
            if (sparks != null) {
                return sparks.openStream();
            }
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    if (id != current) {
                        throw new IOException("partition " + id + " written after partition " + current + " began");
                    }
                    append(b, off, len);
                    bytes += len;
                }

                @Override
                public void close() throws IOException {
                    if (fileStream != null && id == current) {
                        fileStream.close(); // Spark's stream records the partition's length when closed
                        fileStream = null;
                    }
                }
            };
        }

        @Override
        public long getNumBytesWritten() {
            return sparks != null ? sparks.getNumBytesWritten() : bytes;
        }
    }

    private void append(byte[] b, int off, int len) throws IOException {
        if (len == 0) { // before the first byte there is no extent to put nothing into
            return;
        }
        if (fileStream == null && file == null && !room(written + len)) {
            overflow();
        }
        if (fileStream != null) {
            fileStream.write(b, off, len);
        } else {
            data.put(b, off, len);
        }
        written += len;
    }

    /** Makes the data extent hold {@code bytes}: in place, else moved; false when the arena has no room. */
    private boolean room(long bytes) {
        if (bytes <= capacity) {
            return true;
        }
        if (hold == null) { // the arena was closing when this began: nothing goes into it
            return false;
        }
        long first = expectedBytes > 0 ? expectedBytes : Math.min(FIRST_EXTENT, arena.capacity() / 16);
        long want = Math.max(bytes, dataOffset < 0 ? first : 2 * capacity);
        if (dataOffset >= 0 && arena.extendData(dataOffset, capacity, want)) {
            capacity = want;
            data = arena.view(dataOffset, capacity).position((int) written);
            return true;
        }
        long moved = arena.dataRoom() >= Math.max(want, MIN_ROOM) ? arena.allocateData(want) : -1;
        if (moved < 0) {
            return false;
        }
        ByteBuffer to = arena.view(moved, want);
        if (dataOffset >= 0) {
            to.put(arena.view(dataOffset, written));
            arena.release(dataOffset, capacity);
            publisher.metrics().arenaRelocations.inc();
        }
        dataOffset = moved;
        capacity = want;
        data = to;
        return true;
    }

    /** Hands the output to Spark's file writer: the partitions written so far, then every later byte. */
    private void overflow() throws IOException {
        moveToFile(current, true);
    }

    /**
     * Copies partitions {@code 0..last} (the non-empty ones: Spark's writers skip empty partitions too) from the arena
     * to Spark's file writer, leaving the last one's stream open when {@code keepLastOpen} (later bytes follow it),
     * and frees the output's extents.
     */
    private void moveToFile(int last, boolean keepLastOpen) throws IOException {
        file = sparkWriter.get();
        byte[] copy = new byte[64 << 10];
        for (int i = 0; i <= last; i++) {
            long end = i < current ? offsets[i + 1] : written;
            boolean open = keepLastOpen && i == last;
            if (end == offsets[i] && !open) {
                continue;
            }
            OutputStream out = file.getPartitionWriter(i).openStream();
            ByteBuffer from = dataOffset < 0 ? ByteBuffer.allocate(0)
                    : arena.view(dataOffset + offsets[i], end - offsets[i]);
            while (from.hasRemaining()) {
                int n = Math.min(copy.length, from.remaining());
                from.get(copy, 0, n);
                out.write(copy, 0, n);
            }
            if (open) {
                fileStream = out;
            } else {
                out.close();
            }
        }
        publisher.metrics().bytesOverflowCopied.inc(written);
        publisher.metrics().outputsOverflowed.inc();
        freeData();
        arena.release(indexOffset, 8L * offsets.length); // the file output gets its index placed when published
        leave();
    }

    /** The whole output to Spark's file instead: what is in the arena is copied there, its extents freed. */
    private MapOutputCommitMessage commitToFile(long[] checksums) throws IOException {
        current = offsets.length - 1;
        moveToFile(offsets.length - 2, false);
        return file.commitAllPartitions(checksums);
    }

    /** This writer no longer reads or writes the arena. */
    private void leave() {
        if (hold != null) {
            hold.close();
        }
    }

    @Override
    public MapOutputCommitMessage commitAllPartitions(long[] checksums) throws IOException {
        done = true;
        if (file != null) {
            return file.commitAllPartitions(checksums);
        }
        for (int i = current + 1; i < offsets.length; i++) {
            offsets[i] = written;
        }
        long[] lengths = Publication.lengths(offsets);
        if (hold == null) { // the arena was closing when this began: nothing of the output is in it
            return commitToFile(checksums);
        }
        boolean recorded = false;
        try {
            if (written == 0) {
                freeData();
            } else {
                arena.shrink(dataOffset, capacity, written);
                capacity = written;
            }
            ByteBuffer index = arena.view(indexOffset, 8L * offsets.length).order(ByteOrder.BIG_ENDIAN);
            for (long at : offsets) {
                index.putLong(at);
            }
            if (checksums.length > 0) {
                checksumFile.write(shuffleId, mapId, checksums);
            }
            if (!publisher.written(shuffleId, mapId, indexOffset, dataOffset, offsets, checksums)) {
                // the arena closed while this task wrote: the output goes to Spark's file
                recorded = true; // moveToFile frees the extents
                return commitToFile(checksums);
            }
            recorded = true;
        } finally {
            if (!recorded) {
                freeData();
                arena.release(indexOffset, 8L * offsets.length);
            }
            leave();
        }
        return MapOutputCommitMessage.of(lengths);
    }

    @Override
    public void abort(Throwable error) throws IOException {
        if (done) {
            return;
        }
        done = true;
        if (file != null) {
            file.abort(error);
            return;
        }
        freeData();
        arena.release(indexOffset, 8L * offsets.length);
        leave();
    }

    private void freeData() {
        if (dataOffset >= 0) {
            arena.release(dataOffset, capacity);
            dataOffset = -1;
            capacity = 0;
            data = null;
        }
    }
}
