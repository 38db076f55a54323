package org.apache.spark.shuffle.hcomm.internal.window;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The window server's messages survive their encoding; both versions of {@code Cancel} decode. */
class WindowProtocolTest {
    @Test
    void aCancelNamingTheSlicesItsReaderIssuedGoesInTheSecondEncoding() {
        ByteBuffer b = WindowProtocol.encode(new WindowProtocol.Cancel(42, 7));
        assertEquals(17, b.remaining());
        assertEquals(3, b.get(0), "kind 3: window id and slices issued");
        assertEquals(new WindowProtocol.Cancel(42, 7), WindowProtocol.decode(b));
        assertEquals(new WindowProtocol.Cancel(42, 0), WindowProtocol.decode(WindowProtocol.encode(
                new WindowProtocol.Cancel(42, 0))));
    }

    @Test
    void aCancelNamingNoCountKeepsTheFirstEncoding() {
        ByteBuffer b = WindowProtocol.encode(new WindowProtocol.Cancel(42));
        assertEquals(9, b.remaining());
        assertEquals(2, b.get(0), "kind 2: the window id only");
        assertEquals(new WindowProtocol.Cancel(42, -1), WindowProtocol.decode(b));
        ByteBuffer first = ByteBuffer.allocate(9).put((byte) 2).putLong(5).flip(); // as an earlier reader sends it
        assertEquals(-1, ((WindowProtocol.Cancel) WindowProtocol.decode(first)).slicesIssued());
    }

    @Test
    void aMalformedCancelIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> WindowProtocol.decode(ByteBuffer.allocate(9)
                .put((byte) 3).putLong(5).flip()), "truncated");
        assertThrows(IllegalArgumentException.class, () -> WindowProtocol.decode(ByteBuffer.allocate(17)
                .put((byte) 3).putLong(5).putLong(-2).flip()), "a negative count");
    }

    @Test
    void theOtherMessagesRoundTrip() {
        assertEquals(new WindowProtocol.Cancelled(9), WindowProtocol.decode(WindowProtocol.encode(
                new WindowProtocol.Cancelled(9))));
        assertEquals(new WindowProtocol.Cancelled(-1), WindowProtocol.decode(WindowProtocol.encode(
                new WindowProtocol.Cancelled(-1))));
        assertEquals(new WindowProtocol.Refused(true, "not a member"), WindowProtocol.decode(WindowProtocol.encode(
                new WindowProtocol.Refused(true, "not a member"))));
        WindowProtocol.Fetch f = (WindowProtocol.Fetch) WindowProtocol.decode(WindowProtocol.encode(
                new WindowProtocol.Fetch(3, "exec-1", 2, new long[] {0, 4096}, List.of(new WindowProtocol.Range(1,
                        7L, 0, 4)))));
        assertEquals(3, f.epoch());
        assertEquals("exec-1", f.readerId());
        assertEquals(2, f.lane());
        assertArrayEquals(new long[] {0, 4096}, f.readerSlots());
        assertEquals(List.of(new WindowProtocol.Range(1, 7L, 0, 4)), f.ranges());
        // the first encoding (kind 1, no lane) still decodes, as lane 0
        java.nio.ByteBuffer old = java.nio.ByteBuffer.allocate(1 + 8 + 4 + 1 + 4 + 8 + 4).put((byte) 1).putLong(5)
                .putInt(1).put((byte) 'e').putInt(1).putLong(64).putInt(0).flip();
        WindowProtocol.Fetch first = (WindowProtocol.Fetch) WindowProtocol.decode(old);
        assertEquals(0, first.lane());
        assertEquals("e", first.readerId());
        assertArrayEquals(new long[] {64}, first.readerSlots());
        WindowProtocol.Granted g = (WindowProtocol.Granted) WindowProtocol.decode(WindowProtocol.encode(
                new WindowProtocol.Granted(8, new long[] {1 << 20}, new long[][] {{1, 2}, {3}})));
        assertEquals(8, g.windowId());
        assertArrayEquals(new long[] {1 << 20}, g.ownerSlots());
        assertEquals(6, g.totalBytes());
    }
}
