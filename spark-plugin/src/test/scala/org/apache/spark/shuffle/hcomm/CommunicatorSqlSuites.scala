package org.apache.spark.shuffle.hcomm

/** What the A2 variants add to a suite's settings: soft HComm as an Atlas A2 server (api auto: the communicator path). */
object OnAtlasA2 {
  val conf: Seq[(String, String)] = Seq(
    "spark.executorEnv.HCOMM_SOFT_SOC" -> "Ascend910B3",
    "spark.shuffle.hcomm.communicator.settle" -> "300ms")

  /** `tags` with every test whose name starts with `prefix` ignored (reported as such, not run). */
  def ignoring(tags: Map[String, Set[String]], names: Set[String], prefix: String): Map[String, Set[String]] =
    tags ++ names.filter(_.startsWith(prefix)).map(n => n -> (tags.getOrElse(n, Set.empty) + "org.scalatest.Ignore"))
}

/** The HCCL buffer as a store (`communicator.transfer=store`, the earlier design; windows are the default). */
object AsStore {
  val conf: Seq[(String, String)] = Seq("spark.shuffle.hcomm.communicator.transfer" -> "store")
}

/**
 * [[SqlAqeSuite]] on the communicator path (executors on soft HComm's Atlas A2 profile) with the HCCL buffer as a
 * store ([[SqlAqeWindowSuite]] is the same with windows), once its communicator formed.
 * The suite's 64 KB send arena makes the endpoint path publish from Spark's files, which A2/A3 cannot register: here the
 * arena holds the outputs, and the test of a too-small arena is the endpoint path's (on this path such outputs go by
 * Spark's fetch: `CommunicatorFailureSuite`).
 */
class SqlAqeA2Suite extends SqlAqeSuite {
  override protected def extraConf: Seq[(String, String)] =
    super.extraConf.filterNot(_._1 == "spark.shuffle.hcomm.sendArenaSize") ++
      Seq("spark.shuffle.hcomm.sendArenaSize" -> "64m") ++ OnAtlasA2.conf ++ AsStore.conf

  // on 4.2 only: the communicator path's tests on the other lines are CommunicatorPathSuite's two
  override def tags: Map[String, Set[String]] = OnAtlasA2.ignoring(
    super.tags.map { case (n, t) => n -> (t - CrossLine.name) }.filter(_._2.nonEmpty), testNames,
    "a send arena too small")

  override def beforeAll(): Unit = {
    super.beforeAll()
    eventually("the executors' communicator formed", 60) {
      Option(driverState.communicatorMembers()).exists(_.size() == executors)
    }
  }
}

/**
 * [[ConcurrentReadersSuite]] on the communicator path with the HCCL buffer as a store: concurrent readers share the
 * executor's pooled streams (with windows, the default, [[CommunicatorWindowSuite]]'s readers share owners' windows).
 */
class ConcurrentReadersA2Suite extends ConcurrentReadersSuite {
  override protected def extraConf: Seq[(String, String)] = super.extraConf ++ OnAtlasA2.conf ++ AsStore.conf

  override def beforeAll(): Unit = {
    super.beforeAll()
    eventually("the executors' communicator formed", 60) {
      Option(driverState.communicatorMembers()).exists(_.size() == executors)
    }
  }
}

/**
 * [[SqlAqeSuite]] on the communicator path with windows (`communicator.transfer=window`, an 8 MiB HCCL buffer):
 * AQE's coalesced partition ranges and skew splits by map ranges, every remote block streamed through windows. The
 * test of a too-small arena is the store's (a window stages nothing).
 */
class SqlAqeWindowSuite extends SqlAqeSuite {
  override protected def extraConf: Seq[(String, String)] = super.extraConf ++ OnAtlasA2.conf ++ Seq(
    "spark.shuffle.hcomm.communicator.transfer" -> "window",
    "spark.shuffle.hcomm.communicator.bufferSize" -> "8m",
    "spark.shuffle.hcomm.communicator.sliceSize" -> "1m",
    "spark.shuffle.hcomm.communicator.slots" -> "2")

  override def beforeAll(): Unit = {
    super.beforeAll()
    eventually("the executors' communicator formed", 60) {
      Option(driverState.communicatorMembers()).exists(_.size() == executors)
    }
  }

  override def tags: Map[String, Set[String]] = OnAtlasA2.ignoring(
    super.tags.map { case (n, t) => n -> (t - CrossLine.name) }.filter(_._2.nonEmpty), testNames,
    "a send arena too small")
}
