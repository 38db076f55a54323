package org.apache.spark.shuffle.hcomm.internal.driver

import org.apache.spark.shuffle.hcomm.internal.metrics.MetricEntry
import org.apache.spark.shuffle.hcomm.internal.rpc.{Messages, Wire}

/** Looks into the driver plugin's state from a test (tests only). */
object DriverProbe {
  /** A shuffle's directory as the driver holds it: map id -> (executor id, data address). */
  def published(state: DriverState, shuffleId: Int): Map[Long, (String, Long)] = {
    val l = Wire.reply(state.receive(Wire.pack(new Messages.LookupShuffle(shuffleId))))
      .asInstanceOf[Messages.ShuffleLocations]
    l.mapIds.indices.map(i => l.mapIds()(i) -> (l.executorIds()(i), l.dataAddresses()(i))).toMap
  }

  /** The names of the documented HcommShuffle metrics (all on executors), and those on the driver. */
  def documentedMetrics(onDriver: Boolean): Set[String] =
    MetricEntry.values().filter(m => !onDriver || m.onDriver()).map(_.metricName()).toSet
}
