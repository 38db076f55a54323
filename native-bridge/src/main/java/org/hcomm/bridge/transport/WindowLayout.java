package org.hcomm.bridge.transport;

import org.hcomm.bridge.communicator.Communicator;

/**
 * How a member's HCCL buffer is cut into windows (docs/ARCHITECTURE.md, "The HCCL buffer as a window"): its first
 * half holds the send slots owners stage slices into, its second half the receive slots reads land in; a window has
 * {@code slots} slots of {@code sliceBytes} at each end, so each half holds {@link #windows()} windows. A notify is a
 * flag, so one window at a time uses a set of notify indices in each direction of a channel: a <em>lane</em>; each
 * channel has {@link #lanes()} of them, so that many windows at once carry one owner's bytes to one reader executor
 * (its tasks reading that owner at once). Each channel carries {@link #notifyNum()} notifies: the three of
 * {@link Communicator.Notify}, then per lane one DATA per slot (raised on the reader by its owner) and one ACK per slot
 * (raised on the owner by its reader). Immutable; pure arithmetic.
 */
public record WindowLayout(long bufferBytes, int slots, long sliceBytes) {
    /** The notifies a channel may carry at most (CANN's {@code NOTIFY_NUM_MAX}). */
    static final int CHANNEL_NOTIFIES = 64;
    /** The most slots a window may have: 3 + 2 x slots notifies must fit the 64 a channel may carry. */
    public static final int MAX_SLOTS = 30;
    /**
     * The most lanes a channel gets: four windows at once between one owner and one reader executor, 35 notifies per
     * channel at 4 slots (notifies are a device's resource, and a channel per member pair holds them all its life).
     */
    public static final int MAX_LANES = 4;

    public WindowLayout {
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be in [1, " + MAX_SLOTS + "], got " + slots);
        }
        if (sliceBytes <= 0) {
            throw new IllegalArgumentException("slice size must be > 0, got " + sliceBytes);
        }
        if (bufferBytes / 2 < slots * sliceBytes) {
            throw new IllegalArgumentException("an HCCL buffer of " + bufferBytes + " bytes must hold one window per "
                    + "half: 2 x " + slots + " slots x " + sliceBytes + " bytes = " + 2 * slots * sliceBytes
                    + " bytes");
        }
    }

    /** Windows each half holds: how many an owner serves, and a reader reads through, at once. */
    public int windows() {
        return (int) Math.min(Integer.MAX_VALUE, (bufferBytes / 2) / (slots * sliceBytes));
    }

    /**
     * Windows at once in each direction of a channel: {@link #MAX_LANES}, fewer when the notifies (3 + 2 x slots per
     * lane) would not fit 64 or a half has fewer windows; at least one.
     */
    public int lanes() {
        int fit = (CHANNEL_NOTIFIES - Communicator.NOTIFY_NUM) / (2 * slots);
        return Math.max(1, Math.min(Math.min(MAX_LANES, windows()), fit));
    }

    /** Notifies per channel. */
    public int notifyNum() {
        return Communicator.NOTIFY_NUM + 2 * slots * lanes();
    }

    /** The notify an owner raises on its reader when slot {@code s} of the window in {@code lane} holds a slice. */
    public int dataNotify(int lane, int s) {
        return Communicator.NOTIFY_NUM + 2 * slots * checkLane(lane) + checkSlot(s);
    }

    /** The notify a reader raises on its owner when it is done with slot {@code s} of the window in {@code lane}. */
    public int ackNotify(int lane, int s) {
        return Communicator.NOTIFY_NUM + 2 * slots * checkLane(lane) + slots + checkSlot(s);
    }

    /** The offset into the HCCL buffer of send slot {@code s} of window {@code window}. */
    public long sendSlot(int window, int s) {
        return checkWindow(window) * slots * sliceBytes + checkSlot(s) * sliceBytes;
    }

    /** The offset into the HCCL buffer of receive slot {@code s} of window {@code window}. */
    public long receiveSlot(int window, int s) {
        return bufferBytes / 2 + sendSlot(window, s);
    }

    /** Slices a stream of {@code totalBytes} is cut into (0 for none). */
    public long sliceCount(long totalBytes) {
        return (totalBytes + sliceBytes - 1) / sliceBytes;
    }

    /** The length of slice {@code j} of a stream of {@code totalBytes}: full slices, the last one short. */
    public int sliceLength(long totalBytes, long j) {
        if (j < 0 || j >= sliceCount(totalBytes)) {
            throw new IndexOutOfBoundsException("slice " + j + " of a stream of " + totalBytes + " bytes");
        }
        return (int) Math.min(sliceBytes, totalBytes - j * sliceBytes);
    }

    /** The slot slice {@code j} uses at both ends. */
    public int slotOf(long j) {
        return (int) (j % slots);
    }

    private int checkSlot(int s) {
        if (s < 0 || s >= slots) {
            throw new IndexOutOfBoundsException("slot " + s + " of " + slots);
        }
        return s;
    }

    /** {@code lane}, or IndexOutOfBoundsException when the channel has no such lane. */
    public int checkLane(int lane) {
        if (lane < 0 || lane >= lanes()) {
            throw new IndexOutOfBoundsException("lane " + lane + " of " + lanes());
        }
        return lane;
    }

    private long checkWindow(int w) {
        if (w < 0 || w >= windows()) {
            throw new IndexOutOfBoundsException("window " + w + " of " + windows());
        }
        return w;
    }
}
