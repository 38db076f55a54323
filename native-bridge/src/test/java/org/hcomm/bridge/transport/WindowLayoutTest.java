package org.hcomm.bridge.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link WindowLayout}'s arithmetic at the defaults docs/ARCHITECTURE.md gives, and its refusals. */
class WindowLayoutTest {
    static final long MIB = 1 << 20;

    @Test
    void theDefaultsGiveFortyWindowsFourLanesAndThirtyFiveNotifies() {
        WindowLayout l = new WindowLayout(320 * MIB, 4, MIB);
        assertEquals(40, l.windows());
        assertEquals(4, l.lanes());
        assertEquals(35, l.notifyNum());
        assertEquals(3, l.dataNotify(0, 0));
        assertEquals(7, l.ackNotify(0, 0));
        assertEquals(11, l.dataNotify(1, 0), "lane 1 after lane 0's DATA and ACK");
        assertEquals(34, l.ackNotify(3, 3), "the last notify of the last lane");
    }

    @Test
    void everyLaneSlotAndDirectionHasANotifyOfItsOwnBelowNotifyNum() {
        for (int slots : new int[] {1, 2, 4, 7, 30}) {
            WindowLayout l = new WindowLayout(640 * MIB, slots, MIB);
            java.util.Set<Integer> seen = new java.util.HashSet<>();
            for (int lane = 0; lane < l.lanes(); lane++) {
                for (int s = 0; s < slots; s++) {
                    assertTrue(seen.add(l.dataNotify(lane, s)) && seen.add(l.ackNotify(lane, s)));
                }
            }
            assertEquals(l.notifyNum() - 3, seen.size(), "the three of Communicator.Notify come first");
            assertTrue(seen.stream().allMatch(n -> n >= 3 && n < l.notifyNum()));
            assertTrue(l.notifyNum() <= 64, slots + " slots: " + l.notifyNum() + " notifies");
        }
        assertEquals(1, new WindowLayout(640 * MIB, 30, MIB).lanes(), "30 slots leave room for one lane");
        assertEquals(4, new WindowLayout(640 * MIB, 7, MIB).lanes(), "4 x (2 x 7) + 3 = 59 fits");
        assertEquals(3, new WindowLayout(640 * MIB, 8, MIB).lanes(), "3 x 16 + 3 = 51 fits, 4 x 16 + 3 does not");
        assertEquals(1, new WindowLayout(8 * MIB, 4, MIB).lanes(), "no more lanes than windows per half");
    }

    @Test
    void theLayoutOfTwoSlotsOfFourMib() {
        WindowLayout l = new WindowLayout(320 * MIB, 2, 4 * MIB);
        assertEquals(20, l.windows());
        assertEquals(4, l.lanes());
        assertEquals(19, l.notifyNum());
        assertEquals(3, l.dataNotify(0, 0));
        assertEquals(4, l.dataNotify(0, 1));
        assertEquals(5, l.ackNotify(0, 0));
        assertEquals(6, l.ackNotify(0, 1));
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
        assertEquals(63, new WindowLayout(640 * MIB, 30, MIB).notifyNum());
    }

    @Test
    void slotsOutsideTheLayoutAreRefused() {
        WindowLayout l = new WindowLayout(16 * MIB, 2, MIB);
        assertThrows(IndexOutOfBoundsException.class, () -> l.sendSlot(8, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> l.ackNotify(0, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> l.dataNotify(l.lanes(), 0));
    }
}
