package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import org.hcomm.bridge.communicator.CommStream;
import org.hcomm.bridge.communicator.Communicator;
import org.hcomm.bridge.error.HcommException;

/**
 * One end of a window exchange on a communicator (docs/ARCHITECTURE.md, "The HCCL buffer as a window"): a window of
 * this member's HCCL buffer leased for the exchange, the channel to the peer, a pooled stream, and a host buffer of
 * one slice. Slices are signalled by channel notifies only, those of the window's lane: {@link WindowLayout#dataNotify}
 * owner → reader once a slot holds a slice, {@link WindowLayout#ackNotify} reader → owner once the reader is done
 * with it. An exchange that
 * ended <em>balanced</em> (every notify recorded was waited for) gives its window and stream back for the next one;
 * one that failed quarantines its window for the read timeout and drops its stream, and poisons the channel to
 * that peer for the rest of the communicator ({@link CommunicatorWindows#poisoned}), as a stale notify or a late
 * transfer may still arrive on it.
 *
 * <p>Threading: confined to one thread at a time (the stream's batches are that thread's); {@link #close()} from any.
 */
public abstract sealed class WindowEnd implements AutoCloseable permits OwnerEnd, ReaderEnd {
    final CommunicatorWindows windows;
    final Communicator comm;
    final WindowLayout layout;
    final CommunicatorTransport.Link link;
    final String peerId;
    /** The lane of the channel this window's notifies use ({@link WindowLayout#lanes()}). */
    final int lane;
    final int window;
    final CommStream stream;
    final ByteBuffer host;
    final long hostAddress;
    private final SlotPool pool;
    private boolean balanced = true;
    private boolean closed;

    WindowEnd(CommunicatorWindows windows, CommunicatorTransport.Link link, String peerId, int lane, int window,
            SlotPool pool, CommStream stream, ByteBuffer host) {
        this.windows = windows;
        this.comm = windows.comm;
        this.layout = windows.layout;
        this.link = link;
        this.peerId = peerId;
        this.lane = layout.checkLane(lane);
        this.window = window;
        this.pool = pool;
        this.stream = stream;
        this.host = host;
        this.hostAddress = com.sun.jna.Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(host));
    }

    /** The peer this window exchanges with. */
    public String peerId() {
        return peerId;
    }

    /** The lane of its channel this window uses: a reader names it to its owner. */
    public int lane() {
        return lane;
    }

    /** Over RoCE (between hosts), else HCCS. */
    public boolean roce() {
        return link.roce();
    }

    /** The offsets of this end's slots in its HCCL buffer, slot by slot: what the peer is told. */
    public final long[] slotOffsets() {
        long[] out = new long[layout.slots()];
        for (int s = 0; s < out.length; s++) {
            out[s] = slotOffset(s);
        }
        return out;
    }

    abstract long slotOffset(int s);

    /** True while every notify this end recorded or waited for is matched (closing it then poisons nothing). */
    public final synchronized boolean balanced() {
        return balanced;
    }

    /** Notifies are in flight that no wait has taken yet: the end is not balanced until {@link #balance()}. */
    final synchronized void unbalanced() {
        balanced = false;
    }

    final synchronized void balance() {
        balanced = true;
    }

    /** Runs {@code step} as one batch under the communicator's claim, then waits for it within the read timeout. */
    final void batch(String what, Runnable step, boolean await) throws TransportException {
        try {
            try (Communicator.Claim c = comm.claim()) {
                step.run();
                stream.flush();
            }
        } catch (HcommException | IllegalStateException e) {
            throw failed(what, e);
        }
        if (await) {
            await(what);
        }
    }

    /** Waits within the read timeout for the batches queued so far (issued without waiting). */
    final void await(String what) throws TransportException {
        try {
            stream.await(windows.timeoutMillis);
        } catch (HcommException | IllegalStateException e) {
            throw failed(what, e);
        }
    }

    /** The end is unbalanced; {@code e} as the transport's exception. */
    private TransportException failed(String what, RuntimeException e) {
        unbalanced();
        if (e instanceof HcommException h) {
            return new TransportException(h.call(), h.code(), what + " with " + peerId + " (window " + window + "): "
                    + h.getMessage(), h);
        }
        return new TransportException(what, -1, what + " with " + peerId + ": " + e.getMessage(), e);
    }

    /** Seconds a notify wait may take: the read timeout, rounded up (CANN's waits count seconds). */
    final int waitSeconds() {
        return (int) Math.max(1, (windows.timeoutMillis + 999) / 1000);
    }

    /**
     * Gives the window and stream back when the exchange ended balanced; else quarantines the window, drops the
     * stream and poisons the channel to the peer. Idempotent.
     */
    @Override
    public final void close() {
        boolean clean;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            clean = balanced;
        }
        windows.ended(this, clean);
        if (clean) {
            pool.release(window);
        } else {
            pool.quarantine(window, windows.timeoutMillis);
        }
    }
}
