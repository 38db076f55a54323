package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.communicator.CommStream;
import org.hcomm.bridge.error.HcommException;

/**
 * The owner's end of a window: it stages the exchange's byte stream slice by slice into its send slots and signals
 * each; slice {@code j} uses slot {@code j mod k} and, from the k-th on, first waits for the reader's ACK of that
 * slot. Over HCCS the reader reads the slot through its channel; over RoCE the owner writes it into the reader's
 * receive slot (the channel's base plus the slot's offset), then raises DATA on the same channel, as HCCL's RoCE
 * templates do: over RoCE a notify after a read proves nothing, one after a write lands after its bytes. A
 * cancelled exchange may {@link #signal()} slices without bytes, for waits its reader queued ahead. See
 * {@link WindowEnd} for the rules.
 */
public final class OwnerEnd extends WindowEnd {
    private final long[] readerSlots;
    private long next;

    OwnerEnd(CommunicatorWindows windows, CommunicatorTransport.Link link, String peerId, int lane, int window,
            SlotPool pool, CommStream stream, ByteBuffer host, long[] readerSlots) {
        super(windows, link, peerId, lane, window, pool, stream, host);
        this.readerSlots = readerSlots.clone();
    }

    @Override
    long slotOffset(int s) {
        return layout.sendSlot(window, s);
    }

    /** The host buffer the next slice is written into before {@link #put}: position 0, limit the slice size. */
    public ByteBuffer staging() {
        return host.duplicate().clear().limit((int) layout.sliceBytes());
    }

    /**
     * Stages the first {@code length} bytes of {@link #staging()} as the next slice: waits for the slot to be free
     * (the reader's ACK of the slice k before), copies it to the send slot and raises DATA on the reader.
     */
    public void put(int length) throws TransportException {
        if (length <= 0 || length > layout.sliceBytes()) {
            throw new IllegalArgumentException("slice length " + length + " not in (0, " + layout.sliceBytes() + "]");
        }
        raise(length);
    }

    /**
     * Signals the next slice without staging bytes (an exchange being cancelled whose reader already queued its
     * wait for it, {@link ReaderEnd#slicesIssued()}): waits for the slot's ACK as {@link #put} does, then raises
     * DATA only; what the reader reads of the slot is stale and dropped.
     */
    public void signal() throws TransportException {
        raise(0);
    }

    /** Slice {@code next}: waits for its slot, stages {@code length} bytes (none: DATA only), raises DATA. */
    private void raise(int length) throws TransportException {
        long j = next;
        int s = layout.slotOf(j);
        unbalanced();
        if (j >= layout.slots()) {
            batch("wait for the ACK of slot " + s, () -> stream.waitForPeer(link.handle(), layout.ackNotify(lane, s),
                    waitSeconds()), true);
        }
        long src = comm.bufferAddress() + layout.sendSlot(window, s);
        if (length > 0) {
            try {
                Acl.toDevice(comm.device(), src, hostAddress, length);
            } catch (HcommException e) {
                throw new TransportException(e.call(), e.code(), "staging a slice for " + peerId + ": "
                        + e.getMessage(), e);
            }
        }
        batch("raise DATA of slot " + s, () -> {
            // the write, then DATA on the same queue pair: DATA lands after the bytes
            if (link.roce() && length > 0) {
                stream.write(link.handle(), link.base() + readerSlots[s], src, length);
            }
            stream.notifyPeer(link.handle(), layout.dataNotify(lane, s));
        }, false);
        next = j + 1;
    }

    /** Waits for the ACKs still due (of the last k slices): the exchange then ended balanced. */
    public void finish() throws TransportException {
        long n = next;
        if (n > 0) {
            batch("wait for the last ACKs", () -> {
                for (long j = Math.max(0, n - layout.slots()); j < n; j++) {
                    stream.waitForPeer(link.handle(), layout.ackNotify(lane, layout.slotOf(j)), waitSeconds());
                }
            }, true);
        }
        balance();
    }

    /** Slices staged or signalled so far. */
    public long slicesPut() {
        return next;
    }

}
