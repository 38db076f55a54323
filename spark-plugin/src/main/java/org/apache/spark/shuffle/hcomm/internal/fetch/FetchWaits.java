package org.apache.spark.shuffle.hcomm.internal.fetch;

import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;

/**
 * A reduce task's waits for its batches of one-sided reads: each is one round trip, its time is fetch wait time
 * (summed in ns, reported to Spark in whole ms, and split by what was waited for in the plugin's metrics). Confined
 * to the task's thread.
 */
final class FetchWaits {
    private final ShuffleMetrics metrics;
    private final ShuffleReadMetricsReporter readMetrics;
    private int roundTrips;
    private long waitNanos;
    private long waitReportedMs;

    FetchWaits(ShuffleMetrics metrics, ShuffleReadMetricsReporter readMetrics) {
        this.metrics = metrics;
        this.readMetrics = readMetrics;
    }

    /** Waits for {@code batch}, one round trip of the task's; returns how long it waited. */
    long await(ReadBatch batch, ShuffleMetrics.FetchWait what) throws TransportException {
        long t0 = System.nanoTime();
        long waited = 0;
        roundTrips++;
        try {
            batch.await();
        } finally {
            waited = System.nanoTime() - t0;
            metrics.fetchWaited(what, waited);
            waitNanos += waited;
            long ms = nearestMillis(waitNanos);
            readMetrics.incFetchWaitTime(ms - waitReportedMs);
            waitReportedMs = ms;
        }
        return waited;
    }

    /** Batches the task waited for so far: index rounds and waves. */
    int roundTrips() {
        return roundTrips;
    }

    /**
     * Spark takes fetch wait in whole milliseconds. The reader reports the running total rounded to the nearest one,
     * so a task's report is off by at most half a millisecond per shuffle it reads; flooring (as
     * {@code TimeUnit.toMillis} does) dropped up to a whole one, and on a stage of many short waits most of them.
     */
    static long nearestMillis(long nanos) {
        return (nanos + 500_000) / 1_000_000;
    }
}
