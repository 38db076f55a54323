package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.hcomm.bridge.communicator.CommStream;
import org.hcomm.bridge.communicator.Communicator;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;

/**
 * The windows of a {@link CommunicatorTransport}'s HCCL buffer (docs/ARCHITECTURE.md,
 * "The HCCL buffer as a window"): two {@link SlotPool}s (send half, receive half, {@link WindowLayout#windows()}
 * each), the streams window ends use (pooled: CANN gives no communicator thread back), one slice of host memory per
 * window and half, and the peers whose channel a failed exchange poisoned. An owner opens an {@link OwnerEnd} for a
 * reader that asked, a reader a {@link ReaderEnd} per owner it reads. A notify is a flag, so a window uses a lane of
 * its channel ({@link WindowLayout#lanes()}) in its direction alone: a reader's end takes a free lane to its owner,
 * the owner's end the lane the reader named, once the owner's previous end in that lane closed (whose last ACKs
 * could otherwise merge with the next window's first). Thread-safe.
 */
public final class CommunicatorWindows {
    private static final int ANY_LANE = -1;

    final CommunicatorTransport transport;
    final Communicator comm;
    final WindowLayout layout;
    final long timeoutMillis;
    private final SlotPool send;
    private final SlotPool receive;
    private final ByteBuffer[] sendHost;
    private final ByteBuffer[] receiveHost;
    private final Deque<CommStream> idle = new ArrayDeque<>();
    private final Set<String> poisoned = ConcurrentHashMap.newKeySet();
    /** Lanes in use, by peer: as a reader (its ends' lanes to that owner) and as an owner. Guarded by itself. */
    private final Map<String, boolean[]> readerLanes = new HashMap<>();
    private final Map<String, boolean[]> ownerLanes = new HashMap<>();
    private volatile Consumer<String> onPoisoned = peer -> { };

    CommunicatorWindows(CommunicatorTransport transport, Communicator comm, WindowLayout layout, long timeoutMillis) {
        this.transport = transport;
        this.comm = comm;
        this.layout = layout;
        this.timeoutMillis = timeoutMillis;
        this.send = new SlotPool(layout.windows());
        this.receive = new SlotPool(layout.windows());
        this.sendHost = new ByteBuffer[layout.windows()];
        this.receiveHost = new ByteBuffer[layout.windows()];
    }

    public WindowLayout layout() {
        return layout;
    }

    /** True once a failed exchange with {@code peerId} left its channel unusable for this communicator. */
    public boolean poisoned(String peerId) {
        return poisoned.contains(peerId);
    }

    /**
     * Runs {@code listener} with the peer's id the first time an exchange with it fails (its channel poisoned), on
     * the thread that closed the failed end; it must not block.
     */
    public void onPoisoned(Consumer<String> listener) {
        onPoisoned = listener;
    }

    /** Send windows free now (tests and metrics). */
    public int freeSendWindows() {
        return send.available();
    }

    /** Receive windows free now. */
    public int freeReceiveWindows() {
        return receive.available();
    }

    /**
     * The owner's end of an exchange with reader {@code peerId} in the lane the reader's end took
     * ({@link ReaderEnd#lane()}), whose receive slots are {@code readerSlots}; null when the owner's previous end in
     * that lane did not close or no send window became free within {@code waitMillis}.
     */
    public OwnerEnd openOwner(String peerId, int lane, long[] readerSlots, long waitMillis)
            throws TransportException {
        CommunicatorTransport.Link link = linkTo(peerId);
        if (lane < 0 || lane >= layout.lanes()) {
            throw new TransportException("open", HcommStatus.HCCL_E_PARA.code(), peerId + " named lane " + lane
                    + ", its channel has " + layout.lanes(), null);
        }
        if (readerSlots.length != layout.slots()) {
            throw new TransportException("open", HcommStatus.HCCL_E_PARA.code(), peerId + " offered "
                    + readerSlots.length + " receive slots, this window has " + layout.slots(), null);
        }
        for (long o : readerSlots) {
            if (o < 0 || o > link.size() - layout.sliceBytes()) {
                throw new TransportException("open", HcommStatus.HCCL_E_PARA.code(), peerId + " offered a receive "
                        + "slot at " + o + ", outside its HCCL buffer of " + link.size() + " bytes as the channel gave "
                        + "it", null);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        if (takeLane(ownerLanes, peerId, lane, deadline) < 0) {
            return null;
        }
        int w = -1;
        try {
            w = lease(send, remaining(deadline));
            if (w < 0) {
                giveLane(ownerLanes, peerId, lane);
                return null;
            }
            return (OwnerEnd) transport.trackWindow(new OwnerEnd(this, link, peerId, lane, w, send, stream(),
                    host(sendHost, w), readerSlots));
        } catch (RuntimeException | TransportException e) {
            if (w >= 0) {
                send.release(w);
            }
            giveLane(ownerLanes, peerId, lane);
            throw e;
        }
    }

    /**
     * The reader's end of an exchange with owner {@code peerId}, in a free lane of its channel; null when no lane to
     * that owner or no receive window became free within {@code waitMillis}.
     */
    public ReaderEnd openReader(String peerId, long waitMillis) throws TransportException {
        CommunicatorTransport.Link link = linkTo(peerId);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        int lane = takeLane(readerLanes, peerId, ANY_LANE, deadline);
        if (lane < 0) {
            return null;
        }
        int w = -1;
        try {
            w = lease(receive, remaining(deadline));
            if (w < 0) {
                giveLane(readerLanes, peerId, lane);
                return null;
            }
            return (ReaderEnd) transport.trackWindow(new ReaderEnd(this, link, peerId, lane, w, receive, stream(),
                    host(receiveHost, w)));
        } catch (RuntimeException | TransportException e) {
            if (w >= 0) {
                receive.release(w);
            }
            giveLane(readerLanes, peerId, lane);
            throw e;
        }
    }

    private CommunicatorTransport.Link linkTo(String peerId) throws TransportException {
        CommunicatorTransport.Link link = transport.linkTo(peerId);
        if (link == null) {
            throw new TransportException("open", HcommStatus.HCCL_E_NOT_FOUND.code(), peerId + " is "
                    + CommunicatorTransport.NOT_A_MEMBER, null);
        }
        if (poisoned.contains(peerId)) {
            throw new TransportException("open", HcommStatus.HCCL_E_NETWORK.code(), "the channel to " + peerId
                    + " is poisoned for this communicator by an earlier failed window exchange", null);
        }
        return link;
    }

    /**
     * Takes {@code lane} (or, {@link #ANY_LANE}, the lowest free one) of the channel to {@code peerId} in
     * {@code lanes}, waiting until {@code deadline} (nanoTime) for it to be free; returns it, or -1 on time out.
     */
    private int takeLane(Map<String, boolean[]> lanes, String peerId, int lane, long deadline) {
        synchronized (lanes) {
            boolean[] used = lanes.computeIfAbsent(peerId, k -> new boolean[layout.lanes()]);
            while (true) {
                for (int l = 0; l < used.length; l++) {
                    if (!used[l] && (lane == ANY_LANE || l == lane)) {
                        used[l] = true;
                        return l;
                    }
                }
                long wait = remaining(deadline);
                if (wait <= 0) {
                    return -1;
                }
                try {
                    lanes.wait(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return -1;
                }
            }
        }
    }

    private static void giveLane(Map<String, boolean[]> lanes, String peerId, int lane) {
        synchronized (lanes) {
            lanes.get(peerId)[lane] = false;
            lanes.notifyAll();
        }
    }

    /** Milliseconds to {@code deadline} (nanoTime), at least 0. */
    private static long remaining(long deadline) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    private static int lease(SlotPool pool, long waitMillis) {
        try {
            return pool.lease(waitMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private synchronized ByteBuffer host(ByteBuffer[] buffers, int w) {
        if (buffers[w] == null) {
            buffers[w] = ByteBuffer.allocateDirect((int) layout.sliceBytes());
        }
        return buffers[w];
    }

    private CommStream stream() throws TransportException {
        synchronized (this) {
            CommStream s = idle.poll();
            if (s != null) {
                return s;
            }
        }
        try {
            return comm.newStream();
        } catch (HcommException e) {
            throw TransportBase.wrap(e);
        }
    }

    /** An end closed: its stream back to the pool if it ended balanced, else dropped and the channel poisoned. */
    void ended(WindowEnd end, boolean clean) {
        transport.forgetWindow(end);
        giveLane(end instanceof OwnerEnd ? ownerLanes : readerLanes, end.peerId, end.lane);
        if (clean) {
            synchronized (this) {
                if (!transport.isClosed()) {
                    idle.push(end.stream);
                }
            }
        } else if (poisoned.add(end.peerId)) {
            onPoisoned.accept(end.peerId);
        }
    }
}
