package org.apache.spark.shuffle.hcomm.internal.read;

import java.util.List;

import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * What a reduce task reads, decided before it reads (as Spark's manager hands its reader the blocks by address):
 * the blocks read one-sidedly, their reads already under way ({@code oneSided}, or null), and the blocks Spark's own
 * fetch reads (the task's own executor's, and those HComm cannot read), with the metrics their bytes count in.
 */
public record ReadPlan(scala.collection.Iterator<Tuple2<BlockId, java.io.InputStream>> oneSided,
        List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks,
        ShuffleReadMetricsReporter sparkMetrics) {
}
