package org.hcomm.bridge.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link WindowLayout}'s arithmetic at the defaults docs/ARCHITECTURE.md gives, and its refusals. */
class WindowLayoutTest {
    static final long MIB = 1 << 20;

    @Test
    void theDefaultsGiveTwentyWindowsAndSevenNotifies() {
        WindowLayout l = new WindowLayout(320 * MIB, 2, 4 * MIB);
        assertEquals(20, l.windows());
        assertEquals(7, l.notifyNum());
        assertEquals(3, l.dataNotify(0));
        assertEquals(4, l.dataNotify(1));
        assertEquals(5, l.ackNotify(0));
        assertEquals(6, l.ackNotify(1));
        assertEquals(0, l.sendSlot(0, 0));
        assertEquals(4 * MIB, l.sendSlot(0, 1));
        assertEquals(8 * MIB, l.sendSlot(1, 0));
        assertEquals(160 * MIB, l.receiveSlot(0, 0));
        assertEquals(320 * MIB - 4 * MIB, l.receiveSlot(19, 1));
    }

    @Test
    void slicesAreFullButTheLast() {
        WindowLayout l = new WindowLayout(16 * MIB, 2, MIB);
        assertEquals(0, l.sliceCount(0));
        assertEquals(1, l.sliceCount(1));
        assertEquals(3, l.sliceCount(2 * MIB + 5));
        assertEquals((int) MIB, l.sliceLength(2 * MIB + 5, 1));
        assertEquals(5, l.sliceLength(2 * MIB + 5, 2));
        assertEquals(0, l.slotOf(4));
        assertEquals(1, l.slotOf(5));
        assertThrows(IndexOutOfBoundsException.class, () -> l.sliceLength(2 * MIB + 5, 3));
    }

    @Test
    void aBufferThatCannotHoldOneWindowPerHalfIsRefusedSayingWhy() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new WindowLayout(8 * MIB, 2, 4 * MIB));
        assertTrue(e.getMessage().contains("must hold one window per half"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new WindowLayout(64 * MIB, 0, MIB));
        assertThrows(IllegalArgumentException.class, () -> new WindowLayout(640 * MIB, 31, MIB));
        assertEquals(64, new WindowLayout(640 * MIB, 30, MIB).notifyNum() + 1);
    }

    @Test
    void slotsOutsideTheLayoutAreRefused() {
        WindowLayout l = new WindowLayout(16 * MIB, 2, MIB);
        assertThrows(IndexOutOfBoundsException.class, () -> l.sendSlot(8, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> l.ackNotify(2));
    }
}
