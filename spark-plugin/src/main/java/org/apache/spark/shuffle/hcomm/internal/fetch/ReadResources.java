package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;

/**
 * What reduce tasks borrow for their one-sided reads: chunks of the executor's registered receive buffer (the "HCCL
 * buffer") and read batches (idle ones are kept for the next task). Owns the receive region and every idle batch;
 * a batch on loan is the borrower's until it gives it back. Chunks that a timed-out read may still write into are
 * retired until the channels of their stage attempt are destroyed. Thread-safe: any task thread borrows and gives
 * back; retired batches are closed on the reaper's threads.
 *
 * <p>A task asks for what its bytes need, up to {@code maxBytesInFlight}, so that a task whose bytes fit has a wave
 * in flight on each of its batches ({@link #withBatches}); the buffer shares the chunks among concurrent readers
 * ({@link ReceiveBuffer#borrow}). A reader waits only for its first two chunks (its first two waves need them); one
 * that cannot get two within the read timeout falls back to Spark's fetch.
 */
public final class ReadResources implements AutoCloseable {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final Transport transport;
    private final ShuffleMetrics metrics;
    private final String executorId;
    private final long readTimeoutMs;
    private final long maxBytesInFlight;
    private final Region region;
    private final ReceiveBuffer receive;
    private final ConcurrentLinkedQueue<ReadBatch> idleBatches = new ConcurrentLinkedQueue<>();
    private final LinkEstimates links = new LinkEstimates();
    /** Closes the batches of readers whose reads timed out ({@link #retire}); its threads end when idle. */
    private final ExecutorService reaper;
    private volatile boolean closed;

    /** What a reduce task borrows. */
    record Lease(List<ReceiveBuffer.Chunk> chunks, ReadBatch[] batches) {
    }

    /**
     * Registers a receive buffer of {@code bufferBytes} in chunks of {@code chunkSize}; a task borrows at most
     * {@code maxBytesInFlight} of it, waiting at most {@code readTimeoutMs} for a chunk.
     */
    public ReadResources(Transport transport, ShuffleMetrics metrics, String executorId, long bufferBytes,
            int chunkSize, long maxBytesInFlight, long readTimeoutMs) {
        this.transport = transport;
        this.metrics = metrics;
        this.executorId = executorId;
        this.readTimeoutMs = readTimeoutMs;
        this.maxBytesInFlight = maxBytesInFlight;
        this.region = transport.allocate("hcomm-receive-buffer", bufferBytes);
        this.receive = new ReceiveBuffer(region, chunkSize);
        this.reaper = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "hcomm-retire-" + executorId);
            t.setDaemon(true);
            return t;
        });
    }

    int chunkSize() {
        return receive.chunkSize();
    }

    /** What the executor's readers measured of the links to the owners' hosts. */
    LinkEstimates links() {
        return links;
    }

    long readTimeoutMs() {
        return readTimeoutMs;
    }

    /** Whether the executor still reads (not shutting down). */
    public boolean open() {
        return !closed;
    }

    /** The executor is shutting down: {@link #open()} is false from now on, and batches given back are closed. */
    public void stopLending() {
        closed = true;
    }

    /**
     * Chunks and two read batches for a reader of about {@code bytes} (the tracker's sizes), or null when no chunk
     * became free within the read timeout. It asks for no more chunks than the bytes need (plus one for the
     * offsets), nor more than maxBytesInFlight or the buffer; the buffer may lend fewer (see the class comment).
     */
    Lease borrow(long bytes) {
        long needed = bytes / receive.chunkSize() + 2;
        long cap = Math.min(maxBytesInFlight / receive.chunkSize(), receive.totalChunks());
        int max = (int) Math.max(2, Math.min(cap, needed));
        List<ReceiveBuffer.Chunk> chunks;
        try {
            chunks = receive.borrow(2, max, readTimeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for receive buffer space", e);
        }
        if (chunks.isEmpty()) {
            return null; // the caller falls back (or fails, with fallback `never`)
        }
        ReadBatch[] batches = new ReadBatch[2];
        try {
            for (int i = 0; i < 2; i++) {
                ReadBatch b = idleBatches.poll();
                batches[i] = b != null ? b : transport.newReadBatch();
            }
        } catch (RuntimeException | Error e) {
            receive.giveBack(chunks); // or they are lost to every later task of this executor
            for (ReadBatch b : batches) {
                if (b != null) {
                    idleBatches.add(b);
                }
            }
            throw e;
        }
        return new Lease(chunks, batches);
    }

    /**
     * The batches of {@code lease} grown to {@code wanted}, at most as many as the transport completes apart
     * ({@link Transport#independentBatches()}), for a reader whose waves each have chunks of their own; the lease
     * as it was when it has them, or when no more can be made (the reader then keeps two waves in flight).
     */
    Lease withBatches(Lease lease, int wanted) {
        int n = Math.min(wanted, transport.independentBatches());
        if (n <= lease.batches().length) {
            return lease;
        }
        ReadBatch[] batches = Arrays.copyOf(lease.batches(), n);
        for (int i = lease.batches().length; i < n; i++) {
            ReadBatch b = idleBatches.poll();
            try {
                batches[i] = b != null ? b : transport.newReadBatch();
            } catch (RuntimeException e) {
                LOG.debug("HComm: no read batch beyond {} for a reader ({}); it keeps fewer waves in flight", i,
                        e.toString());
                return new Lease(lease.chunks(), Arrays.copyOf(batches, i));
            } catch (Error e) { // the caller gives back the lease it had: the batches taken here go back now
                idleBatches.addAll(Arrays.asList(batches).subList(lease.batches().length, i));
                throw e;
            }
        }
        return new Lease(lease.chunks(), batches);
    }

    /** A read batch of its own, for a probe that must not queue behind a batch's reads; the caller closes it. */
    ReadBatch newProbeBatch() {
        return transport.newReadBatch();
    }

    void giveBack(Lease lease) {
        receive.giveBack(lease.chunks());
        for (ReadBatch b : lease.batches()) {
            if (closed) {
                b.close();
            } else {
                idleBatches.add(b);
            }
        }
    }

    /**
     * For a reader of {@code stage} whose reads timed out: its batches are closed (their threads may still hold the
     * reads; freeing a thread stops it) and its chunks retired (a late reply could still land in them) until the
     * stage attempt's channels are destroyed, so neither serves another task meanwhile. {@code destroyed} says,
     * once the chunks are retired, whether they already are.
     *
     * <p>Returns at once: closing a batch waits for its reads (up to the read timeout each, with an owner that does
     * not answer), so the batches are closed together on threads of their own and the chunks retired after the last,
     * while the task ends and Spark hears of its fetch failure. Until then the chunks stay on loan, lent to nobody.
     * The future completes once the batches are closed and the chunks retired: the reader's hold on the stage's
     * channels must last until then (their destroy would pull them from under the closes' waits).
     */
    CompletableFuture<Void> retire(StageAttempt stage, Lease lease, BooleanSupplier destroyed) {
        ReadBatch[] batches = lease.batches();
        CompletableFuture<?>[] closes = new CompletableFuture<?>[batches.length];
        for (int i = 0; i < batches.length; i++) {
            ReadBatch b = batches[i];
            try {
                b.flush(); // on the reader's thread: HComm's batch mode belongs to the thread that opened it
            } catch (TransportException | RuntimeException e) {
                // its reads are thrown away; the close below frees the thread whatever they did
            }
            try {
                closes[i] = CompletableFuture.runAsync(b::close, reaper);
            } catch (RejectedExecutionException e) { // the executor is closing: close it here
                closes[i] = CompletableFuture.runAsync(b::close, Runnable::run);
            }
        }
        // the batches first: once the chunks are retired, the end of the attempt may reclaim them at any time
        return CompletableFuture.allOf(closes).handle((ok, failed) -> {
            try {
                if (failed != null) { // a thread may still hold reads: the chunks must never come back
                    LOG.warn("HComm: could not free a read batch whose reads timed out", failed);
                }
                retireChunks(stage, lease.chunks(), failed == null, destroyed);
            } catch (RuntimeException | Error e) {
                LOG.error("HComm: {} receive buffer chunks of a reader of {} could not be retired; they stay on loan",
                        lease.chunks().size(), stage, e);
            }
            return null;
        });
    }

    private void retireChunks(StageAttempt stage, List<ReceiveBuffer.Chunk> chunks, boolean freed,
            BooleanSupplier destroyed) {
        receive.retire(freed ? stage : null, chunks);
        metrics.chunksRetired.inc(chunks.size());
        LOG.warn("HComm: retired {} receive buffer chunks after a read timed out (reads may still land in them) {}; "
                + "{} of {} chunks retired in this executor", chunks.size(),
                freed ? "until the channels of " + stage + " are destroyed" : "for good", receive.retired(),
                receive.totalChunks());
        if (freed && destroyed.getAsBoolean()) {
            reclaim(stage); // the attempt ended while the reader waited
        }
    }

    /**
     * Lends again the chunks retired for {@code stage}: its channels are destroyed, so no read over them writes any
     * more (soft HComm joins a destroyed channel's receiver; on hardware its queue pair is gone). Called by the stage
     * channels under their lock, and by {@link #retire}; idempotent.
     */
    public void reclaim(StageAttempt stage) {
        int n = receive.reclaim(stage);
        if (n > 0) {
            metrics.chunksReclaimed.inc(n);
            LOG.info("HComm: the channels of {} are destroyed; {} retired receive buffer chunks are lent again",
                    stage, n);
        }
    }

    /** Chunks not free to lend: on loan, or retired and not reclaimed (tests check that none are after a job). */
    public int chunksNotFree() {
        return receive.onLoan() + receive.retired();
    }

    /** Closes the idle batches, then the buffer and its region; says what was still on loan or retired. */
    @Override
    public void close() {
        closed = true;
        RuntimeException failure = null;
        reaper.shutdown(); // batches being closed after a timeout: each waits at most the read timeout
        boolean drained;
        try {
            drained = reaper.awaitTermination(readTimeoutMs + TimeUnit.SECONDS.toMillis(5), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            drained = false;
        }
        ReadBatch b;
        while ((b = idleBatches.poll()) != null) {
            try {
                b.close();
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
        }
        int onLoan = receive.onLoan();
        if (onLoan > 0) {
            LOG.warn("Executor {} closes its receive buffer with {} chunks still on loan", executorId, onLoan);
        }
        int retired = receive.retired();
        if (retired > 0) {
            LOG.warn("Executor {} closes its receive buffer with {} chunks retired after read timeouts", executorId,
                    retired);
        }
        if (!drained) { // reads of a batch still closing may land in the region: unregistering it could crash
            LOG.warn("Executor {} leaves its receive buffer registered: read batches that timed out are still "
                    + "closing, and their reads may land in it", executorId);
        } else {
            try {
                receive.close();
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
            try {
                region.close(); // whatever the buffer's close said: the region has no other owner
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException add(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
