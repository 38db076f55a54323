package org.apache.spark.shuffle.hcomm.internal.window;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The window server's messages, small and binary (big-endian), one request and one reply each:
 * <ul>
 *   <li>{@link Fetch} (reader → owner): the reader's epoch and id, the lane of the channel its window took, its
 *       receive slots, and the map output ranges it
 *       wants streamed → {@link Granted} (the window's id, the owner's send slots, the exact length of every
 *       partition of every range, from the owner's index) or {@link Refused} (why; {@code epoch} when the owner is
 *       not in the reader's communicator, so the reader may try again).</li>
 *   <li>{@link Cancel} (reader → owner): stop cutting slices, and how many slices the reader queued a DATA wait
 *       for (it reads one ahead) → {@link Cancelled}, at once (how many slices the owner began, or more: every
 *       slice up to the reader's count it had not begun it signals without bytes; the reader waits for and
 *       acknowledges each, so the window ends balanced).</li>
 * </ul>
 * Versions: a {@link Cancel} that names no count ({@code slicesIssued} -1) goes out in the first encoding (kind 2,
 * the window id only), one that does in the second (kind 3); both decode. A {@link Fetch} goes out naming its lane
 * (kind 4); one without (kind 1) decodes as lane 0.
 * No message travels per slice. Immutable records; a malformed message throws {@link IllegalArgumentException}.
 */
public final class WindowProtocol {
    private static final byte FETCH = 1;
    private static final byte CANCEL = 2;
    private static final byte CANCEL_ISSUED = 3;
    private static final byte FETCH_IN_LANE = 4;
    private static final byte GRANTED = 11;
    private static final byte REFUSED = 12;
    private static final byte CANCELLED = 13;

    private WindowProtocol() {}

    /** Partitions [startPartition, endPartition) of one map output. */
    public record Range(int shuffleId, long mapId, int startPartition, int endPartition) {}

    public record Fetch(long epoch, String readerId, int lane, long[] readerSlots, List<Range> ranges) {}

    public record Granted(long windowId, long[] ownerSlots, long[][] lengths) {
        /** Bytes the window streams: every partition of every range, end to end. */
        public long totalBytes() {
            return WindowProtocol.totalBytes(lengths);
        }
    }

    /** {@code epochMismatch}: the owner is not in the reader's communicator (yet, or any more). */
    public record Refused(boolean epochMismatch, String reason) {}

    /**
     * {@code slicesIssued}: slices the reader queued a DATA wait for, each of which the owner signals; -1 when the
     * reader does not say (then it waits only for those the owner began).
     */
    public record Cancel(long windowId, long slicesIssued) {
        public Cancel(long windowId) {
            this(windowId, -1);
        }
    }

    /** Slices the owner signalled or will signal (-1: it knows no such window): the reader takes that many. */
    public record Cancelled(long slicesSignalled) {}

    public static ByteBuffer encode(Fetch f) {
        byte[] id = f.readerId().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(1 + 8 + 4 + id.length + 4 + 4 + 8 * f.readerSlots().length + 4
                + 20 * f.ranges().size());
        b.put(FETCH_IN_LANE).putLong(f.epoch()).putInt(id.length).put(id).putInt(f.lane())
                .putInt(f.readerSlots().length);
        for (long s : f.readerSlots()) {
            b.putLong(s);
        }
        b.putInt(f.ranges().size());
        for (Range r : f.ranges()) {
            b.putInt(r.shuffleId()).putLong(r.mapId()).putInt(r.startPartition()).putInt(r.endPartition());
        }
        return b.flip();
    }

    public static ByteBuffer encode(Cancel c) {
        if (c.slicesIssued() < 0) {
            return ByteBuffer.allocate(9).put(CANCEL).putLong(c.windowId()).flip();
        }
        return ByteBuffer.allocate(17).put(CANCEL_ISSUED).putLong(c.windowId()).putLong(c.slicesIssued()).flip();
    }

    public static ByteBuffer encode(Granted g) {
        int size = 1 + 8 + 4 + 8 * g.ownerSlots().length + 4;
        for (long[] r : g.lengths()) {
            size += 4 + 8 * r.length;
        }
        ByteBuffer b = ByteBuffer.allocate(size).put(GRANTED).putLong(g.windowId()).putInt(g.ownerSlots().length);
        for (long s : g.ownerSlots()) {
            b.putLong(s);
        }
        b.putInt(g.lengths().length);
        for (long[] r : g.lengths()) {
            b.putInt(r.length);
            for (long l : r) {
                b.putLong(l);
            }
        }
        return b.flip();
    }

    /** The sum of {@code lengths}: what a window granted with these lengths streams. */
    public static long totalBytes(long[][] lengths) {
        long t = 0;
        for (long[] r : lengths) {
            for (long l : r) {
                t += l;
            }
        }
        return t;
    }

    public static ByteBuffer encode(Refused r) {
        byte[] why = r.reason().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + 1 + 4 + why.length).put(REFUSED).put((byte) (r.epochMismatch() ? 1 : 0))
                .putInt(why.length).put(why).flip();
    }

    public static ByteBuffer encode(Cancelled c) {
        return ByteBuffer.allocate(9).put(CANCELLED).putLong(c.slicesSignalled()).flip();
    }

    /** A request or a reply, as the record it encodes. */
    public static Object decode(ByteBuffer in) {
        ByteBuffer b = in.duplicate();
        try {
            byte kind = b.get();
            switch (kind) {
                case FETCH:
                case FETCH_IN_LANE: {
                    long epoch = b.getLong();
                    String id = string(b);
                    int lane = kind == FETCH ? 0 : b.getInt();
                    if (lane < 0) {
                        throw new IllegalArgumentException("a fetch in lane " + lane);
                    }
                    long[] slots = longs(b, b.getInt());
                    int n = count(b, b.getInt(), 20);
                    List<Range> ranges = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        ranges.add(new Range(b.getInt(), b.getLong(), b.getInt(), b.getInt()));
                    }
                    return new Fetch(epoch, id, lane, slots, ranges);
                }
                case CANCEL:
                    return new Cancel(b.getLong());
                case CANCEL_ISSUED: {
                    long window = b.getLong();
                    long issued = b.getLong();
                    if (issued < 0) {
                        throw new IllegalArgumentException("a cancel naming " + issued + " slices issued");
                    }
                    return new Cancel(window, issued);
                }
                case GRANTED: {
                    long window = b.getLong();
                    long[] slots = longs(b, b.getInt());
                    int n = count(b, b.getInt(), 4);
                    long[][] lengths = new long[n][];
                    for (int i = 0; i < n; i++) {
                        lengths[i] = longs(b, b.getInt());
                    }
                    return new Granted(window, slots, lengths);
                }
                case REFUSED: {
                    boolean epoch = b.get() != 0;
                    return new Refused(epoch, string(b));
                }
                case CANCELLED:
                    return new Cancelled(b.getLong());
                default:
                    throw new IllegalArgumentException("unknown window message kind " + kind);
            }
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated window message of " + in.remaining() + " bytes", e);
        }
    }

    private static int count(ByteBuffer b, int n, int bytesEach) {
        if (n < 0 || (long) n * bytesEach > b.remaining()) {
            throw new IllegalArgumentException("a count of " + n + " does not fit the " + b.remaining()
                    + " bytes left");
        }
        return n;
    }

    private static long[] longs(ByteBuffer b, int n) {
        long[] out = new long[count(b, n, 8)];
        for (int i = 0; i < out.length; i++) {
            out[i] = b.getLong();
        }
        return out;
    }

    private static String string(ByteBuffer b) {
        byte[] s = new byte[count(b, b.getInt(), 1)];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }
}
