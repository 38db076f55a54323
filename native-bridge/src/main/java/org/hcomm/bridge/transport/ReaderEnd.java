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
 *
 * <p>Read ahead: over HCCS with k ≥ 2 slots and the stream's length known ({@link #attach(long[], long)}),
 * {@link #take} issues slice j + 1's batch (wait DATA, read into receive slot (j + 1) mod k, ACK) before it copies
 * slice j to the host, so that copy overlaps the next read on the stream's thread; never more than one slice ahead.
 * The end is then not {@link #balanced()} until that slice is taken or {@link #skip() skipped}: an exchange being
 * cancelled tells its owner {@link #slicesIssued()}, and the owner signals every slice up to it
 * ({@link OwnerEnd#signal()}), so the wait already queued is met. Over RoCE, with k = 1 or without the length, one
 * slice at a time as before.
 */
public final class ReaderEnd extends WindowEnd {
    private long[] ownerSlots;
    /** The stream's bytes, or -1 when the attach did not say (no read ahead). */
    private long totalBytes = -1;
    /** Slices taken or skipped. */
    private long next;
    /** Slices whose batch is queued: {@code next}, or {@code next + 1} with a read ahead in flight. */
    private long issued;

    ReaderEnd(CommunicatorWindows windows, CommunicatorTransport.Link link, String peerId, int lane, int window,
            SlotPool pool, CommStream stream, ByteBuffer host) {
        super(windows, link, peerId, lane, window, pool, stream, host);
    }

    @Override
    long slotOffset(int s) {
        return layout.receiveSlot(window, s);
    }

    /**
     * The owner's slots as its grant named them, and the bytes the owner streams ({@code totalBytes} ≥ 0, the
     * grant's total): the form to use whenever the length is known. Each {@link #take} must then ask for exactly
     * {@link WindowLayout#sliceLength} of that stream, and over HCCS with k ≥ 2 it reads one slice ahead. Each slot
     * must lie inside the owner's HCCL buffer as this channel gave it, else {@code HCCL_E_PARA} and no read is ever
     * issued.
     */
    public void attach(long[] ownerSlotOffsets, long totalBytes) throws TransportException {
        if (totalBytes < 0) {
            throw new IllegalArgumentException("a stream of " + totalBytes + " bytes");
        }
        bind(ownerSlotOffsets, totalBytes);
    }

    /**
     * The owner's slots, the stream's length unknown: slices are taken one at a time, none read ahead, of any
     * length the caller names. As {@link #attach(long[], long)} otherwise.
     */
    public void attach(long[] ownerSlotOffsets) throws TransportException {
        bind(ownerSlotOffsets, -1);
    }

    private void bind(long[] ownerSlotOffsets, long total) throws TransportException {
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
        this.totalBytes = total;
        this.ownerSlots = ownerSlotOffsets.clone();
    }

    /**
     * Takes the next slice, of {@code length} bytes: returns it in host memory (valid until the next call), after
     * the owner's slot was acknowledged. With the stream's length attached, {@code length} must be the slice's.
     */
    public ByteBuffer take(int length) throws TransportException {
        if (ownerSlots == null) {
            throw new IllegalStateException("no slots attached");
        }
        if (length <= 0 || length > layout.sliceBytes()) {
            throw new IllegalArgumentException("slice length " + length + " not in (0, " + layout.sliceBytes() + "]");
        }
        if (totalBytes >= 0 && (next >= layout.sliceCount(totalBytes)
                || length != layout.sliceLength(totalBytes, next))) {
            throw new IllegalArgumentException("slice " + next + " of a stream of " + totalBytes + " bytes is not "
                    + length + " bytes long");
        }
        long j = next;
        int s = layout.slotOf(j);
        long dst = comm.bufferAddress() + layout.receiveSlot(window, s);
        unbalanced();
        if (link.roce()) { // the owner wrote the slice here before it raised DATA: copy it out, then ACK
            issued = j + 1;
            batch("wait for slot " + s, () -> stream.waitForPeer(link.handle(), layout.dataNotify(lane, s),
                    waitSeconds()), true);
            toHost(dst, length);
            batch("acknowledge slot " + s, () -> stream.notifyPeer(link.handle(), layout.ackNotify(lane, s)), false);
        } else { // the read, then ACK on the same stream: the ACK proves the read done
            if (issued == j) {
                issue(j, length);
            }
            await("read slot " + s); // only slice j is queued: the read ahead is issued after this
            if (readsAhead() && j + 1 < layout.sliceCount(totalBytes)) {
                issue(j + 1, layout.sliceLength(totalBytes, j + 1)); // into slot (j + 1) mod k, not s
            }
            toHost(dst, length); // overlaps the read of slice j + 1 on the stream's thread
        }
        next = j + 1;
        if (issued <= next) {
            balance();
        }
        return host.duplicate().clear().limit(length);
    }

    private boolean readsAhead() {
        return totalBytes >= 0 && layout.slots() >= 2;
    }

    /** Queues slice {@code j}'s batch (HCCS): wait for DATA, read the owner's slot into ours, ACK; not awaited. */
    private void issue(long j, int length) throws TransportException {
        int s = layout.slotOf(j);
        long dst = comm.bufferAddress() + layout.receiveSlot(window, s);
        issued = j + 1;
        batch("read slot " + s, () -> {
            stream.waitForPeer(link.handle(), layout.dataNotify(lane, s), waitSeconds());
            stream.read(link.handle(), dst, link.base() + ownerSlots[s], length);
            stream.notifyPeer(link.handle(), layout.ackNotify(lane, s));
        }, false);
    }

    private void toHost(long dst, int length) throws TransportException {
        try {
            Acl.toHost(comm.device(), hostAddress, dst, length);
        } catch (HcommException e) {
            throw new TransportException(e.call(), e.code(), "copying a slice from " + peerId + " to the host: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Takes the next slice without reading it (an exchange being cancelled): DATA waited for, ACK raised; a slice
     * already read ahead is only awaited.
     */
    public void skip() throws TransportException {
        int s = layout.slotOf(next);
        unbalanced();
        if (issued > next) {
            await("skip slot " + s);
        } else {
            batch("skip slot " + s, () -> {
                stream.waitForPeer(link.handle(), layout.dataNotify(lane, s), waitSeconds());
                stream.notifyPeer(link.handle(), layout.ackNotify(lane, s));
            }, true);
            issued = next + 1;
        }
        balance();
        next++;
    }

    /** Slices taken or skipped so far. */
    public long slicesTaken() {
        return next;
    }

    /**
     * Slices whose DATA wait is queued: {@link #slicesTaken()}, plus one with a read ahead in flight. A cancelling
     * reader names it to its owner, which signals every slice up to it.
     */
    public long slicesIssued() {
        return issued;
    }
}
