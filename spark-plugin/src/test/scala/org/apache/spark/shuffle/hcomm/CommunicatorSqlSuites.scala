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

/**
 * [[SqlAqeSuite]] on the communicator path (executors on soft HComm's Atlas A2 profile, an 8 MiB HCCL buffer cut into
 * windows): AQE's coalesced partition ranges and skew splits by map ranges, every remote block streamed through
 * windows. The test of a too-small arena is the endpoint path's (a window stages nothing).
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
