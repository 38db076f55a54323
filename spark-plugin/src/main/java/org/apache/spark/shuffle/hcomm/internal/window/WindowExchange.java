package org.apache.spark.shuffle.hcomm.internal.window;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.function.BooleanSupplier;

import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.transport.ReaderEnd;
import org.hcomm.bridge.transport.TransportException;
import org.hcomm.bridge.transport.WindowLayout;
import org.slf4j.Logger;

/**
 * The reader's side of one exchange with one owner: takes a permit of the owner's lanes ({@link WindowReads}), leases a
 * receive window, asks the owner's window server to stream the request's ranges ({@link WindowProtocol.Fetch}), and
 * cuts the slices it takes through the window into the partitions the grant lists, in order. A failure (the owner
 * refused, died or stalled past the read timeout) is a {@link FetchFailedException} naming the owner and the block
 * being read; {@link #cancel()} asks the owner to stop, naming the slices it queued a wait for (one read ahead), and
 * still takes the slices the owner signalled, so the window ends balanced. Confined to one thread (the fetcher's
 * read-ahead thread).
 */
final class WindowExchange {
    private static final Logger LOG = LogCategory.READER.logger();

    /**
     * Bytes of a block are kept in arrays of at most this size: small enough for the young generation (G1 allocates an
     * array of half a region or more, 512 KiB in a 1 GiB heap, outside it, and collects it expensively).
     */
    static final int CHUNK = 256 << 10;

    /** One partition of the stream: whether the task wants it, and its bytes once read, in chunks of CHUNK. */
    record Partition(WindowBlockFetcher.Wanted wanted, byte[][] chunks, long length) {}

    private final WindowReads reads;
    private final int shuffleId;
    private final WindowBlockFetcher.OwnerRequest request;
    private final WindowLayout layout;
    /** A permit of the owner's lanes, held from open to the end. */
    private Semaphore lane;
    private ReaderEnd end;
    private WindowProtocol.Granted granted;
    private long total;
    private long slicesTaken;
    private ByteBuffer slice = ByteBuffer.allocate(0);
    private int range;
    private int partition;

    WindowExchange(WindowReads reads, int shuffleId, WindowBlockFetcher.OwnerRequest request) {
        this.reads = reads;
        this.shuffleId = shuffleId;
        this.request = request;
        this.layout = reads.windows.layout();
    }

    /** Opens the exchange; on a failure gives back what it took and throws the fetch failure. */
    void open() {
        String ownerId = request.owner().executorId();
        try {
            lane = reads.lanes(ownerId);
            lane.acquire();
            end = reads.windows.openReader(ownerId, reads.timeoutMillis);
            if (end == null) {
                throw failed(null, "no receive window of this executor became free within the read timeout", null);
            }
            WindowProtocol.Fetch fetch = new WindowProtocol.Fetch(reads.epoch, reads.executorId, end.lane(),
                    end.slotOffsets(), request.ranges());
            ByteBuffer reply = reads.client(ownerId).sendRpcSync(WindowProtocol.encode(fetch), reads.timeoutMillis);
            Object answer = WindowProtocol.decode(reply);
            if (answer instanceof WindowProtocol.Refused r) {
                reads.metrics.windowsRefused.inc();
                throw failed(null, "executor " + ownerId + " refused the window: " + r.reason(), null);
            }
            granted = (WindowProtocol.Granted) answer;
            end.attach(granted.ownerSlots(), granted.totalBytes());
            total = granted.totalBytes();
            reads.metrics.windowsOpened.inc();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(null, "interrupted while opening the window", e);
        } catch (Exception e) { // sendRpcSync and the sneaky fetch failures throw checked exceptions
            if (e instanceof FetchFailedException) {
                throw Blame.sneaky(e);
            }
            throw failed(null, "opening the window failed: " + e, e);
        }
    }

    /**
     * The next partition of the stream the task wants, its bytes read; null at the end of the stream (the exchange
     * is then finished: window and lane given back). {@code stop} is asked between slices.
     */
    Partition next(BooleanSupplier stop) {
        while (range < granted.lengths().length) {
            long[] lengths = granted.lengths()[range];
            if (partition >= lengths.length) {
                range++;
                partition = 0;
                continue;
            }
            WindowProtocol.Range r = request.ranges().get(range);
            int reduceId = r.startPartition() + partition;
            long length = lengths[partition++];
            Map<Integer, WindowBlockFetcher.Wanted> ofMap = request.wanted().get(r.mapId());
            WindowBlockFetcher.Wanted w = ofMap == null ? null : ofMap.get(reduceId);
            if (length == 0) {
                continue;
            }
            byte[][] chunks = new byte[(int) ((length + CHUNK - 1) / CHUNK)][];
            for (int c = 0; c < chunks.length; c++) {
                chunks[c] = new byte[(int) Math.min(CHUNK, length - (long) c * CHUNK)];
                if (!fill(chunks[c], w, stop)) {
                    return null; // stopped: the caller cancels
                }
            }
            if (w != null) { // else a partition in the range the tracker did not list: no such block is read
                return new Partition(w, chunks, length);
            }
        }
        finish();
        return null;
    }

    /** Fills {@code bytes} from the window's slices; false when {@code stop} said so between two slices. */
    private boolean fill(byte[] bytes, WindowBlockFetcher.Wanted w, BooleanSupplier stop) {
        int at = 0;
        while (at < bytes.length) {
            if (!slice.hasRemaining()) {
                if (stop.getAsBoolean()) {
                    return false;
                }
                try {
                    slice = end.take(layout.sliceLength(total, slicesTaken));
                    slicesTaken++;
                    reads.metrics.bytesToHost.inc(slice.remaining()); // the slice's device-to-host copy
                } catch (TransportException | RuntimeException e) {
                    throw failed(w, "the window failed mid-stream: " + e.getMessage(), e);
                }
            }
            int n = Math.min(slice.remaining(), bytes.length - at);
            slice.get(bytes, at, n);
            at += n;
        }
        return true;
    }

    /** Every slice taken: window and lane given back. */
    private void finish() {
        ReaderEnd e = end;
        end = null;
        try {
            if (e != null) {
                e.close();
            }
        } finally {
            release();
        }
    }

    /**
     * Ends the exchange before its stream did: asks the owner to stop, takes (without reading) the slices it
     * signalled, and gives window and lane back; a window that cannot end balanced is dropped (its channel
     * poisoned). Never throws.
     */
    void cancel() {
        if (end == null) {
            release();
            return;
        }
        String ownerId = request.owner().executorId();
        try {
            if (granted != null && slicesTaken < layout.sliceCount(total)) {
                ByteBuffer reply = reads.client(ownerId).sendRpcSync(WindowProtocol.encode(
                        new WindowProtocol.Cancel(granted.windowId(), end.slicesIssued())), reads.timeoutMillis);
                long signalled = ((WindowProtocol.Cancelled) WindowProtocol.decode(reply)).slicesSignalled();
                // the owner signals at least the slices this end queued a wait for; one that no longer knows the
                // window (-1) finished or failed: a wait queued ahead is still awaited (met, or the window fails)
                long until = Math.max(signalled, end.slicesIssued());
                while (end.slicesTaken() < until) {
                    end.skip();
                }
            }
        } catch (Exception e) {
            LOG.info("Window {} from executor {} did not end balanced ({}); its channel is not used again in "
                    + "communicator {}", granted == null ? -1 : granted.windowId(), ownerId, e.toString(),
                    reads.epoch);
        } finally {
            ReaderEnd e = end;
            end = null;
            try {
                if (!e.balanced()) {
                    reads.metrics.windowsPoisoned.inc();
                }
                e.close();
            } finally {
                release();
            }
        }
    }

    private void release() {
        Semaphore p = lane;
        lane = null;
        if (p != null) {
            p.release();
        }
    }

    /**
     * Closes the exchange (unbalanced: poisoned) and returns the fetch failure naming the owner and {@code w}, or
     * the first block the task wants of this owner.
     */
    private RuntimeException failed(WindowBlockFetcher.Wanted w, String why, Throwable cause) {
        if (w == null) {
            for (Map<Integer, WindowBlockFetcher.Wanted> m : request.wanted().values()) {
                if (!m.isEmpty()) {
                    w = m.values().iterator().next();
                    break;
                }
            }
        }
        BlockManagerId owner = request.owner();
        ReaderEnd e = end;
        end = null;
        try {
            if (e != null) {
                if (!e.balanced()) {
                    reads.metrics.windowsPoisoned.inc();
                }
                e.close();
            }
        } finally {
            release();
        }
        long mapId = w == null ? -1 : w.block().mapId();
        int reduceId = w == null ? -1 : w.block().reduceId();
        int mapIndex = w == null ? -1 : w.mapIndex();
        return Blame.sneaky(new FetchFailedException(owner, shuffleId, mapId, mapIndex, reduceId, "HComm cannot read "
                + "shuffle " + shuffleId + " from executor " + owner.executorId() + " through a window: " + why,
                cause));
    }
}
