package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.io.InputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.storage.BlockId;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;
import scala.Tuple2;
import scala.collection.AbstractIterator;

/**
 * Reads a reduce task's remote blocks with one-sided reads into borrowed chunks of the receive buffer, and hands
 * them to Spark's reader as streams that deserialise straight from that memory.
 *
 * <p>First the offsets of the task's partitions in every map output (travelled with the publications, else read from
 * the owners' indexes: {@link IndexRounds}); then the data in the waves of a {@link WavePlan}, each on a read batch
 * of its own. The first two waves go out when the task first reads, not at open, so a task that opens its reader and
 * then waits reads what the owners hold by then. When the task's bytes fit its chunks, the later waves go out as soon
 * as the first landed (up to the transport's {@link org.hcomm.bridge.transport.Transport#independentBatches()
 * independent batches}) and the task deserialises each wave while the next lands; otherwise two waves alternate over
 * two sets of chunks. Waves span owners, so a task's round trips do not grow with the number of executors it reads
 * from. A failed read leaves through {@link Blame}, which names the executor whose output must be recomputed.
 *
 * <p>Confined to the task's thread. {@link #close()} waits for reads still in flight before the chunks go back; once
 * a wait timed out it waits for none and the chunks are retired ({@link ReadResources#retire}), so a late reply
 * lands in memory no other task uses.
 */
public final class OneSidedBlockFetcher extends AbstractIterator<Tuple2<BlockId, InputStream>>
        implements AutoCloseable {
    private final ReadResources resources;
    private final Blame blame;
    private final ShuffleMetrics metrics;
    private final StageAttempt stage;
    private final int shuffleId;
    private final List<MapRead> reads;
    private final ShuffleReadMetricsReporter readMetrics;
    private final SerializerManager serializerManager;
    private ReadResources.Lease lease;
    private final List<ReceiveBuffer.Chunk> chunks;
    private ReadBatch[] batches;
    private final int chunkSize;

    private WavePlan plan;
    /** Waves issued so far: 0 .. issued - 1. */
    private int issued;
    private int nextPart;
    private final FetchWaits waits;
    /**
     * A wait timed out: reads it gave up on may still land in the chunks, which serve no other task until the stage
     * attempt's channels are destroyed ({@link ReadResources#retire}).
     */
    private boolean readsMayLandLate;
    private boolean closed;
    /** Done once the reads of a closed reader can land nowhere any more ({@link #retired()}). */
    private CompletableFuture<Void> retired = CompletableFuture.completedFuture(null);

    /**
     * Borrows chunks and batches for {@code reads} (about {@code bytes} in all) and reads their indexes; null when no
     * chunk became free within the read timeout (the caller falls back or fails). A failed index read throws the
     * fetch failure {@link Blame} makes, the borrowed resources given back.
     */
    public static OneSidedBlockFetcher open(ReadResources resources, Blame blame, ShuffleMetrics metrics,
            StageAttempt stage, int shuffleId, List<MapRead> reads, long bytes, ShuffleReadMetricsReporter readMetrics,
            SerializerManager serializerManager) {
        ReadResources.Lease lease = resources.borrow(bytes);
        return lease == null ? null : new OneSidedBlockFetcher(resources, blame, metrics, stage, shuffleId, reads,
                readMetrics, serializerManager, lease);
    }

    private OneSidedBlockFetcher(ReadResources resources, Blame blame, ShuffleMetrics metrics, StageAttempt stage,
            int shuffleId, List<MapRead> reads, ShuffleReadMetricsReporter readMetrics,
            SerializerManager serializerManager, ReadResources.Lease lease) {
        this.resources = resources;
        this.blame = blame;
        this.metrics = metrics;
        this.stage = stage;
        this.shuffleId = shuffleId;
        this.reads = reads;
        this.readMetrics = readMetrics;
        this.serializerManager = serializerManager;
        this.lease = lease;
        this.chunks = lease.chunks();
        this.batches = lease.batches();
        this.chunkSize = resources.chunkSize();
        this.waits = new FetchWaits(metrics, readMetrics);
        try {
            long[][] offsets = readIndexes();
            try {
                plan = new WavePlan(shuffleId, reads, offsets, chunks, chunkSize, resources.links()
                        .firstWaveChunks(reads.stream().map(r -> r.owner().host()).distinct().toList(), chunkSize));
            } catch (WavePlan.BadIndex e) {
                throw readFailed(e.read, e.reduceId, e.getMessage(), null);
            }
            if (plan.fitsBorrowed && plan.waves.size() > 2) {
                this.lease = resources.withBatches(lease, plan.waves.size());
                this.batches = this.lease.batches();
            }
        } catch (Throwable e) {
            // Throwable: a failed index read's FetchFailedException is checked (thrown sneakily), and the borrowed
            // chunks and batches must go back whatever was thrown
            if (plan == null) { // an index round cut short by a failed read: end it, so the batch can be reused
                try {
                    batches[0].await();
                } catch (TransportException ended) {
                    noteTimeout(ended); // the read already failed; only giving the resources back matters now
                } catch (RuntimeException ignored) {
                    // as above
                }
            } // else close() waits for the waves issued
            close();
            throw e;
        }
    }

    /** Every map output's offsets, in {@link #reads} order: as they travelled with it, else read from its index. */
    private long[][] readIndexes() {
        long[][] offsets = new long[reads.size()][];
        boolean allTravelled = true;
        for (int k = 0; k < reads.size(); k++) {
            offsets[k] = reads.get(k).offsets();
            allTravelled &= offsets[k] != null;
        }
        if (allTravelled) {
            return offsets; // the usual case: no index round, nothing more allocated
        }
        long[][] read = readIndexes(reads.stream().filter(r -> r.offsets() == null).toList());
        for (int k = 0, u = 0; k < reads.size(); k++) {
            offsets[k] = offsets[k] != null ? offsets[k] : read[u++];
        }
        return offsets;
    }

    /** Reads the offsets of {@code reads} from the owners' indexes; a failed round leaves as {@link Blame} says. */
    private long[][] readIndexes(List<MapRead> reads) {
        try {
            return IndexRounds.read(reads, batches[0], chunks, chunkSize, waits, metrics);
        } catch (IndexRounds.Refused e) {
            throw readFailed(e.read, e.read.firstReduce(), "one-sided read of the map output index refused", e.cause);
        } catch (IndexRounds.Failed e) {
            long scratch = chunks.get(0).address;
            MapRead failed = Blame.blame(e.cause, e.round,
                    r -> blame.probe(scratch, r, e.cause, () -> readsMayLandLate = true));
            throw readFailed(failed, failed.firstReduce(), "one-sided read of the map output index failed", e.cause);
        }
    }

    private void noteTimeout(TransportException e) {
        readsMayLandLate |= e.isTimeout();
    }

    // ---- the pipeline ----

    private ReadBatch batchOf(int wave) {
        return batches[wave % batches.length];
    }

    /** Issues the waves up to {@code last} not issued yet, in order (their batches are free: see the callers). */
    private void issueThrough(int last) {
        int end = Math.min(last, plan.waves.size() - 1);
        while (issued <= end) {
            issue(issued++);
        }
    }

    private void issue(int index) {
        if (index >= batches.length) {
            land(index - batches.length); // the batch's wave before: landed already unless the consumer skipped it
        }
        WavePlan.Wave w = plan.waves.get(index);
        w.depth = waits.issueDepth();
        ReadBatch batch = batchOf(index);
        for (int j = w.first; j <= w.last; j++) {
            WavePlan.Piece p = plan.pieces.get(j);
            try {
                batch.read(p.read.channel(), p.chunk.address + p.chunkOffset, p.src, p.length);
            } catch (TransportException e) {
                w.landed = true; // the refused read ended the batch and waited for the reads before it
                throw readFailed(p.read, plan.firstReduceIn(p), "one-sided read refused", e);
            }
        }
        try {
            batch.flush();
        } catch (TransportException e) {
            w.landed = true; // the batch was ended and waited for by the failed call
            throw waveFailed(index, e, "one-sided reads could not be submitted");
        }
        w.issuedAt = System.nanoTime();
        metrics.readsIssued.inc(w.last - w.first + 1);
    }

    private void land(int index) {
        WavePlan.Wave w = plan.waves.get(index);
        if (w.landed) {
            return;
        }
        w.landed = true;
        long waited;
        try {
            waited = waits.await(batchOf(index),
                    index == 0 ? ShuffleMetrics.FetchWait.FIRST_WAVE : ShuffleMetrics.FetchWait.LATER_WAVES, w.depth);
        } catch (TransportException e) {
            throw waveFailed(index, e, "one-sided read failed");
        }
        long took = System.nanoTime() - w.issuedAt;
        metrics.readLanded(took);
        metrics.readWaves.inc();
        long bytes = 0;
        long crossHost = 0;
        String host = plan.pieces.get(w.first).read.owner().host();
        for (int j = w.first; j <= w.last; j++) {
            WavePlan.Piece p = plan.pieces.get(j);
            bytes += p.length;
            if (p.read.crossHost()) {
                crossHost += p.length;
            }
            if (host != null && !host.equals(p.read.owner().host())) {
                host = null; // a wave from several hosts says nothing of one link
            }
        }
        if (host != null) {
            resources.links().landed(host, bytes, took, waited);
        }
        metrics.bytesReadOneSided.inc(bytes);
        metrics.bytesReadCrossHost.inc(crossHost);
        readMetrics.incRemoteBytesRead(bytes);
    }

    /**
     * Lands every wave issued and not yet landed (before the chunks go back, or are read again); a failed wait leaves
     * the waves after it unlanded, so a caller that goes on calls again.
     */
    private void landIssued() throws TransportException {
        for (int i = 0; i < issued; i++) {
            WavePlan.Wave w = plan.waves.get(i);
            if (!w.landed) {
                w.landed = true;
                batchOf(i).await();
            }
        }
    }

    /** The fetch failure of wave {@code index}: names the first piece of the read {@link Blame} finds. */
    private RuntimeException waveFailed(int index, TransportException e, String why) {
        WavePlan.Wave w = plan.waves.get(index);
        WavePlan.Piece first = plan.pieces.get(w.first);
        MapRead failed = Blame.blame(e, plan.readsIn(w),
                r -> blame.probe(first.chunk.address + first.chunkOffset, r, e, () -> readsMayLandLate = true));
        for (int j = w.first; j <= w.last; j++) {
            if (plan.pieces.get(j).read == failed) {
                return readFailed(failed, plan.firstReduceIn(plan.pieces.get(j)), why, e);
            }
        }
        return readFailed(failed, failed.firstReduce(), why, e);
    }

    /** A read failure leaves here: a timed-out wait among its causes retires the chunks; {@link Blame} decides. */
    private RuntimeException readFailed(MapRead read, int reduceId, String why, Throwable cause) {
        if (cause instanceof TransportException t) {
            noteTimeout(t);
        }
        return blame.readFailed(stage, shuffleId, read, reduceId, why, cause);
    }

    /**
     * The piece holding sequence position {@code pos}, landed, and the waves after it issued: the next one (with two
     * sets of chunks, its chunks were freed when the consumer left wave w - 1); when every wave has chunks of its
     * own, also every wave whose batch is free once wave {@code w} landed, before the task deserialises it.
     */
    WavePlan.Piece landedPieceAt(long pos) {
        WavePlan.Piece p = plan.pieceAt(pos);
        int w = p.wave;
        issueThrough(w + 1);
        land(w);
        if (plan.fitsBorrowed) {
            issueThrough(w + batches.length);
        }
        return p;
    }

    boolean isClosed() {
        return closed;
    }

    // ---- the iterator ----

    @Override
    public boolean hasNext() {
        if (closed) {
            return false;
        }
        if (nextPart < plan.parts.size()) {
            return true;
        }
        close(); // the last block's records are consumed: the chunks can serve other tasks now
        return false;
    }

    @Override
    public Tuple2<BlockId, InputStream> next() {
        WavePlan.Part part = plan.parts.get(nextPart++);
        readMetrics.incRemoteBlocksFetched(1);
        InputStream wrapped;
        try {
            wrapped = serializerManager.wrapStream(part.blockId(), new PartStream(this, part));
        } catch (RuntimeException e) {
            throw readFailed(part.read(), part.blockId().reduceId(), "stream of the block cannot be opened", e);
        }
        return new Tuple2<>(part.blockId(), new PartStream.CorruptionGuard(wrapped,
                e -> readFailed(part.read(), part.blockId().reduceId(), "block is corrupt (" + diagnose(part) + ")",
                        e)));
    }

    /**
     * {@link CorruptionDiagnosis} of a block that failed to decode, read again into this task's first chunk once the
     * reads in flight landed. Never throws: what cannot be told is said instead.
     */
    private String diagnose(WavePlan.Part part) {
        String algorithm = CorruptionDiagnosis.checksumAlgorithm();
        if (algorithm == null) {
            return "spark.shuffle.checksum.enabled is off, so where it went bad cannot be told";
        }
        if (closed) {
            return "where it went bad cannot be told: the task's chunks were already given back";
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(resources.readTimeoutMs());
        try {
            landIssued();
            WavePlan.Piece first = plan.firstPieceOf(part);
            long src = first.src + (part.start() - first.start); // a map output's range is read contiguously
            return CorruptionDiagnosis.diagnose(algorithm, deadline, shuffleId, part.read(),
                    part.blockId().reduceId(), src, part.end() - part.start(), batches[0], chunks.get(0), chunkSize);
        } catch (TransportException e) {
            noteTimeout(e); // a read that timed out may still land: the chunks are retired, not given back
            return "where it went bad cannot be told: " + e;
        } catch (RuntimeException e) {
            return "where it went bad cannot be told: " + e;
        }
    }

    /**
     * After {@link #close()}: done once no read of this reader can still be running (at once, unless a wait timed
     * out and its batches are being closed off the task's thread). The reader's hold on its stage's channels lasts
     * until then.
     */
    public CompletableFuture<Void> retired() {
        return retired;
    }

    /**
     * Waits for reads still in flight, then gives the chunks and batches back — or, when a wait timed out, retires
     * them ({@link ReadResources#retire}). Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        metrics.readTasks.inc();
        metrics.readRoundTrips.inc(waits.roundTrips());
        if (plan != null && plan.fitsBorrowed && waits.roundTrips() > 2) {
            metrics.readTasksOverTwoRoundTrips.inc();
        }
        if (plan != null) {
            // every wave in flight, past failed ones; but once a wait timed out, no more: retire closes the batches
            // off this thread, so an owner that does not answer holds the task's end (and Spark's hearing of its
            // fetch failure) for one read timeout, not one per wave in flight
            boolean landed = false;
            while (!landed && !readsMayLandLate) {
                try {
                    landIssued();
                    landed = true;
                } catch (TransportException e) {
                    noteTimeout(e); // the task is over; only the chunks matter now
                }
            }
        }
        if (readsMayLandLate) {
            retired = resources.retire(stage, lease, () -> blame.channelsDestroyed(stage));
        } else {
            resources.giveBack(lease);
        }
    }
}
