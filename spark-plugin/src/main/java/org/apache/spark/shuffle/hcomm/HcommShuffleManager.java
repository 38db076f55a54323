package org.apache.spark.shuffle.hcomm;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.hcomm.internal.DriverState;
import org.apache.spark.shuffle.hcomm.internal.ExecutorRuntime;
import org.apache.spark.shuffle.hcomm.internal.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.HcommShuffleReader;
import org.apache.spark.shuffle.hcomm.internal.LineCheck;
import org.apache.spark.shuffle.hcomm.internal.PublishingShuffleWriter;
import org.apache.spark.shuffle.hcomm.internal.Runtimes;
import org.apache.spark.shuffle.sort.SortShuffleManager;

/**
 * The HComm shuffle manager. Map outputs are written by Spark's own sort-shuffle writers and then published into
 * registered memory; reducers read remote blocks with one-sided HComm reads. Needs {@link HcommShufflePlugin} in
 * {@code spark.plugins}; without it (or without a loadable HComm library) it behaves exactly like Spark's sort
 * shuffle.
 */
public final class HcommShuffleManager implements ShuffleManager {
    private final SortShuffleManager sort;

    public HcommShuffleManager(SparkConf conf, boolean isDriver) {
        LineCheck.verifyLine();
        if (isDriver) {
            LineCheck.verifyManagerLoadable(conf);
        }
        HcommConf.validate(conf);
        this.sort = new SortShuffleManager(conf);
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        return sort.registerShuffle(shuffleId, dependency);
    }

    @Override
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
            ShuffleWriteMetricsReporter metrics) {
        ShuffleWriter<K, V> writer = sort.getWriter(handle, mapId, context, metrics);
        ExecutorRuntime runtime = Runtimes.executor();
        if (runtime == null) {
            return writer;
        }
        return new PublishingShuffleWriter<>(writer, handle.shuffleId(), mapId, runtime,
                (IndexShuffleBlockResolver) sort.shuffleBlockResolver());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
            int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics) {
        BaseShuffleHandle<K, ?, C> base = (BaseShuffleHandle<K, ?, C>) handle;
        ExecutorRuntime runtime = Runtimes.executor();
        if (runtime == null || base.dependency().isShuffleMergeFinalizedMarked()) {
            // no plugin here, or push-based shuffle's merged blocks: Spark's reader
            return sort.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
        }
        return new HcommShuffleReader<>(base, startMapIndex, endMapIndex, startPartition, endPartition, context,
                metrics, runtime);
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        ExecutorRuntime runtime = Runtimes.executor();
        if (runtime != null) {
            runtime.unregisterShuffle(shuffleId);
        }
        DriverState driver = Runtimes.driver();
        if (driver != null) {
            driver.shuffleRemoved(shuffleId);
        }
        return sort.unregisterShuffle(shuffleId);
    }

    @Override
    public ShuffleBlockResolver shuffleBlockResolver() {
        return sort.shuffleBlockResolver();
    }

    @Override
    public void stop() {
        sort.stop();
    }
}
