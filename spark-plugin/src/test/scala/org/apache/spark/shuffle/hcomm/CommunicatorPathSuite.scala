package org.apache.spark.shuffle.hcomm

import org.apache.spark.SparkEnv

/**
 * The RDD shuffles of [[HcommShuffleSuite]] on soft HComm behaving as an Atlas A2 server (`HCOMM_SOFT_SOC`
 * Ascend910B3) with the HCCL buffer as a store (`communicator.transfer=store`, the earlier design; windows, the
 * default, are [[CommunicatorWindowSuite]]'s): `spark.shuffle.hcomm.api=auto` takes the HCCL communicator path there,
 * the driver forms the executors' communicator, map outputs are staged into each owner's HCCL buffer by host-to-device
 * copies and read one-sidedly into the reader's, with fallback `never`: the answers and the one-sided bytes are the
 * proof.
 */
class CommunicatorPathSuite extends HcommShuffleSuite {
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.executorEnv.HCOMM_SOFT_SOC" -> "Ascend910B3",
    "spark.shuffle.hcomm.communicator.settle" -> "500ms",
    "spark.shuffle.hcomm.communicator.transfer" -> "store")

  override def tags: Map[String, Set[String]] = {
    // the other lines (cross-line pass) run the default, windows: CommunicatorWindowSuite's
    val crossLine = super.tags.map { case (name, t) => name -> (t - CrossLine.name) }.filter(_._2.nonEmpty)
    // leaks per stage are the endpoint path's concern (a communicator's channels live as long as it): ignored here
    OnAtlasA2.ignoring(crossLine, testNames, "100 consecutive small shuffles")
  }


  override def beforeAll(): Unit = {
    super.beforeAll()
    eventually("the executors' communicator formed", 60) {
      Option(driverState.communicatorMembers()).exists(_.size() == executors)
    }
  }

  test("the communicator path: one communicator per executor, outputs staged host to device, no endpoint") {
    // Executors report their counters at a stage's end, asynchronously: a report landing between two reads of the
    // totals moves the later one. Each report has bytesToHost >= bytesReadOneSided (a one-sided byte reaches the
    // host by a device-to-host copy), so the copies are read first here and last at the end: a late report can
    // then only widen the margin the last assertion checks, never narrow it.
    val toHost = metric("bytesToHost")
    val before = metric("bytesReadOneSided")
    val got = sc.parallelize(1 to 50000, 6).map(i => (i % 300, i.toLong)).reduceByKey(_ + _, 5).collect().toMap
    assert(got == (1 to 50000).groupBy(_ % 300).map { case (k, v) => k -> v.map(_.toLong).sum })
    assertReadOneSided(before)
    eventually("staged bytes reported")(metric("bytesStaged") > 0)
    // each executor holds one communicator: the driver forms a first one of the executors that had registered
    // when the set settled, and another once a late one joined (seen on a loaded host, cross-line 4.1: "formed by 2
    // executors", then by 3, 0.6 s apart); the earlier one retires, and the counters say so at a later stage's end
    eventually("each executor holds one communicator", 60) {
      sc.parallelize(1 to 8, 4).map(i => (i % 2, i)).reduceByKey(_ + _, 2).count()
      metric("communicatorsLive") == executors
    }
    assert(metric("communicatorsJoined") >= executors)
    assert(metric("outputsMapped") == 0 && metric("indexesMapped") == 0, "no file is registered on A2")
    // every one-sided byte came to the host by a device-to-host copy (and index reads, when there are any, too)
    val read = metric("bytesReadOneSided") - before
    assert(metric("bytesToHost") - toHost >= read)
    assert(metric("bytesReadOneSided") > before)
  }

  test("the HComm tab's summary: the communicator's epoch and members, and the stages' rows add up to the " +
    "executors' totals") {
    val got = sc.parallelize(1 to 20000, 4).map(i => (i % 100, 1L)).reduceByKey(_ + _, 3).collect().toMap
    assert(got == (0 until 100).map(_ -> 200L).toMap)
    eventually("staged bytes reported")(metric("bytesStaged") > 0 && metric("bytesToHost") > 0)
    val summary = driverState.summary()
    val communicator = summary.communicator
    assert(communicator.epoch >= 1 && communicator.failure == null, s"communicator: $communicator")
    assert(communicator.members == driverState.communicatorMembers())
    // taken under one lock: every report adds its growth to one stage's row and moves its executor's latest values
    import scala.jdk.CollectionConverters._
    Seq("bytesStaged", "bytesToHost", "bytesReadOneSided", "communicatorsJoined", "readRoundTrips").foreach { m =>
      val byStage = summary.stages.asScala.map(r => Option(r.metrics.get(m)).map(_.longValue).getOrElse(0L)).sum
      assert(byStage == summary.total(m) && summary.total(m) > 0, s"$m: stages $byStage, executors ${summary.total(m)}")
    }
  }

  test("each executor on its own NPU: with no resource set, the driver gives the executors of one host distinct " +
    "logical ids, and each joined its communicator on the one it was given") {
    val ids = liveExecutors(sc)
    val given = ids.map(id => id -> driverState.communicatorDevice(id)).toMap
    assert(given.values.forall(_ >= 0) && given.values.toSet.size == ids.size, s"NPUs given: $given")
    var joined = Map.empty[String, Int]
    eventually(s"a task on every executor said its NPU: $joined of $given", 60) {
      joined ++= sc.parallelize(1 to 4 * executors, 4 * executors).map { _ =>
        Thread.sleep(50)
        SparkEnv.get.executorId -> internal.executor.ExecutorRuntime.current().communicatorDevice()
      }.collect().toMap
      joined.keySet == given.keySet
    }
    assert(joined == given)
  }
}
