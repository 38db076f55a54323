package org.apache.spark.shuffle.hcomm

import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/**
 * The communicator path (its HCCL buffer as windows, `communicator.transfer=window`, its only transfer) on soft HComm
 * behaving as an Atlas A2 server: `spark.shuffle.hcomm.api=auto` takes the path there and the driver forms the
 * executors' communicator; an HCCL buffer of 8 MiB (two windows of 2 x 1 MiB per half), fallback `never`, three
 * executors with two task slots each, so several readers of one owner read at once and wait for its windows in turn,
 * and a read-ahead of 1 MiB per task. A shuffle ten times the buffer reaches the readers one-sidedly, every remote
 * byte: nothing is staged at commit and Spark's fetch reads nothing remote.
 */
class CommunicatorWindowSuite extends LocalClusterSuite {
  override protected def executors: Int = 3
  override protected def coresPerExecutor: Int = 2
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.executorEnv.HCOMM_SOFT_SOC" -> "Ascend910B3",
    "spark.shuffle.hcomm.communicator.settle" -> "500ms",
    "spark.shuffle.hcomm.communicator.transfer" -> "window",
    "spark.shuffle.hcomm.communicator.bufferSize" -> "8m",
    "spark.shuffle.hcomm.communicator.sliceSize" -> "1m",
    "spark.shuffle.hcomm.communicator.slots" -> "2",
    "spark.shuffle.hcomm.readTimeout" -> "20s",
    // a read-ahead budget smaller than one block: a task must still get every block (it hung once)
    "spark.shuffle.hcomm.maxBytesInFlight" -> "1m",
    "spark.decommission.enabled" -> "true",
    "spark.storage.decommission.enabled" -> "true",
    "spark.storage.decommission.shuffleBlocks.enabled" -> "true",
    "spark.storage.decommission.rddBlocks.enabled" -> "false",
    "spark.storage.decommission.replicationReattemptInterval" -> "2s")

  /** Remote bytes Spark's task metrics counted, summed over every task that ended. */
  private val remoteBytes = new AtomicLong()
  /** Every task's end reason, in order. */
  private val reasons = new java.util.concurrent.ConcurrentLinkedQueue[org.apache.spark.TaskEndReason]()

  override def beforeAll(): Unit = {
    super.beforeAll()
    sc.addSparkListener(new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = {
        reasons.add(end.reason)
        if (end.taskMetrics != null) {
          remoteBytes.addAndGet(end.taskMetrics.shuffleReadMetrics.remoteBytesRead)
        }
      }
    })
    eventually("the executors' communicator formed", 60) {
      Option(driverState.communicatorMembers()).exists(_.size() == executors)
    }
  }

  private def remoteBytesSettled(): Long = {
    sc.listenerBus.waitUntilEmpty()
    remoteBytes.get()
  }

  /**
   * Runs `job`, then checks that every remote byte Spark's task metrics counted for it was read one-sidedly (as the
   * executors' later reports say) and none by Spark's fetch; returns what `job` gave and those bytes.
   */
  private def allRemoteOneSided[T](job: => T): (T, Long) = {
    val remoteBefore = remoteBytesSettled()
    // the earlier jobs' last reports (sent as their tasks end) must be in before the count starts
    var before = -1L
    eventually("the earlier one-sided bytes reported", 10) {
      val now = metric("bytesReadOneSided")
      val settled = now == before
      before = now
      if (!settled) Thread.sleep(300)
      settled
    }
    val fallbackBefore = metric("bytesReadFallback")
    val got = job
    val remote = remoteBytesSettled() - remoteBefore
    assert(remote > 0, "nothing read remotely")
    eventually(s"one-sided bytes (${metric("bytesReadOneSided") - before}) reported as Spark's remote bytes " +
      s"($remote)", 30) {
      metric("bytesReadOneSided") - before == remote
    }
    assert(metric("bytesReadFallback") == fallbackBefore, "Spark's fetch read remote bytes")
    (got, remote)
  }

  test("a shuffle ten times the HCCL buffer is read one-sidedly through windows: every remote byte, none staged") {
    val before = metric("bytesReadOneSided")
    val toHost = metric("bytesToHost")
    val remoteBefore = remoteBytesSettled()
    val fallbackBefore = metric("bytesReadFallback")
    // about 160 MB of incompressible map output over 12 map tasks, about two thirds of it read remotely (how much
    // depends on where the reduce tasks run) by 9 reduce tasks
    val rows = 160000
    def value(i: Int): Array[Byte] = {
      val b = new Array[Byte](1000)
      new java.util.Random(i).nextBytes(b)
      b
    }
    val got = sc.parallelize(0 until rows, 12)
      .map(i => (i % 900, value(i)))
      .groupByKey(9)
      .map { case (k, vs) => k -> vs.map(v => v.foldLeft(0L)(_ + _)).sum }
      .collect().toMap
    val want = (0 until rows).groupBy(_ % 900).map { case (k, is) =>
      k -> is.map(i => value(i).foldLeft(0L)(_ + _)).sum }
    assert(got == want)
    val remote = remoteBytesSettled() - remoteBefore
    assert(remote > 10L * 8 * 1024 * 1024, s"the shuffle's remote part ($remote bytes) is not 10x the buffer")
    eventually(s"one-sided bytes (${metric("bytesReadOneSided") - before}) reported as Spark's remote bytes " +
      s"($remote)", 30) {
      metric("bytesReadOneSided") - before == remote
    }
    assert(metric("bytesReadFallback") == fallbackBefore, "Spark's fetch read remote bytes")
    assert(metric("bytesToHost") - toHost >= remote, "every slice came to the host by a device-to-host copy")
    assert(metric("outputsCopied") == 0 && metric("outputsMapped") == 0, "a window publishes nothing at commit")
    // an owner counts what it served on its own threads: a later task's report carries it
    eventually("every window an owner served reported", 30) {
      sc.parallelize(1 to 12, 12).count()
      metric("windowsOpened") > 0 && metric("windowsServed") == metric("windowsOpened")
    }
    assert(metric("windowsPoisoned") == 0)
  }

  // the communicator path's default on every line (cross-line pass)
  test("groupByKey, sortByKey, cogroup, a skewed repartition and Kryo give the right answers through windows",
    CrossLine) {
    val before = metric("bytesReadOneSided")
    val groups = sc.parallelize(1 to 20000, 6).map(i => (i % 97, i)).groupByKey(5).mapValues(_.toSet).collect().toMap
    assert(groups == (1 to 20000).groupBy(_ % 97).map { case (k, v) => k -> v.toSet })
    val sorted = sc.parallelize((1 to 30000).reverse, 6).map(i => (i, i.toString)).sortByKey(true, 4).keys.collect()
    assert(sorted.toSeq == (1 to 30000))
    val left = sc.parallelize(1 to 5000, 4).map(i => (i % 300, i))
    val right = sc.parallelize(1 to 3000, 3).map(i => (i % 200, -i))
    val cogrouped = left.cogroup(right, 5).mapValues { case (a, b) => (a.sum, b.sum) }.collect().toMap
    assert(cogrouped == (0 until 300).map(k => k -> ((1 to 5000).filter(_ % 300 == k).sum,
      (1 to 3000).filter(_ % 200 == k).map(-_).sum)).toMap)
    // one hot key and many empty partitions
    val skewed = sc.parallelize(1 to 40000, 8).map(i => (if (i % 10 == 0) i else 7, 1L))
      .partitionBy(new org.apache.spark.HashPartitioner(64)).reduceByKey(_ + _).collect().toMap
    assert(skewed(7) == 36000 && skewed.size == 4001)
    val kryo = sc.parallelize(1 to 10000, 4).map(i => (i % 10, Array.fill(3)(i)))
    val kryoShuffled = new org.apache.spark.rdd.ShuffledRDD[Int, Array[Int], Array[Int]](kryo,
      new org.apache.spark.HashPartitioner(3)).setSerializer(new org.apache.spark.serializer.KryoSerializer(sc.getConf))
    assert(kryoShuffled.map(_._2.sum.toLong).sum() == (1 to 10000).map(3L * _).sum)
    assertReadOneSided(before)
  }

  test("several reduce tasks per executor read the same owners at once, each through its own windows: right " +
    "answers, every remote byte one-sided") {
    val maps = 12
    val perMap = 60000
    def key(m: Int, i: Int): Int = (m * 7919 + i) % 5003
    val expected = new Array[Long](5003)
    for (m <- 0 until maps; i <- 0 until perMap) expected(key(m, i)) += m.toLong * i
    val recorder = new TaskRecorder
    sc.addSparkListener(recorder)
    try {
      val (got, _) = allRemoteOneSided {
        // no map-side combine: every record crosses the shuffle
        sc.parallelize(0 until maps, maps)
          .flatMap(m => (0 until perMap).iterator.map(i => (key(m, i), m.toLong * i)))
          .groupByKey(12).mapValues(_.sum).collect().toMap
      }
      assert(got == expected.indices.map(k => k -> expected(k)).toMap)
      val most = recorder.mostAtOnceInResultStage(sc, sc.statusTracker.getJobIdsForGroup(null).max)
      assert(most.size == executors && most.values.forall(_ >= 2),
        s"reduce tasks at once per executor: $most (the test needs several readers per executor)")
      import scala.jdk.CollectionConverters._
      assert(recorder.failures.isEmpty, recorder.failures.asScala.mkString("\n"))
    } finally sc.removeSparkListener(recorder)
  }

  test("the HComm tab's summary: the communicator's epoch and members, and the stages' rows add up to the " +
    "executors' totals") {
    val (got, _) = allRemoteOneSided {
      sc.parallelize(1 to 20000, 4).map(i => (i % 100, 1L)).reduceByKey(_ + _, 3).collect().toMap
    }
    assert(got == (0 until 100).map(_ -> 200L).toMap)
    val summary = driverState.summary()
    val communicator = summary.communicator
    assert(communicator.epoch >= 1 && communicator.failure == null, s"communicator: $communicator")
    assert(communicator.members == driverState.communicatorMembers())
    // taken under one lock: every report adds its growth to one stage's row and moves its executor's latest values
    import scala.jdk.CollectionConverters._
    Seq("bytesToHost", "bytesReadOneSided", "communicatorsJoined", "windowsOpened").foreach { m =>
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
        org.apache.spark.SparkEnv.get.executorId -> internal.executor.ExecutorRuntime.current().communicatorDevice()
      }.collect().toMap
      joined.keySet == given.keySet
    }
    assert(joined == given)
  }

  test("a reduce task that stops reading early cancels its window, which still ends balanced") {
    val poisoned = metric("windowsPoisoned")
    val opened = metric("windowsOpened")
    // no aggregation: each reader takes one record of its first block and stops, mid-window
    val firsts = sc.parallelize(0 until 40000, 6).map(i => (i % 4, "x" * 500))
      .partitionBy(new org.apache.spark.HashPartitioner(3))
      .mapPartitions(it => it.take(1).map(_._1)).collect()
    assert(firsts.length == 3)
    val again = sc.parallelize(0 until 20000, 6).map(i => (i % 50, 1L)).reduceByKey(_ + _, 4).collect().toMap
    assert(again == (0 until 20000).groupBy(_ % 50).map { case (k, v) => k -> v.size.toLong })
    eventually("metrics reported")(metric("windowsOpened") > opened)
    assert(metric("windowsPoisoned") == poisoned, "a cancelled window poisoned its channel")
  }

  test("a reduce task that stops after a block of several slices cancels with a slice read ahead, still balanced") {
    val poisoned = metric("windowsPoisoned")
    // blocks of about 2 MB through 1 MiB slices: a reader hands its first block on after its third slice, reading
    // the next ahead, then stops; its Cancel names that slice, which the owner signals if it had not begun it
    val firsts = sc.parallelize(0 until 3, 3).flatMap { m =>
      val random = new scala.util.Random(m) // incompressible: the blocks stay 2 MB through shuffle compression
      (0 until 12000).map(i => (i % 3, Array.fill(500)(random.nextInt().toByte)))
    }
      .partitionBy(new org.apache.spark.HashPartitioner(3))
      .mapPartitions(it => it.take(1).map(_._1)).collect()
    assert(firsts.length == 3)
    val again = sc.parallelize(0 until 20000, 6).map(i => (i % 50, 1L)).reduceByKey(_ + _, 4).collect().toMap
    assert(again == (0 until 20000).groupBy(_ % 50).map { case (k, v) => k -> v.size.toLong })
    assert(metric("windowsPoisoned") == poisoned, "a window cancelled with a read ahead poisoned its channel")
  }

  test("an owner killed while its readers wait: a fetch failure naming it, the stage recomputed, the answer right") {
    val n = 200000
    reasons.clear()
    val (got, victim, _) = killOwnerMidReduce(sc, n)
    assert(got == (1 to n).groupBy(_ % 1000).map { case (k, v) => k -> v.map(_.toLong).sum })
    sc.listenerBus.waitUntilEmpty()
    import scala.jdk.CollectionConverters._
    val failed = reasons.asScala.collect { case f: org.apache.spark.FetchFailed if failedReading(victim)(f) => f }
    assert(failed.nonEmpty, s"no read of executor $victim failed: ${reasons.asScala.toSeq}")
    assert(failed.exists(_.message.contains("through a window")), failed.map(_.message).mkString("\n"))
    awaitReplaced(victim)
    eventually("a communicator of the executors left formed", 90) {
      Option(driverState.communicatorMembers()).exists(m => m.size() == executors && !m.contains(victim))
    }
    val after = sc.parallelize(1 to 30000, 6).map(i => (i % 100, 1L)).reduceByKey(_ + _, 5).collect().toMap
    assert(after.values.sum == 30000)
  }

  test("an executor killed mid-slot, as a reader and as an owner: its owners' exchanges fail instead of waiting for " +
    "its ACKs, its readers get fetch failures naming it, the old communicator retires, the answer is right") {
    // 12 MB per reduce partition in 6 blocks of 2 MB from 3 owners: each reader takes one record, then stops at the
    // gate while its read-ahead, held by the 1 MiB budget, keeps a window open with the owner's next slices staged
    // and signalled, the owner waiting for the ACK of a slot (mid-slot at both ends)
    val pids = executorPids(sc)
    reasons.clear()
    val (got, victim) = midReadStrike(sc, 72000, keys = 600, maps = 6, reduces = 6) { atGate =>
      val victim = atGate.head.executorId
      val process = ProcessHandle.of(pids(victim)).get()
      assert(process.destroyForcibly(), s"could not kill executor $victim")
      process.onExit().get(60, java.util.concurrent.TimeUnit.SECONDS)
      victim
    }
    val want = byteSums(72000, 600)
    assert(got == want)
    sc.listenerBus.waitUntilEmpty()
    import scala.jdk.CollectionConverters._
    val failed = reasons.asScala.collect { case f: org.apache.spark.FetchFailed if failedReading(victim)(f) => f }
    assert(failed.exists(_.message.contains("through a window")), s"no window read of executor $victim failed: " +
      reasons.asScala.toSeq)
    awaitReplaced(victim)
    eventually("a communicator of the executors left formed", 90) {
      Option(driverState.communicatorMembers()).exists(m => m.size() == executors && !m.contains(victim))
    }
    // an owner still waiting for the dead reader's ACKs would hold its exchange, and the old communicator with it
    eventually(s"the old communicators retired: communicatorsLive ${metric("communicatorsLive")}", 90) {
      sc.parallelize(1 to 12, 12).count()
      metric("communicatorsLive") == executors
    }
    val fallback = metric("bytesReadFallback")
    val after = sc.parallelize(1 to 30000, 6).map(i => (i % 100, 1L)).reduceByKey(_ + _, 5).collect().toMap
    assert(after.values.sum == 30000)
    assert(metric("bytesReadFallback") == fallback)
  }

  // last: it lowers the number of executors the application asks for
  test("graceful decommission: outputs that moved to another executor are streamed by it through windows, none " +
    "recomputed, none by Spark's fetch") {
    val n = 200000
    val rdd = sc.parallelize(1 to n, 6).map(i => (i % 1000, i.toLong)).reduceByKey(_ + _, 6)
    val want = (1 to n).groupBy(_ % 1000).map { case (k, v) => k -> v.map(_.toLong).sum }
    assert(rdd.collect().toMap == want)
    val shuffleId = rdd.dependencies.head.asInstanceOf[org.apache.spark.ShuffleDependency[_, _, _]].shuffleId
    val tracker = sc.env.mapOutputTracker.asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
    def owners: Seq[String] = tracker.shuffleStatuses(shuffleId).mapStatuses.toSeq.map(_.location.executorId)
    val victim = owners.head
    val fallback = metric("bytesReadFallback")
    reasons.clear()
    val backend = sc.schedulerBackend.asInstanceOf[org.apache.spark.scheduler.cluster.CoarseGrainedSchedulerBackend]
    assert(backend.decommissionExecutor(victim, org.apache.spark.scheduler.ExecutorDecommissionInfo("test"),
      adjustTargetNumExecutors = true))
    eventually(s"executor $victim's map outputs migrated: owners $owners", 120)(!owners.contains(victim))
    eventually(s"executor $victim gone", 120)(!liveExecutors(sc).contains(victim))
    eventually("a communicator of the executors left formed", 90) {
      Option(driverState.communicatorMembers()).exists(m => !m.contains(victim) && m.size() == liveExecutors().size)
    }
    val opened = metric("windowsOpened")
    assert(rdd.collect().toMap == want)
    sc.listenerBus.waitUntilEmpty()
    import scala.jdk.CollectionConverters._
    assert(!reasons.asScala.exists(_.isInstanceOf[org.apache.spark.FetchFailed]), "outputs were recomputed")
    eventually("windows opened for the moved outputs reported")(metric("windowsOpened") > opened)
    assert(metric("bytesReadFallback") == fallback)
  }
}
