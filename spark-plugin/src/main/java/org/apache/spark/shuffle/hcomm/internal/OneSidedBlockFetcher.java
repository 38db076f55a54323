package org.apache.spark.shuffle.hcomm.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockId;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;
import scala.Tuple2;
import scala.collection.AbstractIterator;

/**
 * Reads a reduce task's remote blocks with one-sided reads into borrowed chunks of the receive buffer, and hands
 * them out as streams that deserialise straight from that memory.
 *
 * <p>First the index of every map output (the offsets of the task's partitions) is read: one batch for all owners,
 * as many rounds as it takes to fit the borrowed chunks (usually one). Then the data: the partitions of one map
 * output are contiguous, so each map output is one range, cut into pieces of at most a chunk and packed into waves.
 * Two waves are in flight at once on two read batches: while the task deserialises wave {@code w}, wave
 * {@code w + 1} is landing. Rounds and waves span owners, so a task's round trips do not grow with the number of
 * executors it reads from; a failed read names its channel, so the {@link FetchFailedException} names the executor
 * whose output must be recomputed.
 *
 * <p>Confined to the task's thread. {@link #close()} waits for reads still in flight before the chunks go back.
 */
final class OneSidedBlockFetcher extends AbstractIterator<Tuple2<BlockId, InputStream>> implements AutoCloseable {
    private final ExecutorRuntime runtime;
    private final StageChannels.StageKey stage;
    private final int shuffleId;
    private final List<MapRead> reads;
    private final ShuffleReadMetricsReporter readMetrics;
    private final SerializerManager serializerManager;
    private final List<ReceiveBuffer.Chunk> chunks;
    private final ReadBatch[] batches;
    private final int chunkSize;

    private final List<Part> parts = new ArrayList<>();
    private final List<Piece> pieces = new ArrayList<>();
    private final List<Wave> waves = new ArrayList<>();
    private int nextPart;
    private int cursor; // piece the consumer is in
    private long waitNanos;
    private long waitReportedMs;
    /**
     * A wait timed out: reads it gave up on may still land in the chunks, which serve no other task until the stage
     * attempt's channels are destroyed ({@link ExecutorRuntime#retire}).
     */
    private boolean readsMayLandLate;
    private boolean closed;

    /** A reduce partition to hand out: its bytes are [start, end) of the task's sequence. */
    private record Part(ShuffleBlockId blockId, MapRead read, long start, long end) {
    }

    /** At most one chunk of one map output's range. */
    private static final class Piece {
        final MapRead read;
        final long src;
        final int length;
        final long start; // position in the task's sequence
        int wave;
        ReceiveBuffer.Chunk chunk;
        int chunkOffset;

        Piece(MapRead read, long src, int length, long start) {
            this.read = read;
            this.src = src;
            this.length = length;
            this.start = start;
        }
    }

    private static final class Wave {
        final int first;
        int last; // inclusive
        boolean issued;
        boolean landed;
        long issuedAt;

        Wave(int first) {
            this.first = first;
        }
    }

    OneSidedBlockFetcher(ExecutorRuntime runtime, StageChannels.StageKey stage, int shuffleId, List<MapRead> reads,
            ShuffleReadMetricsReporter readMetrics, SerializerManager serializerManager,
            List<ReceiveBuffer.Chunk> chunks, ReadBatch[] batches) {
        this.runtime = runtime;
        this.stage = stage;
        this.shuffleId = shuffleId;
        this.reads = reads;
        this.readMetrics = readMetrics;
        this.serializerManager = serializerManager;
        this.chunks = chunks;
        this.batches = batches;
        this.chunkSize = runtime.receiveBuffer().chunkSize();
        try {
            plan(readIndexes());
        } catch (Throwable e) {
            // not only RuntimeException: the FetchFailedException of a failed index read is checked (thrown
            // sneakily), and missing it leaked the borrowed chunks and batches for the executor's lifetime
            try {
                batches[0].await(); // ends an index round cut short by a failed read, so the batch can be reused
            } catch (TransportException ended) {
                noteTimeout(ended); // the read already failed; only giving the resources back matters now
            } catch (RuntimeException ignored) {
                // as above
            }
            close();
            throw e;
        }
    }

    // ---- planning ----

    /** Reads every map output's offsets, all owners in one batch per round; returns them in {@link #reads} order. */
    private long[][] readIndexes() {
        long[][] offsets = new long[reads.size()][];
        int i = 0;
        while (i < reads.size()) {
            // one round: the next reads whose offsets fit in the borrowed chunks
            int roundStart = i;
            int chunk = 0;
            int at = 0;
            List<int[]> places = new ArrayList<>();
            ReadBatch batch = batches[0];
            try {
                while (i < reads.size()) {
                    MapRead r = reads.get(i);
                    int bytes = 8 * (r.endReduce() - r.firstReduce() + 1);
                    if (bytes > chunkSize) {
                        throw new IllegalStateException("index of " + (bytes / 8) + " offsets does not fit a chunk of "
                                + chunkSize + " bytes (raise spark.shuffle.hcomm.readChunkSize)");
                    }
                    if (at + bytes > chunkSize) {
                        if (chunk + 1 == chunks.size()) {
                            break;
                        }
                        chunk++;
                        at = 0;
                    }
                    try {
                        batch.read(r.channel(), chunks.get(chunk).address + at,
                                r.indexAddress() + 8L * r.firstReduce(), bytes);
                    } catch (TransportException e) {
                        throw fetchFailed(r, r.firstReduce(), "one-sided read of the map output index refused", e);
                    }
                    places.add(new int[] {chunk, at, bytes});
                    at += bytes;
                    i++;
                }
                awaitTimed(batch, ShuffleMetrics.FetchWait.INDEX);
                runtime.metrics().indexRounds.inc();
            } catch (TransportException e) {
                long scratch = chunks.get(0).address;
                MapRead failed = blame(e, reads.subList(roundStart, i), r -> probe(scratch, r, e));
                throw fetchFailed(failed, failed.firstReduce(), "one-sided read of the map output index failed", e);
            }
            for (int k = roundStart; k < i; k++) {
                int[] p = places.get(k - roundStart);
                ByteBuffer v = chunks.get(p[0]).view.duplicate().order(ByteOrder.BIG_ENDIAN); // Spark's layout
                long[] off = new long[p[2] / 8];
                for (int j = 0; j < off.length; j++) {
                    off[j] = v.getLong(p[1] + 8 * j);
                }
                offsets[k] = off;
            }
        }
        return offsets;
    }

    /**
     * The read to name for a failed batch over {@code candidates}: the first on the channel that failed. When the
     * failure names no channel (a wait covering the whole batch timed out) and the batch read from several owners,
     * the first owner whose probe fails (see {@link #probe}); the first candidate when every owner answers.
     */
    static MapRead blame(TransportException e, List<MapRead> candidates, Predicate<MapRead> answers) {
        List<MapRead> owners = new ArrayList<>();
        for (MapRead r : candidates) {
            if (r.channel() == e.channel()) {
                return r;
            }
            if (owners.stream().noneMatch(o -> o.channel() == r.channel())) {
                owners.add(r);
            }
        }
        if (owners.size() > 1) {
            for (MapRead r : owners) {
                if (!answers.test(r)) {
                    return r;
                }
            }
        }
        return candidates.get(0);
    }

    /**
     * Whether {@code read}'s owner answers a read of its own (8 bytes of its index into {@code scratch}, bounded by
     * the read timeout) on a fresh batch: on the failed batch it would queue behind the reads that did not finish.
     * A probe's failure rides along in {@code failure}.
     */
    private boolean probe(long scratch, MapRead read, TransportException failure) {
        try (ReadBatch alone = runtime.newProbeBatch()) {
            alone.read(read.channel(), scratch, read.indexAddress() + 8L * read.firstReduce(), 8);
            alone.await();
            return true;
        } catch (TransportException e) {
            noteTimeout(e);
            failure.addSuppressed(e);
            return false;
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            return false;
        }
    }

    private void noteTimeout(TransportException e) {
        readsMayLandLate |= e.isTimeout();
    }

    private void plan(long[][] offsets) {
        long position = 0;
        for (int i = 0; i < reads.size(); i++) {
            MapRead r = reads.get(i);
            long[] off = offsets[i];
            long base = off[0];
            for (int k = 0; k + 1 < off.length; k++) {
                long len = off[k + 1] - off[k];
                if (len < 0) {
                    throw fetchFailed(r, r.firstReduce() + k, "published index is not monotonic", null);
                }
                if (len > 0) {
                    parts.add(new Part(new ShuffleBlockId(shuffleId, r.mapId(), r.firstReduce() + k), r,
                            position + off[k] - base, position + off[k + 1] - base));
                }
            }
            long total = off[off.length - 1] - base;
            for (long done = 0; done < total; done += chunkSize) {
                int len = (int) Math.min(chunkSize, total - done);
                pieces.add(new Piece(r, r.dataAddress() + base + done, len, position + done));
            }
            position += total;
        }
        packWaves();
    }

    /**
     * Assigns pieces to waves in order, whatever their owners. Wave {@code i} may fill
     * {@code min(2^i, half the borrowed chunks)} chunks: the first waves are small so deserialisation starts after one
     * chunk has landed instead of a full wave, later ones are large so each read batch stays long.
     */
    private void packWaves() {
        int perSet = Math.max(1, chunks.size() / 2);
        Wave w = null;
        int capacity = 0;
        int chunkInWave = 0;
        int at = 0;
        for (int j = 0; j < pieces.size(); j++) {
            Piece p = pieces.get(j);
            boolean fits = w != null && (at + p.length <= chunkSize || chunkInWave + 1 < capacity);
            if (!fits) {
                w = new Wave(j);
                waves.add(w);
                capacity = (int) Math.min(perSet, 1L << Math.min(waves.size() - 1, 30));
                chunkInWave = 0;
                at = 0;
            } else if (at + p.length > chunkSize) {
                chunkInWave++;
                at = 0;
            }
            int set = (waves.size() - 1) % 2;
            p.wave = waves.size() - 1;
            p.chunk = chunks.get(set * perSet + chunkInWave);
            p.chunkOffset = at;
            at += p.length;
            w.last = j;
        }
    }

    // ---- the pipeline ----

    private void issue(int index) {
        Wave w = waves.get(index);
        if (w.issued) {
            return;
        }
        w.issued = true;
        ReadBatch batch = batches[index % 2];
        for (int j = w.first; j <= w.last; j++) {
            Piece p = pieces.get(j);
            try {
                batch.read(p.read.channel(), p.chunk.address + p.chunkOffset, p.src, p.length);
            } catch (TransportException e) {
                w.landed = true; // the refused read ended the batch and waited for the reads before it
                throw fetchFailed(p.read, firstReduceIn(p), "one-sided read refused", e);
            }
        }
        try {
            batch.flush();
        } catch (TransportException e) {
            w.landed = true; // the batch was ended and waited for by the failed call
            throw waveFailed(index, e, "one-sided reads could not be submitted");
        }
        w.issuedAt = System.nanoTime();
        runtime.metrics().readsIssued.inc(w.last - w.first + 1);
    }

    private void land(int index) {
        Wave w = waves.get(index);
        if (w.landed) {
            return;
        }
        w.landed = true;
        try {
            awaitTimed(batches[index % 2],
                    index == 0 ? ShuffleMetrics.FetchWait.FIRST_WAVE : ShuffleMetrics.FetchWait.LATER_WAVES);
        } catch (TransportException e) {
            throw waveFailed(index, e, "one-sided read failed");
        }
        runtime.metrics().readLanded(System.nanoTime() - w.issuedAt);
        runtime.metrics().readWaves.inc();
        long bytes = 0;
        long crossHost = 0;
        for (int j = w.first; j <= w.last; j++) {
            Piece p = pieces.get(j);
            bytes += p.length;
            if (p.read.crossHost()) {
                crossHost += p.length;
            }
        }
        runtime.metrics().bytesReadOneSided.inc(bytes);
        runtime.metrics().bytesReadCrossHost.inc(crossHost);
        readMetrics.incRemoteBytesRead(bytes);
    }

    /**
     * Waits for a batch, counting the wait as fetch wait time (summed in ns, reported to Spark in whole ms) and in
     * the plugin's split of it by {@code what}.
     */
    private void awaitTimed(ReadBatch batch, ShuffleMetrics.FetchWait what) throws TransportException {
        long t0 = System.nanoTime();
        try {
            batch.await();
        } finally {
            long waited = System.nanoTime() - t0;
            runtime.metrics().fetchWaited(what, waited);
            waitNanos += waited;
            long ms = nearestMillis(waitNanos);
            readMetrics.incFetchWaitTime(ms - waitReportedMs);
            waitReportedMs = ms;
        }
    }

    /**
     * Spark takes fetch wait in whole milliseconds. The reader reports the running total rounded to the nearest one,
     * so a task's report is off by at most half a millisecond per shuffle it reads; flooring (as
     * {@code TimeUnit.toMillis} does) dropped up to a whole one, and on a stage of many short waits most of them.
     */
    static long nearestMillis(long nanos) {
        return (nanos + 500_000) / 1_000_000;
    }

    /** The fetch failure of wave {@code index}: names the first piece of the read {@link #blame} finds. */
    private RuntimeException waveFailed(int index, TransportException e, String why) {
        Wave w = waves.get(index);
        List<MapRead> inWave = new ArrayList<>();
        for (int j = w.first; j <= w.last; j++) {
            if (!inWave.contains(pieces.get(j).read)) {
                inWave.add(pieces.get(j).read);
            }
        }
        Piece first = pieces.get(w.first);
        MapRead failed = blame(e, inWave, r -> probe(first.chunk.address + first.chunkOffset, r, e));
        for (int j = w.first; j <= w.last; j++) {
            if (pieces.get(j).read == failed) {
                return fetchFailed(failed, firstReduceIn(pieces.get(j)), why, e);
            }
        }
        return fetchFailed(failed, failed.firstReduce(), why, e);
    }

    /** The first reduce partition with bytes in piece {@code p}. */
    private int firstReduceIn(Piece p) {
        for (Part part : parts) {
            if (part.read() == p.read && part.end() > p.start) {
                return part.blockId().reduceId();
            }
        }
        return p.read.firstReduce();
    }

    /** The piece holding sequence position {@code pos}, landed. */
    private Piece pieceAt(long pos) {
        while (cursor + 1 < pieces.size() && pieces.get(cursor + 1).start <= pos) {
            cursor++;
        }
        while (cursor > 0 && pieces.get(cursor).start > pos) {
            cursor--;
        }
        Piece p = pieces.get(cursor);
        int w = p.wave;
        issue(w);
        if (w + 1 < waves.size()) {
            issue(w + 1); // its chunks were freed when the consumer left wave w - 1
        }
        land(w);
        return p;
    }

    // ---- the iterator ----

    @Override
    public boolean hasNext() {
        if (closed) {
            return false;
        }
        if (nextPart < parts.size()) {
            return true;
        }
        close(); // the last block's records are consumed: the chunks can serve other tasks now
        return false;
    }

    @Override
    public Tuple2<BlockId, InputStream> next() {
        Part part = parts.get(nextPart++);
        readMetrics.incRemoteBlocksFetched(1);
        InputStream raw = new PartStream(part);
        InputStream wrapped;
        try {
            wrapped = serializerManager.wrapStream(part.blockId(), raw);
        } catch (RuntimeException e) {
            throw fetchFailed(part.read(), part.blockId().reduceId(), "stream of the block cannot be opened", e);
        }
        return new Tuple2<>(part.blockId(), new CorruptionGuard(wrapped, part));
    }

    /** What a failed read of {@code id} says: why, the block (shuffle, map, reduce), its owner and the cause. */
    private static String describe(ShuffleBlockId id, MapRead read, String why, Throwable cause) {
        return why + ": " + id + " from executor " + read.owner().executorId()
                + (cause == null ? "" : " (" + cause.getMessage() + ")");
    }

    /**
     * The one way a read failure leaves the fetcher: a timed-out wait among its causes retires the chunks, and a
     * transport failure in a stage attempt that ended meanwhile kills the task instead of naming the owner
     * ({@link ExecutorRuntime#endedWhileReading}).
     */
    private RuntimeException fetchFailed(MapRead read, int reduceId, String why, Throwable cause) {
        ShuffleBlockId id = new ShuffleBlockId(shuffleId, read.mapId(), reduceId);
        if (cause instanceof TransportException t) {
            noteTimeout(t);
            if (runtime.stageEnded(stage)) {
                return runtime.endedWhileReading(stage, describe(id, read, why, t), t);
            }
        }
        return SneakyThrow.sneaky(new FetchFailedException(read.owner(), shuffleId, read.mapId(), read.mapIndex(),
                reduceId, describe(id, read, why, cause), cause));
    }

    /**
     * Waits for reads still in flight, then gives the chunks and batches back — or, when a wait timed out, retires
     * them ({@link ExecutorRuntime#retire}). Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < waves.size(); i++) {
            Wave w = waves.get(i);
            if (w.issued && !w.landed) {
                w.landed = true;
                try {
                    batches[i % 2].await();
                } catch (TransportException e) {
                    noteTimeout(e); // the task is over; only the chunks matter now
                }
            }
        }
        if (readsMayLandLate) {
            runtime.retire(stage, chunks, batches);
        } else {
            runtime.giveBack(chunks, batches);
        }
    }

    /**
     * Where a block that failed to decode went bad, the way Spark's own fetch tells (SPARK-36206): the checksum of
     * the block's bytes as this reader gets them, computed with the algorithm of Spark's shuffle checksums, goes to
     * the owner's block manager, which compares it with the checksum its writer stored and with one it computes
     * again over the file on its disk. The bytes are read again one-sidedly into this task's first chunk (the
     * chunks of a block already consumed may hold other bytes by now); the reads in flight land first. Never
     * throws: what cannot be told is said instead.
     */
    private String diagnose(Part part) {
        String algorithm = runtime.checksumAlgorithm();
        if (algorithm == null) {
            return "spark.shuffle.checksum.enabled is off, so where it went bad cannot be told";
        }
        if (closed) {
            return "where it went bad cannot be told: the task's chunks were already given back";
        }
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(runtime.readTimeoutMs());
        try {
            for (int i = 0; i < waves.size(); i++) {
                Wave w = waves.get(i);
                if (w.issued && !w.landed) {
                    w.landed = true;
                    batches[i % 2].await();
                }
            }
            Piece first = pieces.get(0);
            for (Piece p : pieces) {
                if (p.start <= part.start() && part.start() < p.start + p.length) {
                    first = p;
                }
            }
            long src = first.src + (part.start() - first.start); // a map output's range is read contiguously
            long length = part.end() - part.start();
            java.util.zip.Checksum checksum = org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper
                    .getChecksumByAlgorithm(algorithm);
            ReceiveBuffer.Chunk scratch = chunks.get(0);
            for (long at = 0; at < length; at += chunkSize) {
                if (System.nanoTime() > deadline) {
                    return "where it went bad cannot be told: reading the block again took longer than readTimeout";
                }
                int n = (int) Math.min(chunkSize, length - at);
                batches[0].read(part.read().channel(), scratch.address, src + at, n);
                batches[0].await();
                checksum.update(scratch.view.slice(0, n)); // straight from the chunk, no copy
            }
            Object cause = runtime.diagnoseCorruption(part.read().owner(), shuffleId, part.read().mapId(),
                    part.blockId().reduceId(), checksum.getValue(), algorithm);
            return "Spark's checksum diagnosis: " + cause + explain(String.valueOf(cause));
        } catch (TransportException e) {
            noteTimeout(e); // a read that timed out may still land: the chunks are retired, not given back
            return "where it went bad cannot be told: " + e;
        } catch (RuntimeException e) {
            return "where it went bad cannot be told: " + e;
        }
    }

    /** What Spark's diagnosis causes mean for a one-sided read. */
    private static String explain(String cause) {
        return switch (cause) {
            case "DISK_ISSUE" -> ", the owner's file no longer matches the checksum its writer stored";
            case "NETWORK_ISSUE" -> ", the owner's file is intact: the bytes changed in the owner's registered "
                    + "memory or on the way";
            case "CHECKSUM_VERIFY_PASS" -> ", the bytes read again match the writer's checksum: the first read "
                    + "went bad on the way or in this executor";
            default -> "";
        };
    }

    /** The bytes of one partition, read straight from the receive buffer. */
    private final class PartStream extends InputStream {
        private final Part part;
        private long pos;

        PartStream(Part part) {
            this.part = part;
            this.pos = part.start();
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (pos >= part.end()) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            if (closed) {
                throw new IllegalStateException("block " + part.blockId() + " read after its task finished");
            }
            Piece p = pieceAt(pos);
            int inPiece = (int) (pos - p.start);
            int n = (int) Math.min(Math.min(len, p.length - inPiece), part.end() - pos);
            p.chunk.view.get(p.chunkOffset + inPiece, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public int available() {
            return (int) Math.min(Integer.MAX_VALUE, part.end() - pos);
        }
    }

    /** Turns a failure to decode a block (corrupt or cut bytes) into a fetch failure, so Spark recomputes it. */
    private final class CorruptionGuard extends InputStream {
        private final InputStream in;
        private final Part part;

        CorruptionGuard(InputStream in, Part part) {
            this.in = in;
            this.part = part;
        }

        private RuntimeException corrupt(IOException e) {
            return fetchFailed(part.read(), part.blockId().reduceId(), "block is corrupt (" + diagnose(part) + ")",
                    e);
        }

        @Override
        public int read() {
            try {
                return in.read();
            } catch (IOException e) {
                throw corrupt(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) {
            try {
                return in.read(b, off, len);
            } catch (IOException e) {
                throw corrupt(e);
            }
        }

        @Override
        public int available() throws IOException {
            return in.available();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
