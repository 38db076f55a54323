package org.apache.spark.shuffle.hcomm.internal.fetch;

import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;

/**
 * A reduce task's waits for its batches of one-sided reads, and its round trips: the length of the chain of waits
 * its reads depended on. A batch issued before the task's previous wait ended lands within that wait's round trip (its
 * request was already on the wire); one issued after a wait ended is one round trip deeper than that wait. Wait time
 * is fetch wait time (summed in ns, reported to Spark in whole ms, and split by what was waited for in the plugin's
 * metrics). Confined to the task's thread.
 */
final class FetchWaits {
    private final ShuffleMetrics metrics;
    private final ShuffleReadMetricsReporter readMetrics;
    private int depth;
    private long waitNanos;
    private long waitReportedMs;

    FetchWaits(ShuffleMetrics metrics, ShuffleReadMetricsReporter readMetrics) {
        this.metrics = metrics;
        this.readMetrics = readMetrics;
    }

    /** The round trip a batch issued now lands in: one after the deepest wait that ended so far. */
    int issueDepth() {
        return depth + 1;
    }

    /**
     * Waits for {@code batch}, issued at round trip {@code issuedAt} ({@link #issueDepth()} when it was flushed);
     * returns how long it waited.
     */
    long await(ReadBatch batch, ShuffleMetrics.FetchWait what, int issuedAt) throws TransportException {
        long t0 = System.nanoTime();
        long waited = 0;
        try {
            batch.await();
        } finally {
            depth = Math.max(depth, issuedAt);
            waited = System.nanoTime() - t0;
            metrics.fetchWaited(what, waited);
            waitNanos += waited;
            long ms = nearestMillis(waitNanos);
            readMetrics.incFetchWaitTime(ms - waitReportedMs);
            waitReportedMs = ms;
        }
        return waited;
    }

    /** Round trips on the task's critical path so far: index rounds and data waves issued after a wait. */
    int roundTrips() {
        return depth;
    }

    /**
     * Spark takes fetch wait in whole milliseconds. The reader reports the running total rounded to the nearest one,
     * so a task's report is off by at most half a millisecond per shuffle it reads; flooring (as
     * {@code TimeUnit.toMillis} does) would lose up to a whole one, most of the wait of a stage of short tasks.
     */
    static long nearestMillis(long nanos) {
        return (nanos + 500_000) / 1_000_000;
    }
}
