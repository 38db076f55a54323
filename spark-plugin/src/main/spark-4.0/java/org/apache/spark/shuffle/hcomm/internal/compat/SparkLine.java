package org.apache.spark.shuffle.hcomm.internal.compat;

import org.apache.spark.Aggregator;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * What differs on Spark 4.0: ExternalSorter takes five arguments (4.1 added row-based checksums).
 *
 * <p>Every Spark line's twin of this class has the same members; the build picks one (see the parent pom's spark-*
 * profiles).
 */
public final class SparkLine {
    /**
     * Whether SparkEnv creates the shuffle manager before the plugins start, from the JVM's own class path (Spark
     * 3.5), or after them with the application's jars in reach (4.0 on, SPARK-45762).
     */
    public static final boolean MANAGER_BEFORE_PLUGINS = false;

    private SparkLine() {
    }

    /** Spark's external sorter without a partitioner, for a reduce side that aggregates or orders keys. */
    public static <K, V, C> ExternalSorter<K, V, C> sorter(TaskContext context, Option<Aggregator<K, V, C>> aggregator,
            Option<Ordering<K>> ordering, Serializer serializer) {
        return new ExternalSorter<>(context, aggregator, Option.empty(), ordering, serializer);
    }
}
