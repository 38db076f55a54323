package org.apache.spark.shuffle.hcomm.internal.read;

import com.codahale.metrics.Counter;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;

/**
 * Spark's read metrics for the blocks Spark's own fetch reads, passing every update through and counting the remote
 * bytes (as {@code bytesReadFallback}, or {@code bytesReadBeforeCommunicator} in the communicator path's start-up
 * window) and the fetch wait as {@code fetchWaitSparkMillis}.
 */
final class FallbackCountingMetrics implements ShuffleReadMetricsReporter {
    private final ShuffleReadMetricsReporter delegate;
    private final ShuffleMetrics metrics;
    private final Counter remoteBytes;

    FallbackCountingMetrics(ShuffleReadMetricsReporter delegate, ShuffleMetrics metrics, Counter remoteBytes) {
        this.delegate = delegate;
        this.metrics = metrics;
        this.remoteBytes = remoteBytes;
    }

    @Override
    public void incRemoteBytesRead(long v) {
        remoteBytes.inc(v);
        delegate.incRemoteBytesRead(v);
    }

    @Override
    public void incRemoteBlocksFetched(long v) {
        delegate.incRemoteBlocksFetched(v);
    }

    @Override
    public void incLocalBlocksFetched(long v) {
        delegate.incLocalBlocksFetched(v);
    }

    @Override
    public void incRemoteBytesReadToDisk(long v) {
        delegate.incRemoteBytesReadToDisk(v);
    }

    @Override
    public void incLocalBytesRead(long v) {
        delegate.incLocalBytesRead(v);
    }

    @Override
    public void incFetchWaitTime(long v) {
        metrics.fetchWaitSpark.inc(v);
        delegate.incFetchWaitTime(v);
    }

    @Override
    public void incRecordsRead(long v) {
        delegate.incRecordsRead(v);
    }

    @Override
    public void incCorruptMergedBlockChunks(long v) {
        delegate.incCorruptMergedBlockChunks(v);
    }

    @Override
    public void incMergedFetchFallbackCount(long v) {
        delegate.incMergedFetchFallbackCount(v);
    }

    @Override
    public void incRemoteMergedBlocksFetched(long v) {
        delegate.incRemoteMergedBlocksFetched(v);
    }

    @Override
    public void incLocalMergedBlocksFetched(long v) {
        delegate.incLocalMergedBlocksFetched(v);
    }

    @Override
    public void incRemoteMergedChunksFetched(long v) {
        delegate.incRemoteMergedChunksFetched(v);
    }

    @Override
    public void incLocalMergedChunksFetched(long v) {
        delegate.incLocalMergedChunksFetched(v);
    }

    @Override
    public void incRemoteMergedBytesRead(long v) {
        delegate.incRemoteMergedBytesRead(v);
    }

    @Override
    public void incLocalMergedBytesRead(long v) {
        delegate.incLocalMergedBytesRead(v);
    }

    @Override
    public void incRemoteReqsDuration(long v) {
        delegate.incRemoteReqsDuration(v);
    }

    @Override
    public void incRemoteMergedReqsDuration(long v) {
        delegate.incRemoteMergedReqsDuration(v);
    }
}
