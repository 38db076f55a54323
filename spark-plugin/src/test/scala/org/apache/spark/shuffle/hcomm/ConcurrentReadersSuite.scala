package org.apache.spark.shuffle.hcomm

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.spark.{ExceptionFailure, FetchFailed, HashPartitioner, TaskKilled}
import org.apache.spark.shuffle.hcomm.TestLine.SparkSession
import org.apache.spark.sql.functions.{count, sum}

/**
 * Executors with four task slots each, as in production: an executor's concurrent reduce tasks read the same owners
 * over the same channels, each on its own HComm thread, and share the executor's receive buffer (64 KiB reads, at
 * most 1 MiB in flight per task, so that every task reads in many waves while the others do). The other suites run
 * one task per executor. Here the outputs' offsets do not travel with their publication (`publishedIndexMaxBytes`
 * 0): readers read the owners' indexes first, so the index round, beside other tasks' waves, stays covered. The last
 * test kills an owner while the other executor's four tasks read from it, on a context of its own that reads over the
 * soft NIC's TCP path.
 */
class ConcurrentReadersSuite extends LocalClusterSuite {
  override protected def coresPerExecutor: Int = 4
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.shuffle.hcomm.readChunkSize" -> "64k",
    "spark.shuffle.hcomm.maxBytesInFlight" -> "1m",
    "spark.shuffle.hcomm.readTimeout" -> "10s",
    "spark.shuffle.hcomm.publishedIndexMaxBytes" -> "0",
    "spark.sql.adaptive.enabled" -> "false", // keep one reduce task per shuffle partition, so that tasks overlap
    "spark.sql.shuffle.partitions" -> "16")

  private implicit val ec: ExecutionContext = ExecutionContext.global

  private def withRecorder[T](body: TaskRecorder => T): T = {
    val recorder = new TaskRecorder
    sc.addSparkListener(recorder)
    try body(recorder)
    finally sc.removeSparkListener(recorder)
  }

  private def lastJob: Int = sc.statusTracker.getJobIdsForGroup(null).max

  private def assertReadConcurrently(recorder: TaskRecorder): Unit = {
    sc.listenerBus.waitUntilEmpty()
    val most = recorder.mostAtOnceInResultStage(sc, lastJob)
    assert(most.size == executors && most.values.forall(_ >= 2),
      s"reduce tasks at once per executor: $most (the test needs several readers per executor)")
  }

  /** Every created channel destroyed again, every receive-buffer chunk back. */
  private def assertNothingLeft(): Unit = {
    eventually("every channel destroyed")(metric("channelsLive") == 0 && metric("channelsCreated") > 0)
    assertEveryChunkFree()
  }

  test("four reduce tasks per executor read the same owners at once: right answers, every byte one-sided") {
    val before = metric("bytesReadOneSided")
    val roundsBefore = metric("indexRounds")
    val maps = 16
    val perMap = 100000
    def key(m: Int, i: Int): Int = (m * 7919 + i) % 5003
    val expected = new Array[Long](5003)
    for (m <- 0 until maps; i <- 0 until perMap) expected(key(m, i)) += m.toLong * i
    withRecorder { recorder =>
      // no map-side combine: all 1.6 M records cross the shuffle
      val got = sc.parallelize(0 until maps, maps)
        .flatMap(m => (0 until perMap).iterator.map(i => (key(m, i), m.toLong * i)))
        .groupByKey(16).mapValues(_.sum).collect().toMap
      assert(got == expected.indices.map(k => k -> expected(k)).toMap)
      assertReadConcurrently(recorder)
      assert(recorder.failures.isEmpty, recorder.failures.asScala.mkString("\n"))
    }
    assertReadOneSided(before)
    assertNothingLeft() // the stage's counters are in
    assert(metric("indexRounds") > roundsBefore, "offsets read from the owners' indexes")
  }

  test("a SQL aggregation with sixteen concurrent reducers gives the same sums and counts, read one-sidedly") {
    val before = metric("bytesReadOneSided")
    val spark = SparkSession.builder().sparkContext(sc).getOrCreate()
    try {
      val n = 2000000L
      withRecorder { recorder =>
        val got = spark.range(0, n, 1, 16).selectExpr("id % 10007 AS k", "id AS v")
          .groupBy("k").agg(count("*"), sum("v")).collect()
          .map(r => r.getLong(0) -> (r.getLong(1), r.getLong(2))).toMap
        val expected = (0L until n).groupBy(_ % 10007).map { case (k, vs) => k -> (vs.size.toLong, vs.sum) }
        assert(got == expected)
        assertReadConcurrently(recorder)
        assert(recorder.failures.isEmpty, recorder.failures.asScala.mkString("\n"))
      }
    } finally {
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    }
    assertReadOneSided(before)
    assertNothingLeft()
  }

  // Before soft HComm kept read errors per thread (7ea5713) this failed about every other run with a wrong answer
  // (a key with 240 of its 480 records): of the four tasks that read the dead owner's index at once, one was told
  // its read had landed and went on with whatever its chunk held.
  test("an owner killed under four concurrent readers: each reader fails on its own read (none takes another's " +
    "error and decodes bytes that never came), and the job's answer is right") {
    // over shared memory a dead owner's registered memory stays readable (the reader's mapping outlives it): read
    // through the soft NIC's TCP path, where every read after the owner's death fails
    sc.stop()
    assertNoLocalCluster()
    sc = startContext(baseConf.set("spark.executorEnv.HCOMM_SOFT_FORCE_TCP", "1"))
    val pids = executorPids()
    val maps = 8
    val perMap = 60000
    def payload(m: Int, i: Int): String = s"$m:$i:" + "x" * 100
    val shuffled = sc.parallelize(0 until maps, maps)
      .flatMap(m => (0 until perMap).iterator.map(i => (i % 1000, payload(m, i))))
      .partitionBy(new HashPartitioner(8)) // no aggregation: a reduce task reads its blocks as it consumes them
    assert(shuffled.count() == maps.toLong * perMap) // the map outputs now live in both executors
    val expected = (for (m <- 0 until maps; i <- 0 until perMap) yield (i % 1000, payload(m, i)))
      .groupBy(_._1).map { case (k, rs) => k -> (rs.size.toLong, rs.map(_._2.hashCode.toLong).sum) }

    val victim = "1"
    val survivor = pids.keys.find(_ != victim).get
    withRecorder { recorder => TaskGate.using("read") { case Seq(gate) =>
      // the result stage reads the shuffle (each key in one partition); its tasks wait at the gate with their readers
      // open (channels READY, indexes read) and nothing else read. Once four are there on the other executor, the
      // owner is stopped, the gate opened, and the owner killed once those four readers are past it and their read
      // requests wait unanswered in its sockets: it dies with their reads in flight
      val job = Future(shuffled.mapPartitions { it =>
        gate.pass()
        val perKey = scala.collection.mutable.Map.empty[Int, (Long, Long)]
        it.foreach { case (k, p) =>
          val (c, h) = perKey.getOrElse(k, (0L, 0L))
          perKey(k) = (c + 1, h + p.hashCode)
        }
        perKey.iterator
      }.collect().toMap)
      val readers = gate.awaitArrivals("four reduce tasks on the other executor", 60, job)(
        _.count(_.executorId == survivor) >= 4).filter(_.executorId == survivor).map(_.attempt).toSet
      signal(pids(victim), "STOP")
      try {
        gate.open()
        eventually("the four readers past the gate")(readers.subsetOf(gate.passed))
        eventually("read requests unanswered at the stopped owner")(
          ConcurrentReadersSuite.unreadFrom(pids(victim), pids(survivor)) > 0)
      } finally assert(ProcessHandle.of(pids(victim)).get().destroyForcibly(), s"could not kill executor $victim")
      assert(Await.result(job, 180.seconds) == expected)
      sc.listenerBus.waitUntilEmpty()

      val survivors = recorder.failures.asScala.toSeq.filter(_.executorId != victim)
      // a read that failed but was reported as landed leaves whatever the chunk held: a corrupt block or a
      // non-monotonic index (fetch failures saying so), or an exception while decoding
      def garbage(message: String): Boolean = message.contains("corrupt") || message.contains("not monotonic")
      val readFailures = survivors.map(_.reason).collect {
        case f: FetchFailed if f.bmAddress != null && f.bmAddress.executorId == victim && !garbage(f.message) => f
        case k: TaskKilled if k.reason.contains("ended while this task read") && !garbage(k.reason) => k
      }
      // Spark's own answer to the loss: once the dead owner's outputs are unregistered, a task of the failed stage
      // attempt that starts later (on the owner's replacement, if it came up in time) finds no location for them
      val outputsLost = survivors.map(_.reason).collect {
        case f: FetchFailed if f.bmAddress == null && f.message.contains("Missing an output location") => f
      }
      // each failed reader on a surviving executor failed because of the dead owner, on its own read
      assert(readFailures.size + outputsLost.size == survivors.size,
        s"failures on surviving executors other than reads of the dead owner:\n${survivors.mkString("\n")}")
      assert(readFailures.size >= 2, s"concurrent readers of the dead owner that failed: ${survivors.mkString("\n")}")
      assert(!recorder.failures.asScala.exists(_.reason.isInstanceOf[ExceptionFailure]),
        recorder.failures.asScala.mkString("\n"))
    }}
    assert(metric("bytesReadFallback") == 0)
    awaitReplaced(victim)
    assertEveryChunkFree()
  }
}

object ConcurrentReadersSuite {
  private final case class Socket(local: String, remote: String, unread: Long, inode: Long)

  /** TCP sockets of `pid`'s network namespace (/proc/<pid>/net/tcp and tcp6). */
  private def sockets(pid: Long): Seq[Socket] = Seq("tcp", "tcp6").flatMap { f =>
    java.nio.file.Files.readAllLines(java.nio.file.Paths.get(s"/proc/$pid/net/$f")).asScala.drop(1).map { l =>
      val c = l.trim.split("\\s+") // sl local remote st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
      Socket(c(1), c(2), java.lang.Long.parseLong(c(4).split(':')(1), 16), c(9).toLong)
    }
  }

  /** Inodes of the sockets `pid` has open. */
  private def socketInodes(pid: Long): Set[Long] =
    Option(new java.io.File(s"/proc/$pid/fd").listFiles()).toSeq.flatten.flatMap { fd =>
      scala.util.Try(java.nio.file.Files.readSymbolicLink(fd.toPath).toString).toOption
        .collect { case l if l.startsWith("socket:[") => l.stripPrefix("socket:[").stripSuffix("]").toLong }
    }.toSet

  /** Bytes that `peer` sent `owner` over TCP and `owner` has not read yet (two processes of one namespace). */
  def unreadFrom(owner: Long, peer: Long): Long = {
    val all = sockets(owner)
    val (mine, theirs) = (socketInodes(owner), socketInodes(peer))
    val peerEnds = all.filter(s => theirs(s.inode)).map(_.local).toSet
    all.filter(s => mine(s.inode) && peerEnds(s.remote)).map(_.unread).sum
  }
}
