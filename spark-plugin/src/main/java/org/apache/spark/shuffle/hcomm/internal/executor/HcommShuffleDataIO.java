package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.List;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.api.ShuffleDataIO;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.hcomm.internal.write.ArenaBlockResolver;
import org.apache.spark.shuffle.hcomm.internal.write.ArenaExecutorComponents;
import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO;

/**
 * Spark's shuffle I/O plugin with {@code spark.shuffle.hcomm.writeTarget=arena}, set by the HComm shuffle manager
 * on the executors' sort manager only: map outputs are written into this executor's send arena
 * ({@link ArenaExecutorComponents}); the driver's side is Spark's local-disk one.
 */
public final class HcommShuffleDataIO implements ShuffleDataIO {
    private final SparkConf conf;
    private final LocalDiskShuffleDataIO spark;

    public HcommShuffleDataIO(SparkConf conf) {
        this.conf = conf;
        this.spark = new LocalDiskShuffleDataIO(conf);
    }

    @Override
    public ShuffleExecutorComponents executor() {
        return new ArenaExecutorComponents(spark.executor(), HcommShuffleDataIO::publisherOf,
                conf.get(org.apache.spark.internal.config.package$.MODULE$.SHUFFLE_CHECKSUM_ALGORITHM()));
    }

    @Override
    public ShuffleDriverComponents driver() {
        return spark.driver();
    }

    /**
     * The publisher the shuffle manager took for map task {@code mapId} at its {@code getWriter}, or null (no plugin,
     * no transport then): looked up once per map task, so the output is written and announced by the same one.
     */
    private static MapOutputPublisher publisherOf(int shuffleId, long mapId) {
        return SparkEnv.get().shuffleManager().shuffleBlockResolver() instanceof ArenaBlockResolver r
                ? r.publisherOf(shuffleId, mapId) : null;
    }

    /** This executor's publishers whose arenas may hold outputs (none without a runtime). */
    public static List<MapOutputPublisher> publishers() {
        ExecutorRuntime runtime = ExecutorRuntime.current();
        return runtime == null ? List.of() : runtime.publishers();
    }
}
