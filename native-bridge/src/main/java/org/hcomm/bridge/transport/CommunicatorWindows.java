package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 * reader that asked, a reader a {@link ReaderEnd} per owner it reads; at most one window per channel and direction
 * at a time (a notify is a flag), which the callers keep. Thread-safe.
 */
public final class CommunicatorWindows {
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
     * The owner's end of an exchange with reader {@code peerId}, whose receive slots are {@code readerSlots}; null
     * when no send window became free within {@code waitMillis}.
     */
    public OwnerEnd openOwner(String peerId, long[] readerSlots, long waitMillis) throws TransportException {
        CommunicatorTransport.Link link = linkTo(peerId);
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
        int w = lease(send, waitMillis);
        if (w < 0) {
            return null;
        }
        try {
            return (OwnerEnd) transport.trackWindow(new OwnerEnd(this, link, peerId, w, send, stream(),
                    host(sendHost, w), readerSlots));
        } catch (RuntimeException | TransportException e) {
            send.release(w);
            throw e;
        }
    }

    /** The reader's end of an exchange with owner {@code peerId}; null when no receive window became free in time. */
    public ReaderEnd openReader(String peerId, long waitMillis) throws TransportException {
        CommunicatorTransport.Link link = linkTo(peerId);
        int w = lease(receive, waitMillis);
        if (w < 0) {
            return null;
        }
        try {
            return (ReaderEnd) transport.trackWindow(new ReaderEnd(this, link, peerId, w, receive, stream(),
                    host(receiveHost, w)));
        } catch (RuntimeException | TransportException e) {
            receive.release(w);
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
