package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How the reader turns its nanosecond fetch wait into the whole milliseconds Spark's metrics take. */
class FetchWaitMillisTest {
    @Test
    void roundsToTheNearestMillisecond() {
        assertEquals(0, FetchWaits.nearestMillis(0));
        assertEquals(0, FetchWaits.nearestMillis(499_999));
        assertEquals(1, FetchWaits.nearestMillis(500_000));
        assertEquals(1, FetchWaits.nearestMillis(1_499_999));
        assertEquals(2, FetchWaits.nearestMillis(1_500_000));
    }

    @Test
    void manyReadsOfShortWaitsAddUpToTheirTotalWithinHalfAMillisecondEach() {
        // 1,800 reduce tasks' reads of 0.7 ms each (an index round and a first wave): 1,260 ms waited.
        long reported = 0;
        for (int read = 0; read < 1_800; read++) {
            reported += FetchWaits.nearestMillis(700_000);
        }
        assertTrue(Math.abs(reported - 1_260) <= 1_800 / 2, "reported " + reported + " ms of 1,260");
        assertEquals(1_800, reported, "each 0.7 ms read counts as 1 ms, not 0");
    }
}
