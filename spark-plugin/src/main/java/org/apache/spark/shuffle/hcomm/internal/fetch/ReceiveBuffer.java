package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.Region;

/**
 * The executor's registered receive buffer (the "HCCL buffer"), cut into equal chunks that reduce tasks borrow
 * while their reads land and their records are deserialised. Thread-safe. The region itself is owned by the
 * transport's caller ({@link ReadResources}); {@link #close()} makes waiting borrowers fail.
 */
final class ReceiveBuffer implements AutoCloseable {
    private final Region region;
    private final int chunkSize;
    private final ArrayDeque<Chunk> free = new ArrayDeque<>();
    private final int total;
    /** Chunks out of use until the channels of a stage attempt are destroyed, by attempt. */
    private final Map<StageAttempt, List<Chunk>> retiredUntil = new HashMap<>();
    /** Chunks out of use for good (their read batch could not be freed). */
    private int retiredForGood;
    /** Readers waiting in {@link #borrow} for chunks to come free. */
    private int waiting;
    private boolean closed;

    /** A chunk: its address in the registered region and a private view of its bytes. */
    static final class Chunk {
        final int index;
        final long address;
        final ByteBuffer view;

        Chunk(int index, long address, ByteBuffer view) {
            this.index = index;
            this.address = address;
            this.view = view;
        }
    }

    ReceiveBuffer(Region region, int chunkSize) {
        this.region = region;
        this.chunkSize = chunkSize;
        this.total = (int) (region.size() / chunkSize);
        ByteBuffer all = region.buffer();
        for (int i = 0; i < total; i++) {
            ByteBuffer view = all.duplicate().position(i * chunkSize).limit((i + 1) * chunkSize).slice();
            free.add(new Chunk(i, region.address() + (long) i * chunkSize, view));
        }
    }

    int chunkSize() {
        return chunkSize;
    }

    int totalChunks() {
        return total;
    }

    /**
     * Borrows between {@code min} and {@code max} chunks, waiting up to {@code timeoutMs} for at least {@code min}.
     * How many beyond {@code min} depends on who else reads: a lone reader (no chunk on loan, nobody waiting) takes
     * up to {@code max} but leaves a quarter of what is free, and at least {@code min}, for a reader that opens while
     * it reads (a task's second shuffle reader, or another task); a reader with others holding chunks or waiting
     * takes no more than a quarter of what is free, so readers that overlap — several shuffles read by one task, or
     * several tasks — all get chunks.
     *
     * @return the chunks, or an empty list when not even {@code min} became free in time
     */
    synchronized List<Chunk> borrow(int min, int max, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!closed && free.size() < min) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return List.of();
            }
            waiting++;
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } finally {
                waiting--;
            }
        }
        if (closed) {
            throw new IllegalStateException("receive buffer is closed");
        }
        int share = waiting > 0 || onLoan() > 0 ? free.size() / 4 : free.size() - Math.max(min, free.size() / 4);
        int n = Math.max(min, Math.min(max, share));
        List<Chunk> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(free.poll());
        }
        return out;
    }

    synchronized void giveBack(List<Chunk> chunks) {
        free.addAll(chunks);
        notifyAll();
    }

    /**
     * Takes borrowed chunks out of use until {@link #reclaim} for {@code stage}, or for good when {@code stage} is
     * null: reads into them over the stage attempt's channels may still land (a read that timed out is not
     * cancelled; a late reply would overwrite whatever another task had put there).
     */
    synchronized void retire(StageAttempt stage, List<Chunk> chunks) {
        if (stage != null) {
            retiredUntil.computeIfAbsent(stage, k -> new ArrayList<>()).addAll(chunks);
        } else {
            retiredForGood += chunks.size();
        }
    }

    /**
     * Lends the chunks retired for {@code stage} again, now that nothing can write into them: the attempt's
     * channels are destroyed (and the retiring reader's threads were freed). Returns how many.
     */
    synchronized int reclaim(StageAttempt stage) {
        List<Chunk> back = retiredUntil.remove(stage);
        if (back == null) {
            return 0;
        }
        free.addAll(back);
        notifyAll();
        return back.size();
    }

    /** Chunks borrowed and neither given back nor retired. */
    synchronized int onLoan() {
        return total - free.size() - retired();
    }

    /** Chunks retired and not reclaimed yet. */
    synchronized int retired() {
        int n = retiredForGood;
        for (List<Chunk> l : retiredUntil.values()) {
            n += l.size();
        }
        return n;
    }

    /** Marks the buffer closed: waiting borrowers fail (the caller logs what is still on loan). */
    @Override
    public synchronized void close() {
        closed = true;
        notifyAll();
    }
}
