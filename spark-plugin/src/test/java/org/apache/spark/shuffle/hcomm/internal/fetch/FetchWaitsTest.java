package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;

import org.apache.spark.executor.TempShuffleReadMetrics;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.ReadBatch;
import org.junit.jupiter.api.Test;

/**
 * A reduce task's waits: the round trips on its critical path, and how its nanosecond fetch wait becomes the whole
 * milliseconds Spark's metrics take.
 */
class FetchWaitsTest {
    @Test
    void aBatchIssuedBeforeAWaitEndedSharesItsRoundTripOneIssuedAfterAddsOne() throws Exception {
        ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
        TempShuffleReadMetrics spark = new TempShuffleReadMetrics();
        FetchWaits waits = new FetchWaits(metrics, spark);
        ReadBatch landed = (ReadBatch) Proxy.newProxyInstance(ReadBatch.class.getClassLoader(),
                new Class<?>[] {ReadBatch.class}, (proxy, method, args) -> null);
        int first = waits.issueDepth();
        int second = waits.issueDepth(); // both go out before any wait
        assertEquals(1, first);
        assertEquals(1, second);
        waits.await(landed, ShuffleMetrics.FetchWait.FIRST_WAVE, first);
        int third = waits.issueDepth(); // goes out once the first landed
        assertEquals(2, third);
        waits.await(landed, ShuffleMetrics.FetchWait.LATER_WAVES, second);
        assertEquals(1, waits.roundTrips(), "the second wave was on its way during the first one's wait");
        waits.await(landed, ShuffleMetrics.FetchWait.LATER_WAVES, third);
        assertEquals(2, waits.roundTrips());
    }

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
