package org.apache.spark.shuffle.hcomm.internal.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.hcomm.TestPluginContext;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.PackedIndex;
import org.junit.jupiter.api.Test;

/** A shuffle's directory on an executor: each output's packed index decoded once, ranges taken out of it. */
class ShuffleDirectoryTest {
    private static final long[] LENGTHS = {10, 0, 200, 3000, 0, 40_000};

    /** Map outputs 1 and 2 of executor "5", with {@code packed1} and {@code packed2} as their packed indexes. */
    private static ShuffleDirectory directory(byte[] packed1, byte[] packed2) {
        return ShuffleDirectory.of(new Messages.ShuffleLocations(0, new long[] {1, 2}, new String[] {"5", "5"},
                new long[] {100, 200}, new long[] {1000, 2000}, new int[] {LENGTHS.length, LENGTHS.length},
                new byte[][] {packed1, packed2}));
    }

    @Test
    void thePackedIndexIsDecodedOnceAndServesEveryRange() {
        byte[] packed = PackedIndex.pack(LENGTHS, 1024);
        ShuffleDirectory.Entry e = directory(packed, null).find(1, "5");
        assertArrayEquals(new long[] {10, 10, 210}, e.offsets(1, 3));
        Arrays.fill(packed, (byte) 0xFF); // were it decoded again, these bytes would not decode
        assertArrayEquals(new long[] {210, 3210, 3210, 43_210}, e.offsets(3, 6));
        assertArrayEquals(new long[] {0, 10}, e.offsets(0, 1));
        assertArrayEquals(new long[] {43_210}, e.offsets(6, 6), "an empty range: its start");
        assertThrows(IllegalArgumentException.class, () -> e.offsets(4, 7), "a range outside the partitions");
    }

    @Test
    void anIndexThatDidNotTravelOrCannotBeDecodedIsReadInstead() {
        byte[] truncated = Arrays.copyOf(PackedIndex.pack(LENGTHS, 1024), 3);
        ShuffleDirectory d = directory(truncated, null);
        assertNull(d.find(2, "5").offsets(0, 2), "no packed index: the reader reads the index");
        ShuffleDirectory.Entry bad = d.find(1, "5");
        IllegalArgumentException first = assertThrows(IllegalArgumentException.class, () -> bad.offsets(0, 1));
        IllegalArgumentException again = assertThrows(IllegalArgumentException.class, () -> bad.offsets(0, 1));
        assertEquals(first.getMessage(), again.getMessage(), "every reader is told, with what is wrong");
    }

    @Test
    void anUndecodableIndexIsWarnedAboutOncePerOutput() {
        ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
        DirectoryCache cache = new DirectoryCache(new DriverClient(new TestPluginContext("1", Map.of()), metrics));
        assertTrue(cache.firstUndecodable(0, 1));
        assertFalse(cache.firstUndecodable(0, 1), "the next task meeting it");
        assertTrue(cache.firstUndecodable(0, 2));
        assertTrue(cache.firstUndecodable(1, 1), "another shuffle's");
        cache.forget(0);
        assertTrue(cache.firstUndecodable(0, 1), "forgotten with its shuffle");
    }

    @Test
    void readersDecodingAtOnceGetTheSameOffsets() throws Exception {
        ShuffleDirectory.Entry e = directory(PackedIndex.pack(LENGTHS, 1024), null).find(1, "5");
        ExecutorService readers = Executors.newFixedThreadPool(4);
        CyclicBarrier start = new CyclicBarrier(4);
        List<Future<long[]>> got = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            got.add(readers.submit(() -> {
                start.await();
                return e.offsets(0, LENGTHS.length);
            }));
        }
        long[] want = {0, 10, 10, 210, 3210, 3210, 43_210};
        for (Future<long[]> f : got) {
            assertArrayEquals(want, f.get(10, TimeUnit.SECONDS));
        }
        readers.shutdown();
    }
}
