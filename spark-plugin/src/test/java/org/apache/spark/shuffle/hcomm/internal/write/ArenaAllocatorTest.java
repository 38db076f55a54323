package org.apache.spark.shuffle.hcomm.internal.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class ArenaAllocatorTest {

    @Test
    void randomAllocationsNeverOverlapAndFreeingEverythingRestoresOneRun() {
        long capacity = 1 << 20;
        ArenaAllocator a = new ArenaAllocator(capacity);
        BitSet used = new BitSet((int) capacity);
        List<long[]> live = new ArrayList<>();
        Random rnd = new Random(42);
        for (int step = 0; step < 20000; step++) {
            if (live.isEmpty() || rnd.nextInt(3) > 0) {
                long size = 1 + rnd.nextInt(rnd.nextBoolean() ? 200 : 40000);
                long at = a.allocate(size);
                if (at >= 0) {
                    long len = ArenaAllocator.aligned(size);
                    assertEquals(0, at % ArenaAllocator.ALIGN);
                    assertTrue(at + len <= capacity);
                    assertTrue(used.get((int) at, (int) (at + len)).isEmpty(), "overlap at " + at);
                    used.set((int) at, (int) (at + len));
                    live.add(new long[] {at, size});
                }
            } else {
                long[] victim = live.remove(rnd.nextInt(live.size()));
                a.release(victim[0], victim[1]);
                used.clear((int) victim[0], (int) (victim[0] + ArenaAllocator.aligned(victim[1])));
            }
            assertEquals(used.cardinality(), a.used());
        }
        for (long[] l : live) {
            a.release(l[0], l[1]);
        }
        assertEquals(0, a.used());
        assertEquals(0, a.allocate(capacity), "everything freed must merge back into one run");
    }

    @Test
    void doubleReleaseIsRefused() {
        ArenaAllocator a = new ArenaAllocator(4096);
        long at = a.allocate(100);
        a.allocate(100);
        a.release(at, 100);
        assertThrows(IllegalStateException.class, () -> a.release(at, 100));
    }

    @Test
    void fullArenaSaysSo() {
        ArenaAllocator a = new ArenaAllocator(1024);
        assertEquals(0, a.allocate(1024));
        assertEquals(-1, a.allocate(1));
        assertEquals(-1, new ArenaAllocator(0).allocate(1));
    }

    @Test
    void extendTakesTheAdjacentFreeRun() {
        ArenaAllocator a = new ArenaAllocator(4096);
        long at = a.allocate(100);
        assertTrue(a.extend(at, 100, 1000));
        assertEquals(ArenaAllocator.aligned(1000), a.used());
        assertEquals(at + ArenaAllocator.aligned(1000), a.allocate(64), "the next allocation starts after the grown one");
    }

    @Test
    void extendFailsWhenTheNeighbourIsUsed() {
        ArenaAllocator a = new ArenaAllocator(4096);
        long first = a.allocate(128);
        a.allocate(128);
        long used = a.used();
        assertFalse(a.extend(first, 128, 256));
        assertEquals(used, a.used(), "nothing taken on failure");
        assertFalse(a.extend(first + 256, 128, 8192), "no run that long");
    }

    @Test
    void shrinkReleasesTheTailAndItMergesWithTheFreeRunAfter() {
        ArenaAllocator a = new ArenaAllocator(4096);
        long at = a.allocate(2048);
        a.shrink(at, 2048, 100);
        assertEquals(ArenaAllocator.aligned(100), a.used());
        assertEquals(ArenaAllocator.aligned(100), a.allocate(4096 - ArenaAllocator.aligned(100)),
                "the tail and the rest of the arena are one run again");
    }
}
