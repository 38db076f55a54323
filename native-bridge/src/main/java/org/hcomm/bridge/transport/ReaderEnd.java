package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.communicator.CommStream;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;

/**
 * The reader's end of a window: for slice {@code j} (slot {@code s = j mod k}) it waits for the owner's DATA; over
 * HCCS it then reads the owner's send slot through the channel (its base as {@code HcclChannelGetHcclBuffer} gave
 * it, plus the slot's offset) into its own receive slot and raises ACK on the owner in stream order after the read
 * (the ACK proves the read done), over RoCE the owner already wrote the slice into its receive slot; then it copies
 * the slice to host memory (over RoCE before the ACK, which frees the slot for the owner's next write). See
 * {@link WindowEnd} for the rules.
 */
public final class ReaderEnd extends WindowEnd {
    private long[] ownerSlots;
    private long next;

    ReaderEnd(CommunicatorWindows windows, CommPeers.Link link, String peerId, int window, SlotPool pool,
            CommStream stream, ByteBuffer host) {
        super(windows, link, peerId, window, pool, stream, host);
    }

    @Override
    long slotOffset(int s) {
        return layout.receiveSlot(window, s);
    }

    /**
     * The owner's slots as its grant named them; each must lie inside the owner's HCCL buffer as this channel gave
     * it, else {@code HCCL_E_PARA} and no read is ever issued.
     */
    public void attach(long[] ownerSlotOffsets) throws TransportException {
        if (ownerSlotOffsets.length != layout.slots()) {
            throw new TransportException("attach", HcommStatus.HCCL_E_PARA.code(), peerId + " granted "
                    + ownerSlotOffsets.length + " slots, this window has " + layout.slots(), null);
        }
        for (long o : ownerSlotOffsets) {
            if (o < 0 || o > link.size() - layout.sliceBytes()) {
                throw new TransportException("attach", HcommStatus.HCCL_E_PARA.code(), peerId + " granted a slot at "
                        + o + ", outside its HCCL buffer of " + link.size() + " bytes as the channel gave it", null);
            }
        }
        this.ownerSlots = ownerSlotOffsets.clone();
    }

    /**
     * Takes the next slice, of {@code length} bytes: returns it in host memory (valid until the next call), after
     * the owner's slot was acknowledged.
     */
    public ByteBuffer take(int length) throws TransportException {
        if (ownerSlots == null) {
            throw new IllegalStateException("no slots attached");
        }
        if (length <= 0 || length > layout.sliceBytes()) {
            throw new IllegalArgumentException("slice length " + length + " not in (0, " + layout.sliceBytes() + "]");
        }
        int s = layout.slotOf(next);
        long dst = comm.bufferAddress() + layout.receiveSlot(window, s);
        unbalanced();
        if (link.roce()) { // the owner wrote the slice here before it raised DATA: copy it out, then ACK
            batch("wait for slot " + s, () -> stream.waitForPeer(link.handle(), layout.dataNotify(s),
                    waitSeconds()), true);
            toHost(dst, length);
            batch("acknowledge slot " + s, () -> stream.notifyPeer(link.handle(), layout.ackNotify(s)), false);
        } else { // the read, then ACK on the same stream: the ACK proves the read done
            batch("read slot " + s, () -> {
                stream.waitForPeer(link.handle(), layout.dataNotify(s), waitSeconds());
                stream.read(link.handle(), dst, link.base() + ownerSlots[s], length);
                stream.notifyPeer(link.handle(), layout.ackNotify(s));
            }, true);
            toHost(dst, length);
        }
        balance();
        next++;
        return host.duplicate().clear().limit(length);
    }

    private void toHost(long dst, int length) throws TransportException {
        try {
            Acl.toHost(comm.device(), hostAddress, dst, length);
        } catch (HcommException e) {
            throw new TransportException(e.call(), e.code(), "copying a slice from " + peerId + " to the host: "
                    + e.getMessage(), e);
        }
    }

    /** Takes the next slice without reading it (an exchange being cancelled): DATA waited for, ACK raised. */
    public void skip() throws TransportException {
        int s = layout.slotOf(next);
        unbalanced();
        batch("skip slot " + s, () -> {
            stream.waitForPeer(link.handle(), layout.dataNotify(s), waitSeconds());
            stream.notifyPeer(link.handle(), layout.ackNotify(s));
        }, true);
        balance();
        next++;
    }

    /** Slices taken or skipped so far. */
    public long slicesTaken() {
        return next;
    }
}
