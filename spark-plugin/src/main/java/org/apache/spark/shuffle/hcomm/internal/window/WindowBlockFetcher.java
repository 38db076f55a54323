package org.apache.spark.shuffle.hcomm.internal.window;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;

import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.hcomm.bridge.transport.ReaderEnd;
import org.hcomm.bridge.transport.TransportException;
import org.hcomm.bridge.transport.WindowLayout;
import org.slf4j.Logger;
import scala.Tuple2;
import scala.collection.AbstractIterator;

/**
 * A reduce task's one-sided blocks on the communicator path with windows: for each remote owner in turn it takes
 * the owner's window lock ({@link WindowReads}), leases a receive window, asks the owner's window server to stream the
 * task's ranges ({@link WindowProtocol.Fetch}), then takes the slices through the window and cuts them into the
 * blocks the tracker listed, each handed on as soon as its last byte arrived. A failure (the owner refused, died or
 * stalled past the read timeout) is a {@link FetchFailedException} naming the owner and the block being read, so
 * Spark recomputes the owner's outputs. {@link #close()} mid-stream cancels the exchange and still takes the slices
 * the owner signalled, so the window ends balanced. Confined to the task's thread.
 */
public final class WindowBlockFetcher extends AbstractIterator<Tuple2<BlockId, InputStream>> implements AutoCloseable {
    private static final Logger LOG = LogCategory.READER.logger();

    /** One partition the task wants from an owner: its block, map index (for a failure) and the tracker's entry. */
    public record Wanted(ShuffleBlockId block, int mapIndex) {}

    /** What the task reads from one owner, in the order it asks for it. */
    public record OwnerRequest(BlockManagerId owner, boolean crossHost, List<WindowProtocol.Range> ranges,
            Map<Long, Map<Integer, Wanted>> wanted) {}

    private final WindowReads reads;
    private final int shuffleId;
    private final Deque<OwnerRequest> owners;
    private final ShuffleReadMetricsReporter readMetrics;
    private final SerializerManager serializers;
    private final WindowLayout layout;

    // the exchange under way
    private OwnerRequest current;
    private Semaphore pair;
    private ReaderEnd end;
    private long windowId;
    private WindowProtocol.Granted granted;
    private long total;
    private long slicesTaken;
    private ByteBuffer slice = ByteBuffer.allocate(0);
    private int range;
    private int partition;
    private Tuple2<BlockId, InputStream> ready;
    private boolean closed;

    public WindowBlockFetcher(WindowReads reads, int shuffleId, List<OwnerRequest> owners,
            ShuffleReadMetricsReporter readMetrics, SerializerManager serializers) {
        this.reads = reads;
        this.shuffleId = shuffleId;
        this.owners = new ArrayDeque<>(owners);
        this.readMetrics = readMetrics;
        this.serializers = serializers;
        this.layout = reads.windows.layout();
    }

    @Override
    public boolean hasNext() {
        if (closed) {
            return false;
        }
        while (ready == null) {
            if (current == null) {
                OwnerRequest next = owners.poll();
                if (next == null) {
                    return false;
                }
                open(next);
            } else if (!advance()) {
                finishExchange();
            }
        }
        return true;
    }

    @Override
    public Tuple2<BlockId, InputStream> next() {
        if (!hasNext()) {
            throw new java.util.NoSuchElementException();
        }
        Tuple2<BlockId, InputStream> out = ready;
        ready = null;
        return out;
    }

    /** Opens the exchange with {@code o}'s owner; on a failure closes what it opened and throws a fetch failure. */
    private void open(OwnerRequest o) {
        current = o;
        range = 0;
        partition = 0;
        slicesTaken = 0;
        slice = ByteBuffer.allocate(0);
        String ownerId = o.owner().executorId();
        long start = System.nanoTime();
        try {
            pair = reads.pair(ownerId);
            pair.acquire();
            end = reads.windows.openReader(ownerId, reads.timeoutMillis);
            if (end == null) {
                throw failed("no receive window of this executor became free within the read timeout", null);
            }
            ByteBuffer reply = reads.client(ownerId).sendRpcSync(WindowProtocol.encode(new WindowProtocol.Fetch(
                    reads.epoch, reads.executorId, end.slotOffsets(), o.ranges())), reads.timeoutMillis);
            Object answer = WindowProtocol.decode(reply);
            if (answer instanceof WindowProtocol.Refused r) {
                reads.metrics.windowsRefused.inc();
                throw failed("executor " + ownerId + " refused the window: " + r.reason(), null);
            }
            granted = (WindowProtocol.Granted) answer;
            windowId = granted.windowId();
            end.attach(granted.ownerSlots());
            total = granted.totalBytes();
            reads.metrics.windowsOpened.inc();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed("interrupted while opening the window", e);
        } catch (Exception e) { // sendRpcSync and the sneaky fetch failures throw checked exceptions
            if (e instanceof FetchFailedException) {
                throw sneaky(e);
            }
            throw failed("opening the window failed: " + e, e);
        } finally {
            readMetrics.incFetchWaitTime((System.nanoTime() - start) / 1_000_000);
        }
    }

    /** Reads the next partition of the exchange into {@link #ready} when the task wants it; false at the end. */
    private boolean advance() {
        while (range < granted.lengths().length) {
            long[] lengths = granted.lengths()[range];
            if (partition >= lengths.length) {
                range++;
                partition = 0;
                continue;
            }
            WindowProtocol.Range r = current.ranges().get(range);
            int reduceId = r.startPartition() + partition;
            long length = lengths[partition++];
            Map<Integer, Wanted> ofMap = current.wanted().get(r.mapId());
            Wanted w = ofMap == null ? null : ofMap.get(reduceId);
            if (length == 0) {
                continue;
            }
            if (length > Integer.MAX_VALUE - 16) {
                throw failed(w, "block of " + length + " bytes is larger than one array", null);
            }
            byte[] bytes = new byte[(int) length];
            fill(bytes, w);
            if (w == null) {
                continue; // a partition in the range the tracker did not list (it reads no such block)
            }
            reads.metrics.bytesReadOneSided.inc(length);
            if (current.crossHost()) {
                reads.metrics.bytesReadCrossHost.inc(length);
            }
            readMetrics.incRemoteBytesRead(length);
            readMetrics.incRemoteBlocksFetched(1);
            InputStream in;
            try {
                in = serializers.wrapStream(w.block(), new ByteArrayInputStream(bytes));
            } catch (RuntimeException e) {
                throw failed(w, "stream of the block cannot be opened", e);
            }
            ready = new Tuple2<>(w.block(), in);
            return true;
        }
        return false;
    }

    /** Fills {@code bytes} from the window's slices, taking the next slice whenever the one in hand is used up. */
    private void fill(byte[] bytes, Wanted w) {
        int at = 0;
        while (at < bytes.length) {
            if (!slice.hasRemaining()) {
                long start = System.nanoTime();
                try {
                    slice = end.take(layout.sliceLength(total, slicesTaken));
                    slicesTaken++;
                } catch (TransportException | RuntimeException e) {
                    throw failed(w, "the window failed mid-stream: " + e.getMessage(), e);
                } finally {
                    readMetrics.incFetchWaitTime((System.nanoTime() - start) / 1_000_000);
                }
            }
            int n = Math.min(slice.remaining(), bytes.length - at);
            slice.get(bytes, at, n);
            at += n;
        }
    }

    /** The exchange streamed every byte: its window and the owner's lock are given back. */
    private void finishExchange() {
        ReaderEnd e = end;
        end = null;
        current = null;
        try {
            if (e != null) {
                e.close();
            }
        } finally {
            release();
        }
    }

    private void release() {
        Semaphore p = pair;
        pair = null;
        if (p != null) {
            p.release();
        }
    }

    /**
     * Ends the exchange under way, if any: asks the owner to stop, takes (without reading) the slices it signalled,
     * and gives window and lock back; a window that cannot end balanced is dropped (its channel poisoned).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ready = null;
        if (end == null) {
            release();
            return;
        }
        try {
            if (granted != null && slicesTaken < layout.sliceCount(total)) {
                ByteBuffer reply = reads.client(current.owner().executorId()).sendRpcSync(WindowProtocol.encode(
                        new WindowProtocol.Cancel(windowId)), reads.timeoutMillis);
                long signalled = ((WindowProtocol.Cancelled) WindowProtocol.decode(reply)).slicesSignalled();
                while (signalled >= 0 && end.slicesTaken() < signalled) {
                    end.skip();
                }
            }
        } catch (Exception e) {
            LOG.info("Window {} from executor {} did not end balanced ({}); its channel is not used again in "
                    + "communicator {}", windowId, current.owner().executorId(), e.toString(), reads.epoch);
        } finally {
            ReaderEnd e = end;
            end = null;
            try {
                e.close();
            } finally {
                release();
            }
        }
    }

    private RuntimeException failed(String why, Throwable cause) {
        Wanted first = null;
        for (Map<Integer, Wanted> m : current.wanted().values()) {
            for (Wanted w : m.values()) {
                first = w;
                break;
            }
            if (first != null) {
                break;
            }
        }
        return failed(first, why, cause);
    }

    /** Closes the exchange (unbalanced: poisoned) and returns the fetch failure naming the owner and block. */
    private RuntimeException failed(Wanted w, String why, Throwable cause) {
        BlockManagerId owner = current.owner();
        ReaderEnd e = end;
        end = null;
        if (e != null) {
            if (!e.balanced()) {
                reads.metrics.windowsPoisoned.inc();
            }
            e.close();
        }
        release();
        closed = true;
        long mapId = w == null ? -1 : w.block().mapId();
        int reduceId = w == null ? -1 : w.block().reduceId();
        int mapIndex = w == null ? -1 : w.mapIndex();
        return sneaky(new FetchFailedException(owner, shuffleId, mapId, mapIndex, reduceId,
                "HComm cannot read shuffle " + shuffleId + " from executor " + owner.executorId() + " through a window: "
                        + why, cause));
    }

    /** Throws a checked exception (Spark's FetchFailedException) through Scala's iterator signature. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
