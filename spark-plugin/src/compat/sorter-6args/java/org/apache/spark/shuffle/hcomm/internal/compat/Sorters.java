package org.apache.spark.shuffle.hcomm.internal.compat;

import org.apache.spark.Aggregator;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * ExternalSorter as Spark 4.1 and 4.2 build it: a sixth argument, the row-based checksums of its output (none
 * here: the reduce side writes no shuffle output).
 *
 * <p>One of the compat layer's twins: the build compiles the one its Spark line needs (the parent pom's spark-*
 * profiles choose the directory).
 */
public final class Sorters {
    private Sorters() {
    }

    /** Spark's external sorter without a partitioner, for a reduce side that aggregates or orders keys. */
    public static <K, V, C> ExternalSorter<K, V, C> sorter(TaskContext context, Option<Aggregator<K, V, C>> aggregator,
            Option<Ordering<K>> ordering, Serializer serializer) {
        return new ExternalSorter<>(context, aggregator, Option.empty(), ordering, serializer,
                new org.apache.spark.shuffle.checksum.RowBasedChecksum[0]);
    }
}
