package org.apache.spark.shuffle.hcomm

import scala.jdk.CollectionConverters._

import org.apache.spark.{FetchFailed, HashPartitioner, ShuffleDependency, SparkEnv, TaskKilled}
import org.apache.spark.rdd.ShuffledRDD
import org.apache.spark.serializer.KryoSerializer

/**
 * RDD shuffles on three executor JVMs, so that a reduce task reads from two owners: the answers of the HComm shuffle
 * against independently computed ones.
 */
class HcommShuffleSuite extends LocalClusterSuite {
  override protected def executors: Int = 3

  private def settled(): Unit = eventually("channels of finished stages destroyed") {
    metric("channelsLive") == 0 && metric("channelsCreated") > 0
  }

  /** Waits until every executor reported the destroy of the last job's reduce stage, with its counters. */
  private def lastStageReported(): Unit = {
    val stage = sc.statusTracker.getJobIdsForGroup(null).map(sc.statusTracker.getJobInfo(_).get.stageIds().max).max
    eventually(s"destroy reports of stage $stage") {
      driverState.destroyCallsExpected(stage, 0) == executors && driverState.destroyCallsOf(stage, 0) == executors
    }
  }

  /** Runs `body` with a TaskRecorder listening. */
  private def recording[T](body: TaskRecorder => T): T = {
    val tasks = new TaskRecorder
    sc.addSparkListener(tasks)
    try body(tasks) finally sc.removeSparkListener(tasks)
  }

  /** (i % 500, i) for i in 1..60000 in `maps` map tasks, to be summed by key into `reduces`; its map stage run. */
  private def mapped(maps: Int, reduces: Int)
      : (org.apache.spark.rdd.RDD[(Int, Long)], ShuffleDependency[Int, Long, Long]) = {
    val shuffled = sc.parallelize(1 to 60000, maps).map(i => (i % 500, i.toLong)).reduceByKey(_ + _, reduces)
    val dep = shuffled.dependencies.head.asInstanceOf[ShuffleDependency[Int, Long, Long]]
    sc.submitMapStage(dep).get()
    (shuffled, dep)
  }

  /** Collects the sums (asserting them right); returns the failed tasks of that job. */
  private def reduceRight(shuffled: org.apache.spark.rdd.RDD[(Int, Long)], tasks: TaskRecorder,
      what: String): Seq[TaskFailure] = {
    sc.setJobGroup(what, what)
    val got = try shuffled.collect().toMap finally sc.clearJobGroup()
    assert(got == sums60k)
    sc.listenerBus.waitUntilEmpty()
    tasks.failuresIn(sc, sc.statusTracker.getJobIdsForGroup(what).toSeq)
  }

  private lazy val sums60k = (1 to 60000).groupBy(_ % 500).map { case (k, v) => k -> v.map(_.toLong).sum }

  test("reduceByKey gives the same sums, read one-sidedly", CrossLine) {
    val before = metric("bytesReadOneSided")
    val got = sc.parallelize(1 to 200000, 8).map(i => (i % 1000, i.toLong)).reduceByKey(_ + _, 6).collect().toMap
    val want = (1 to 200000).groupBy(_ % 1000).map { case (k, v) => k -> v.map(_.toLong).sum }
    assert(got == want)
    settled()
    eventually("one-sided bytes reported")(metric("bytesReadOneSided") > before)
    assert(metric("bytesReadFallback") == 0)
  }

  test("a reduce task reading from two owners waits for one wave: no index round, not one per owner", CrossLine) {
    sc.parallelize(1 to 100, 3).map(i => (i % 7, i)).reduceByKey(_ + _, 3).count()
    lastStageReported() // this and every earlier stage's counters are in: the ones below move by this job alone
    val before = Seq("indexRounds", "readWaves", "readTasks", "readRoundTrips", "readTasksOverTwoRoundTrips",
      "publicationBatches").map(m => m -> metric(m)).toMap
    val mapExecutors = sc.collectionAccumulator[String]("map task executors")
    val got = sc.parallelize(0 until 12, 12).mapPartitions { it =>
      Thread.sleep(200) // keep every executor busy, so the map outputs spread over all three
      mapExecutors.add(SparkEnv.get.executorId)
      it.flatMap(p => (0 until 600).map(i => (i % 60, p.toLong)))
    }.reduceByKey(_ + _, 6).collect().toMap
    assert(got == (0 until 60).map(k => k -> 10L * (0 until 12).sum).toMap)
    assert(mapExecutors.value.asScala.toSet.size == executors, s"map outputs on ${mapExecutors.value}")
    lastStageReported()
    // each of the 6 reduce tasks reads a small map output from each of two owners: the outputs' offsets came with
    // their publication, so no index round (one per task until issue 29), and one wave of data (one per owner, i.e.
    // 12, before waves spanned owners)
    assert(metric("indexRounds") - before("indexRounds") == 0)
    assert(metric("readWaves") - before("readWaves") == 6)
    assert(metric("readTasks") - before("readTasks") == 6)
    assert(metric("readRoundTrips") - before("readRoundTrips") == 6)
    assert(metric("readTasksOverTwoRoundTrips") == before("readTasksOverTwoRoundTrips"))
    // the 12 outputs reached the driver in batches no map task waited for (one each at most)
    val batches = metric("publicationBatches") - before("publicationBatches")
    assert(batches >= 1 && batches <= 12, s"$batches batches")
    assert(metric("bytesReadFallback") == 0)
  }

  test("a reduce task whose blocks fill several chunks waits for at most two round trips, whatever its waves") {
    sc.parallelize(1 to 100, 3).map(i => (i % 7, i)).reduceByKey(_ + _, 3).count()
    lastStageReported()
    val before = Seq("readWaves", "readTasks", "readRoundTrips", "readTasksOverTwoRoundTrips", "bytesReadFallback")
      .map(m => m -> metric(m)).toMap
    // 6 map tasks write 1 MiB of random (incompressible) bytes per reduce partition: each of the 3 reduce tasks
    // reads about 4 MiB from the other executors, several 1 MiB chunks in waves of 1, 2, 4 ... chunks
    val digests = sc.parallelize(0 until 6, 6).flatMap { m =>
      (0 until 3).map { r =>
        val bytes = new Array[Byte](1 << 20)
        new java.util.Random(m * 3 + r).nextBytes(bytes)
        (r, bytes)
      }
    }.partitionBy(new HashPartitioner(3)).mapValues(b => java.util.Arrays.hashCode(b)).collect()
    val want = for (m <- 0 until 6; r <- 0 until 3) yield {
      val bytes = new Array[Byte](1 << 20)
      new java.util.Random(m * 3 + r).nextBytes(bytes)
      (r, java.util.Arrays.hashCode(bytes))
    }
    assert(digests.sorted.toSeq == want.sorted)
    lastStageReported()
    val tasks = metric("readTasks") - before("readTasks")
    assert(tasks == 3)
    assert(metric("readWaves") - before("readWaves") > tasks, "each task's bytes came in more than one wave")
    // the first two waves go out at once, every later one when the first landed: one or two round trips a task
    val roundTrips = metric("readRoundTrips") - before("readRoundTrips")
    assert(roundTrips >= tasks && roundTrips <= 2 * tasks, s"$roundTrips round trips")
    assert(metric("readTasksOverTwoRoundTrips") == before("readTasksOverTwoRoundTrips"))
    assert(metric("bytesReadFallback") == before("bytesReadFallback"))
  }

  test("groupByKey keeps every value", CrossLine) {
    val got = sc.parallelize(1 to 100000, 6).map(i => (i % 97, i)).groupByKey(5).mapValues(_.toSeq.sorted).collect()
      .toMap
    val want = (1 to 100000).groupBy(_ % 97).map { case (k, v) => k -> v.sorted }
    assert(got == want)
  }

  test("sortByKey orders every record", CrossLine) {
    val rnd = new scala.util.Random(7)
    val data = Seq.fill(50000)(rnd.nextInt())
    val got = sc.parallelize(data, 7).map(x => (x, 1)).sortByKey(numPartitions = 5).keys.collect().toSeq
    assert(got == data.sorted)
  }

  test("join and cogroup", CrossLine) {
    val left = sc.parallelize(1 to 20000, 4).map(i => (i % 500, i))
    val right = sc.parallelize(1 to 3000, 3).map(i => (i % 700, s"r$i"))
    val got = left.join(right, 4).count()
    val l = (1 to 20000).groupBy(_ % 500).map { case (k, v) => k -> v.size }
    val r = (1 to 3000).groupBy(_ % 700).map { case (k, v) => k -> v.size }
    assert(got == l.keySet.intersect(r.keySet).toSeq.map(k => l(k).toLong * r(k)).sum)
    val cg = left.cogroup(right, 3).mapValues { case (a, b) => (a.size, b.size) }.collect().toMap
    assert(cg.size == l.keySet.union(r.keySet).size)
    assert(cg.forall { case (k, (a, b)) => a == l.getOrElse(k, 0) && b == r.getOrElse(k, 0) })
  }

  test("repartition with a skewed key and many empty partitions", CrossLine) {
    // five keys, 80% of the records on one of them, spread over 64 partitions: most partitions are empty
    val data = sc.parallelize(1 to 60000, 4).map(i => if (i % 10 < 8) (0, i) else (i % 5, i))
    val got = data.partitionBy(new HashPartitioner(64)).mapPartitions(it => Iterator(it.size)).collect()
    assert(got.sum == 60000)
    assert(got.count(_ == 0) >= 59, "expected empty partitions")
    assert(got.max >= 48000, "expected the skewed key's partition")
  }

  test("a partition larger than the receive buffer streams through it", CrossLine) {
    // 16 MiB receive buffer; one reduce partition of ~40 MB
    val got = sc.parallelize(0 until 8, 8).flatMap(p => (0 until 5000).map(i => (i % 2, new Array[Byte](1000))))
      .partitionBy(new HashPartitioner(2)).mapPartitions(it => Iterator(it.map(_._2.length.toLong).sum)).collect()
    assert(got.sum == 8L * 5000 * 1000)
  }

  test("Kryo serializer", CrossLine) {
    val pairs = sc.parallelize(1 to 50000, 5).map(i => (i % 333, i.toLong))
    val shuffled = new ShuffledRDD[Int, Long, Long](pairs, new HashPartitioner(4))
      .setSerializer(new KryoSerializer(sc.getConf))
    val got = shuffled.reduceByKey(_ + _).collect().toMap
    val want = (1 to 50000).groupBy(_ % 333).map { case (k, v) => k -> v.map(_.toLong).sum }
    assert(got == want)
  }

  test("each stage's channels are destroyed in one call per executor, and nothing stays live", CrossLine) {
    sc.parallelize(1 to 1000, 4).map(i => (i % 10, 1)).reduceByKey(_ + _, 2).count()
    val job = sc.statusTracker.getJobIdsForGroup(null).max
    val stage = sc.statusTracker.getJobInfo(job).get.stageIds().max
    // each executor destroys its ends of the stage's channels in one call, and reports once per stage; the driver
    // knows how many reports to wait for
    lastStageReported()
    // the map stage reads no shuffle: it had no channels, and its end brings no report
    val mapStage = sc.statusTracker.getJobInfo(job).get.stageIds().min
    assert(driverState.destroyCallsExpected(mapStage, 0) == 0 && driverState.destroyCallsOf(mapStage, 0) == 0)
    // one channel per executor pair, both ends counted (per stage: a cumulative counter read before the job could
    // still miss the previous test's last reports)
    assert(driverState.channelsDestroyedOf(stage, 0) == executors * (executors - 1))
    settled()
  }

  test("100 consecutive small shuffles leave nothing behind") {
    for (i <- 1 to 100) {
      assert(sc.parallelize(1 to 100, 2).map(x => (x % 3, x)).reduceByKey(_ + _, 2).count() == 3)
    }
    settled() // channelsLive == 0: every created channel destroyed, in one read of the executors' reports
    assertEveryChunkFree()
  }

  test("fallback never: map outputs the driver's directory no longer lists and their owner cannot publish again are " +
      "a fetch failure, and Spark recomputes them", CrossLine) {
    recording { tasks =>
      // one map task, so one owner; the reducers on the other executors read it remotely
      val (shuffled, dep) = mapped(maps = 1, reduces = 6)
      // what the driver plugin does on hearing an executor was removed, possibly before Spark's map output tracker
      // and the reduce tasks' map statuses do: the directory forgets the owner's outputs (no executor has looked
      // them up yet, so none has them cached); and the owner cannot publish them again when a reader asks (as
      // after moved outputs, see MultiHostSuite): their files are gone
      driverState.shuffleRemoved(dep.shuffleId)
      val mapIds = sc.env.mapOutputTracker.asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
        .shuffleStatuses(dep.shuffleId).mapStatuses.map(_.mapId).toSeq
      val shuffleId = dep.shuffleId
      val deleted = sc.parallelize(1 to 4 * executors, 4 * executors).map { _ =>
        Thread.sleep(100)
        val resolver = SparkEnv.get.shuffleManager.shuffleBlockResolver
          .asInstanceOf[org.apache.spark.shuffle.IndexShuffleBlockResolver]
        mapIds.count(m => resolver.getDataFile(shuffleId, m).delete() & resolver.getIndexFile(shuffleId, m).delete())
      }.sum()
      assert(deleted == mapIds.size, s"the owner's files of $mapIds: $deleted deleted")
      val failures = reduceRight(shuffled, tasks, "the reduce of outputs the directory forgot")
      // before, each was an IllegalStateException with the same stale map statuses, until the job aborted
      assert(failures.nonEmpty, "no read failed: the directory was not consulted")
      // the owner's own reducers read its (deleted) files through Spark's local path and fail the attempt first;
      // HComm readers then stop as killed tasks of an ended attempt, or fail the fetch themselves: never a task error
      assert(failures.exists(_.reason.isInstanceOf[FetchFailed]), failures.mkString("\n"))
      assert(failures.forall(f => f.reason.isInstanceOf[FetchFailed] || (f.reason.isInstanceOf[TaskKilled] &&
        f.reason.asInstanceOf[TaskKilled].reason.contains("ended while this task read"))), failures.mkString("\n"))
      assert(metric("bytesReadFallback") == 0)
      settled()
      assertEveryChunkFree()
    }
  }

  test("bytes changed in the owner's registered memory: a fetch failure that says the block is corrupt and, by " +
      "Spark's checksums, where it went bad; Spark recomputes it") {
    recording { tasks =>
      val (shuffled, dep) = mapped(maps = 3, reduces = 4)
      val tracker = sc.env.mapOutputTracker.asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
      val mapIds = tracker.shuffleStatuses(dep.shuffleId).mapStatuses.map(_.mapId).toSet
      // executors send their publications in the background, after the map stage's end: read the directory once
      // it holds every output the tracker lists
      var published = Map.empty[Long, (String, Long)]
      eventually(s"the driver's directory holds every map output of shuffle ${dep.shuffleId} ($mapIds): " +
          published.keySet) {
        published = internal.driver.DriverProbe.published(driverState, dep.shuffleId)
        mapIds.subsetOf(published.keySet)
      }
      // partition 0 (at the start of each output's data) of every map output long enough to change 32 bytes inside
      // it, on at least two executors: so that wherever partition 0's reduce task runs (its own executor's block it
      // reads from Spark's file, not from registered memory) it reads a changed block from another executor
      val targets = tracker.shuffleStatuses(dep.shuffleId).mapStatuses.filter(_.getSizeForBlock(0) > 96).map { st =>
        val (owner, data) = published(st.mapId)
        assert(owner == st.location.executorId)
        owner -> data
      }.toSeq
      assert(targets.map(_._1).distinct.size >= 2, s"map outputs on fewer than two executors: $targets")
      val changedOn = sc.parallelize(1 to 12 * executors, 12 * executors).flatMap { _ =>
        Thread.sleep(100)
        val mine = targets.filter(_._1 == SparkEnv.get.executorId)
        // the arena copies, not Spark's files
        mine.foreach { case (_, data) => new com.sun.jna.Pointer(data).setMemory(32, 32, 0xA5.toByte) }
        mine.map(_._1)
      }.collect().toSet
      assert(changedOn == targets.map(_._1).toSet, s"no task ran on some owner: changed on $changedOn of $targets")
      val failures = reduceRight(shuffled, tasks, "the reduce of a corrupted map output")
      // Spark's own MetadataFetchFailedException (no owner: "Missing an output location") comes to a task of the
      // same stage attempt that starts after the first failures unregistered the outputs: not a read of HComm's
      val messages = failures.collect { case TaskFailure(_, _, _, f: FetchFailed, _) if f.bmAddress != null =>
        f.message }
      assert(messages.nonEmpty, s"no fetch failure: $failures")
      assert(messages.forall(m => m.contains("block is corrupt") && m.contains("NETWORK_ISSUE") &&
        m.contains("registered memory")), messages.mkString("\n"))
      settled()
      assertEveryChunkFree()
    }
  }
}
