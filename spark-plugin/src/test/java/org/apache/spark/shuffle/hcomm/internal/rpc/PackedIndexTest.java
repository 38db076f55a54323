package org.apache.spark.shuffle.hcomm.internal.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;

import org.junit.jupiter.api.Test;

/** Partition lengths packed into a publication, and the offsets a reader takes out of them. */
class PackedIndexTest {
    @Test
    void offsetsAreSparksIndexLayoutForTheRange() {
        long[] lengths = {0, 100, 0, 300, 1L << 40};
        long[] offsets = PackedIndex.decode(PackedIndex.pack(lengths, 1024), 5);
        assertArrayEquals(new long[] {0, 0, 100, 100, 400, 400 + (1L << 40)}, offsets);
        assertArrayEquals(offsets, PackedIndex.range(offsets, 0, 5));
        assertArrayEquals(new long[] {100, 100, 400}, PackedIndex.range(offsets, 2, 4));
        assertArrayEquals(new long[] {400}, PackedIndex.range(offsets, 4, 4), "an empty range: its start");
    }

    @Test
    void eachLengthTakesOneToFewBytes() {
        assertEquals(3, PackedIndex.pack(new long[] {0, 1, 127}, 100).length);
        assertEquals(4, PackedIndex.pack(new long[] {128, (1 << 14) - 1}, 100).length);
        assertEquals(3, PackedIndex.pack(new long[] {(1 << 21) - 1}, 100).length);
        assertEquals(4, PackedIndex.pack(new long[] {1 << 21}, 100).length);
        assertEquals(9, PackedIndex.pack(new long[] {Long.MAX_VALUE}, 100).length);
    }

    @Test
    void overTheBudgetNothingIsPacked() {
        long[] lengths = new long[200];
        java.util.Arrays.fill(lengths, 1 << 20); // 3 bytes each: 600
        assertEquals(600, PackedIndex.pack(lengths, 600).length);
        assertNull(PackedIndex.pack(lengths, 599));
        assertNull(PackedIndex.pack(lengths, 0));
        assertEquals(0, PackedIndex.pack(new long[0], 0).length, "no partitions: nothing to pack");
    }

    @Test
    void randomLengthsRoundTrip() {
        Random rnd = new Random(29);
        for (int t = 0; t < 200; t++) {
            int n = 1 + rnd.nextInt(300);
            long[] lengths = new long[n];
            long[] index = new long[n + 1];
            for (int i = 0; i < n; i++) {
                lengths[i] = rnd.nextInt(4) == 0 ? 0 : (rnd.nextLong() >>> (1 + rnd.nextInt(62)));
                index[i + 1] = index[i] + lengths[i];
            }
            int first = rnd.nextInt(n);
            int end = first + rnd.nextInt(n - first + 1);
            long[] want = java.util.Arrays.copyOfRange(index, first, end + 1);
            long[] offsets = PackedIndex.decode(PackedIndex.pack(lengths, 1 << 20), n);
            assertArrayEquals(index, offsets);
            assertArrayEquals(want, PackedIndex.range(offsets, first, end));
        }
    }

    @Test
    void badInputIsRefusedWithWhatIsWrong() {
        long[] offsets = PackedIndex.decode(PackedIndex.pack(new long[] {5, 6}, 10), 2);
        assertThrows(IllegalArgumentException.class, () -> PackedIndex.range(offsets, 1, 3));
        assertThrows(IllegalArgumentException.class, () -> PackedIndex.range(offsets, 2, 1));
        assertThrows(IllegalArgumentException.class, () -> PackedIndex.range(offsets, -1, 1));
        IllegalArgumentException truncated = assertThrows(IllegalArgumentException.class,
                () -> PackedIndex.decode(new byte[] {(byte) 0x85}, 1));
        assertEquals("packed index of 1 bytes ends inside partition 0 of 1", truncated.getMessage());
        byte[] packed = PackedIndex.pack(new long[] {5, 6}, 10);
        assertThrows(IllegalArgumentException.class, () -> PackedIndex.decode(packed, 3), "fewer than said");
        IllegalArgumentException more = assertThrows(IllegalArgumentException.class,
                () -> PackedIndex.decode(packed, 1), "more than said");
        assertEquals("packed index of 2 bytes has 1 left after its 1 partitions", more.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PackedIndex.decode(packed, -1));
        assertThrows(IllegalArgumentException.class, () -> PackedIndex.pack(new long[] {-1}, 10));
    }
}
