package org.apache.spark.shuffle.hcomm.internal.window;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import scala.Tuple2;
import scala.collection.AbstractIterator;

/**
 * A reduce task's one-sided blocks on the communicator path with windows. A read-ahead thread of the task reads its
 * owners one after the other, each through one {@link WindowExchange}, and queues every block the task wants as soon
 * as its last byte arrived, up to the executor's bytes in flight (as Spark's fetch prefetches), while the task
 * consumes earlier ones. A failure reaches the task as the {@code FetchFailedException} the exchange made, in block
 * order. {@link #close()} (the task completed, perhaps before reading everything) stops the thread, which cancels
 * the exchange under way. The iterator is confined to the task's thread.
 */
public final class WindowBlockFetcher extends AbstractIterator<Tuple2<BlockId, InputStream>> implements AutoCloseable {
    private static final Logger LOG = LogCategory.READER.logger();
    private static final Object END = new Object();

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
    private final Thread readAhead;
    private volatile boolean stop;
    private Block next;
    private boolean done;

    public WindowBlockFetcher(WindowReads reads, int shuffleId, List<OwnerRequest> owners,
            ShuffleReadMetricsReporter readMetrics, SerializerManager serializers) {
        this.reads = reads;
        this.readMetrics = readMetrics;
        this.serializers = serializers;
        this.budgetKib = (int) Math.max(1, Math.min(Integer.MAX_VALUE, reads.maxBytesInFlight >> 10));
        this.budget = new Semaphore(budgetKib);
        this.readAhead = new Thread(() -> readAll(shuffleId, owners), "hcomm-window-read-shuffle-" + shuffleId);
        readAhead.setDaemon(true);
        readAhead.start();
    }

    /** The read-ahead thread: every owner in turn; the queue ends with END or the failure. */
    private void readAll(int shuffleId, List<OwnerRequest> owners) {
        try {
            for (OwnerRequest o : owners) {
                if (stop) {
                    break;
                }
                WindowExchange x = new WindowExchange(reads, shuffleId, o);
                x.open();
                try {
                    WindowExchange.Partition p;
                    while ((p = x.next(() -> stop)) != null) {
                        budget.acquireUninterruptibly(kib(p.bytes().length));
                        if (stop) {
                            break;
                        }
                        queue.add(new Block(p, o.crossHost()));
                    }
                } finally {
                    x.cancel(); // a no-op once the stream ended
                }
            }
            queue.add(END);
        } catch (RuntimeException | Error e) {
            queue.add(e);
        } catch (Exception e) { // the exchange's fetch failures are checked, thrown sneakily
            queue.add(e);
        }
    }

    private int kib(int bytes) {
        return Math.min(budgetKib, Math.max(1, bytes >> 10));
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
            throw WindowExchange.sneaky(new FetchFailedException(r.bmAddress(), r.shuffleId(), r.mapId(),
                    r.mapIndex(), r.reduceId(), f.getMessage(), f.getCause()));
        }
        if (item instanceof Throwable t) {
            done = true;
            throw WindowExchange.sneaky(t);
        }
        next = (Block) item;
        budget.release(kib(next.partition().bytes().length)); // out of the queue: the task's now
        return true;
    }

    @Override
    public Tuple2<BlockId, InputStream> next() {
        if (!hasNext()) {
            throw new java.util.NoSuchElementException();
        }
        Block b = next;
        next = null;
        byte[] bytes = b.partition().bytes();
        reads.metrics.bytesReadOneSided.inc(bytes.length);
        if (b.crossHost()) {
            reads.metrics.bytesReadCrossHost.inc(bytes.length);
        }
        readMetrics.incRemoteBytesRead(bytes.length);
        readMetrics.incRemoteBlocksFetched(1);
        ShuffleBlockId id = b.partition().wanted().block();
        return new Tuple2<>(id, serializers.wrapStream(id, new ByteArrayInputStream(bytes)));
    }

    /** Stops the read-ahead thread (which cancels the exchange under way) and waits for it, within the read timeout. */
    @Override
    public void close() {
        stop = true;
        budget.release(budgetKib); // a thread waiting for room goes on, sees stop and cancels
        try {
            readAhead.join(reads.timeoutMillis + 5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (readAhead.isAlive()) {
            LOG.warn("The window read-ahead thread of a reduce task did not end within the read timeout");
        }
        queue.clear();
        next = null;
        done = true;
    }
}
