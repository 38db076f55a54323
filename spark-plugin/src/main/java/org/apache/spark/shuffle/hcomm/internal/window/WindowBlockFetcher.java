package org.apache.spark.shuffle.hcomm.internal.window;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import scala.Tuple2;
import scala.collection.AbstractIterator;

/**
 * A reduce task's one-sided blocks on the communicator path with windows. Read-ahead threads of the task read its
 * owners at once, each owner through one {@link WindowExchange} (as Spark's fetch asks every owner at once), at most
 * {@link WindowReads#exchangesPerTask} of them at a time so that the executor's tasks together never wait for a
 * receive window; each queues every block the task wants as soon as its last byte arrived, up to the executor's bytes
 * in flight (as Spark's fetch prefetches), while the task consumes earlier ones in the order they arrived. A failure
 * reaches the task as the {@code FetchFailedException} the exchange made, and stops the other exchanges.
 * {@link #close()} (the task completed, perhaps before reading everything) stops the threads, which cancel the
 * exchanges under way. The iterator is confined to the task's thread.
 */
public final class WindowBlockFetcher extends AbstractIterator<Tuple2<BlockId, InputStream>> implements AutoCloseable {
    private static final Logger LOG = LogCategory.READER.logger();
    private static final Object END = new Object();
    /** 16 GiB: room to release once per read-ahead thread on close without overflowing the semaphore. */
    private static final int MAX_BUDGET_KIB = 1 << 24;

    /** One partition a task wants from an owner: its block, and its map index (for a fetch failure). */
    public record Wanted(ShuffleBlockId block, int mapIndex) {}

    /** What a task reads from one owner: map output ranges, and which partitions of them it wants. */
    public record OwnerRequest(BlockManagerId owner, boolean crossHost, List<WindowProtocol.Range> ranges,
            Map<Long, Map<Integer, Wanted>> wanted) {}

    /** A block read, with the owner it came from. */
    private record Block(WindowExchange.Partition partition, boolean crossHost) {}

    private final ShuffleReadMetricsReporter readMetrics;
    private final SerializerManager serializers;
    private final WindowReads reads;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    /** Bytes queued and not yet taken by the task, in KiB (a block larger than the budget takes all of it). */
    private final Semaphore budget;
    private final int budgetKib;
    private final List<Thread> readAhead = new ArrayList<>();
    /** Owners not yet begun; each read-ahead thread takes the next one when its exchange ended. */
    private final Queue<OwnerRequest> pending;
    /** Read-ahead threads still running: the last one to end queues END (unless one failed). */
    private final AtomicInteger running;
    private volatile boolean stop;
    private Block next;
    private boolean done;

    public WindowBlockFetcher(WindowReads reads, int shuffleId, List<OwnerRequest> owners,
            ShuffleReadMetricsReporter readMetrics, SerializerManager serializers) {
        this.reads = reads;
        this.readMetrics = readMetrics;
        this.serializers = serializers;
        this.budgetKib = (int) Math.max(1, Math.min(MAX_BUDGET_KIB, reads.maxBytesInFlight >> 10));
        this.budget = new Semaphore(budgetKib);
        List<OwnerRequest> order = new ArrayList<>(owners);
        Collections.shuffle(order); // as Spark's fetch randomizes its requests: tasks do not all start on one owner
        this.pending = new ConcurrentLinkedQueue<>(order);
        int threads = Math.max(1, Math.min(owners.size(), reads.exchangesPerTask));
        this.running = new AtomicInteger(threads);
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> readAll(shuffleId), "hcomm-window-read-shuffle-" + shuffleId + "-" + i);
            t.setDaemon(true);
            readAhead.add(t);
        }
        readAhead.forEach(Thread::start);
    }

    /**
     * A read-ahead thread: owners from {@link #pending} until none is left; the last thread to end queues END, a
     * failure is queued at once and stops the others (the task fails on it; what they read meanwhile is not used).
     */
    private void readAll(int shuffleId) {
        try {
            OwnerRequest o;
            while (!stop && (o = pending.poll()) != null) {
                WindowExchange x = new WindowExchange(reads, shuffleId, o);
                x.open();
                try {
                    WindowExchange.Partition p;
                    while ((p = x.next(() -> stop)) != null) {
                        budget.acquireUninterruptibly(kib(p.length()));
                        if (stop) {
                            break;
                        }
                        queue.add(new Block(p, o.crossHost()));
                    }
                } finally {
                    x.cancel(); // a no-op once the stream ended
                }
            }
            if (running.decrementAndGet() == 0) {
                queue.add(END);
            }
        } catch (Throwable e) { // RuntimeException, Error, or the exchange's fetch failure (checked, thrown sneakily)
            stop = true;
            queue.add(e);
        }
    }

    private int kib(long bytes) {
        return (int) Math.min(budgetKib, Math.max(1, bytes >> 10));
    }

    @Override
    public boolean hasNext() {
        if (next != null) {
            return true;
        }
        if (done) {
            return false;
        }
        long start = System.nanoTime();
        Object item;
        try {
            item = queue.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a block read through a window", e);
        } finally {
            readMetrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
        if (item == END) {
            done = true;
            return false;
        }
        if (item instanceof FetchFailedException f) {
            done = true;
            // made again on the task's thread: a fetch failure registers with the task that constructs it, which is
            // how Spark's executor tells it from a task error (one made on the read-ahead thread would be retried)
            org.apache.spark.FetchFailed r = (org.apache.spark.FetchFailed) f.toTaskFailedReason();
            throw Blame.sneaky(new FetchFailedException(r.bmAddress(), r.shuffleId(), r.mapId(),
                    r.mapIndex(), r.reduceId(), f.getMessage(), f.getCause()));
        }
        if (item instanceof Throwable t) {
            done = true;
            throw Blame.sneaky(t);
        }
        next = (Block) item;
        budget.release(kib(next.partition().length())); // out of the queue: the task's now
        return true;
    }

    @Override
    public Tuple2<BlockId, InputStream> next() {
        if (!hasNext()) {
            throw new java.util.NoSuchElementException();
        }
        Block b = next;
        next = null;
        long length = b.partition().length();
        reads.metrics.bytesReadOneSided.inc(length);
        if (b.crossHost()) {
            reads.metrics.bytesReadCrossHost.inc(length);
        }
        readMetrics.incRemoteBytesRead(length);
        readMetrics.incRemoteBlocksFetched(1);
        ShuffleBlockId id = b.partition().wanted().block();
        return new Tuple2<>(id, serializers.wrapStream(id, new SequenceInputStream(Collections.enumeration(
                Arrays.stream(b.partition().chunks()).map(ByteArrayInputStream::new).toList()))));
    }

    /**
     * Stops the read-ahead threads (which cancel the exchanges under way) and waits for them, together within the
     * read timeout.
     */
    @Override
    public void close() {
        stop = true;
        budget.release(budgetKib * readAhead.size()); // threads waiting for room go on, see stop and cancel
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(reads.timeoutMillis + 5_000);
        for (Thread t : readAhead) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (t.isAlive()) {
                LOG.warn("A window read-ahead thread of a reduce task did not end within the read timeout");
            }
        }
        queue.clear();
        next = null;
        done = true;
    }
}
