package org.apache.spark.shuffle.hcomm;

import java.util.Arrays;
import java.util.stream.Stream;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
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
import org.apache.spark.shuffle.hcomm.internal.bundle.LineCheck;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.driver.DriverState;
import org.apache.spark.shuffle.hcomm.internal.executor.ExecutorRuntime;
import org.apache.spark.shuffle.hcomm.internal.read.HcommShuffleReader;
import org.apache.spark.shuffle.hcomm.internal.executor.HcommShuffleDataIO;
import org.apache.spark.shuffle.hcomm.internal.write.ArenaBlockResolver;
import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;
import org.apache.spark.shuffle.hcomm.internal.write.PublishingShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HComm shuffle manager. Map outputs are written by Spark's own sort-shuffle writers and then published into
 * registered memory; reducers read remote blocks with one-sided HComm reads. Needs {@link HcommShufflePlugin} in
 * {@code spark.plugins}; without it (or without a loadable HComm library) it behaves exactly like Spark's sort
 * shuffle.
 *
 * <p>SparkEnv makes one per JVM; task threads call it concurrently. It keeps no mutable state of its own: it finds
 * the plugin's executor runtime per call ({@link ExecutorRuntime#current()}), since Spark creates the manager and
 * the plugin apart and which starts first differs between Spark lines.
 */
public final class HcommShuffleManager implements ShuffleManager {
    private static final Logger LOG = LoggerFactory.getLogger(HcommShuffleManager.class);
    private final SortShuffleManager sort;
    /** An executor whose configuration names the plugin: its runtime must be there by the first task. */
    private final boolean pluginExpected;
    private final Fallback fallback;
    /** With {@code writeTarget=arena} on an executor: Spark's resolver that also serves outputs in the arena. */
    private final ArenaBlockResolver resolver;

    /**
     * Spark's constructor. {@code conf} gives the process's {@link HcommSettings} (shared with the plugin) and
     * Spark's own keys: Spark's sort manager and block resolver take it, and {@code spark.plugins} tells whether the
     * plugin is expected here.
     */
    public HcommShuffleManager(SparkConf conf, boolean isDriver) {
        LineCheck.verifyLine();
        if (isDriver) {
            LineCheck.verifyManagerLoadable(conf);
        }
        HcommSettings settings = HcommSettings.of(conf);
        // writeTarget=arena: Spark's writers on executors write through the plugin's shuffle I/O; the driver (and
        // local mode, where it is the executor but the plugin reads nothing one-sidedly) keeps Spark's
        boolean arena = !isDriver && settings.writeTarget() == HcommSettings.WriteTarget.ARENA;
        this.sort = new SortShuffleManager(arena ? conf.clone().set("spark.shuffle.sort.io.plugin.class",
                HcommShuffleDataIO.class.getName()) : conf);
        this.resolver = arena ? new ArenaBlockResolver(conf, HcommShuffleDataIO::publishers) : null;
        // Spark starts the plugins of both settings (spark.plugins.defaultList is for cluster-wide defaults)
        this.pluginExpected = !isDriver && Stream.of("spark.plugins", "spark.plugins.defaultList")
                .flatMap(key -> Arrays.stream(conf.get(key, "").split(",")))
                .map(String::trim).anyMatch(HcommShufflePlugin.class.getName()::equals);
        this.fallback = settings.fallback();
    }

    /**
     * The plugin's executor runtime in this JVM, or null: no plugin here, so Spark's own shuffle. On an executor that
     * names the plugin, null means the plugin and this manager were loaded by two class loaders and do not see each
     * other: an error under fallback {@code never}, a warning (once) otherwise.
     */
    ExecutorRuntime runtime() {
        ExecutorRuntime runtime = ExecutorRuntime.current();
        if (runtime == null && pluginExpected) {
            SparkEnv env = SparkEnv.get();
            String why = "the HComm shuffle plugin is in spark.plugins but the shuffle manager of executor "
                    + (env == null ? "?" : env.executorId()) + " cannot see it: the two were loaded by different class loaders (e.g. spark.executor.userClassPathFirst=true "
                    + "with the jar both on the class path and in --jars); pass the jar one way only";
            fallback.fallBackOrFail(() -> new IllegalStateException(why + " (" + HcommConf.FALLBACK.key()
                    + "=never forbids Spark's own shuffle fetch)"), "runtime not visible", () -> LOG.warn(
                    "{}. Shuffle blocks are fetched by Spark's transfer (set {}=never to make this an error)", why,
                    HcommConf.FALLBACK.key()));
        }
        return runtime;
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        return sort.registerShuffle(shuffleId, dependency);
    }

    @Override
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
            ShuffleWriteMetricsReporter metrics) {
        ShuffleWriter<K, V> writer = sort.getWriter(handle, mapId, context, metrics);
        ExecutorRuntime runtime = runtime();
        MapOutputPublisher publisher = runtime == null ? null : runtime.publisher();
        if (publisher == null) {
            return writer; // no plugin here, or HComm unavailable on this executor: Spark's files alone
        }
        return new PublishingShuffleWriter<>(writer, handle.shuffleId(), mapId, publisher, runtime.fallback(),
                (IndexShuffleBlockResolver) sort.shuffleBlockResolver(), resolver);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
            int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics) {
        BaseShuffleHandle<K, ?, C> base = (BaseShuffleHandle<K, ?, C>) handle;
        ExecutorRuntime runtime = runtime();
        if (runtime == null || base.dependency().isShuffleMergeFinalizedMarked()) {
            // no plugin here, or push-based shuffle's merged blocks: Spark's reader
            return sort.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
        }
        // as Spark's manager does, what the task reads is decided before its reader reads
        return new HcommShuffleReader<>(base, runtime.planner().plan(handle.shuffleId(), startMapIndex, endMapIndex,
                startPartition, endPartition, context, metrics), context, metrics);
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        ExecutorRuntime runtime = ExecutorRuntime.current();
        if (runtime != null) {
            runtime.unregisterShuffle(shuffleId);
        }
        DriverState driver = DriverState.current();
        if (driver != null) {
            driver.shuffleRemoved(shuffleId);
        }
        return sort.unregisterShuffle(shuffleId);
    }

    @Override
    public ShuffleBlockResolver shuffleBlockResolver() {
        return resolver != null ? resolver : sort.shuffleBlockResolver();
    }

    @Override
    public void stop() {
        sort.stop();
    }
}
