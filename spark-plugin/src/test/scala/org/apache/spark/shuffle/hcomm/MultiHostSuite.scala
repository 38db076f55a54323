package org.apache.spark.shuffle.hcomm

import java.nio.file.{Files, Paths}
import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.sys.process._

import org.apache.spark.{FetchFailed, HashPartitioner, SparkContext, SparkEnv}
import org.hcomm.bridge.SoftHcomm

/**
 * The HComm shuffle between hosts: a standalone cluster of 2 hosts (network namespaces) x 2 executors
 * ([[MultiHostCluster]]), fallback `never`, and links that go down, flap, slow to a trickle, or a host that dies,
 * each in the middle of a job whose answer is checked against plain Scala. Needs root (to make the hosts): without
 * it every test is canceled with the reason; as root, a host that cannot be made fails the suite. The host death
 * runs last (the cluster has one host after it).
 */
class MultiHostSuite extends LocalClusterSuite {
  override protected def executors: Int = 4
  override protected def sharedContext: Boolean = false
  private implicit val ec: ExecutionContext = ExecutionContext.global
  private val readTimeoutSeconds = 3
  private var cluster: MultiHostCluster = _
  @volatile private var recorder = new TaskRecorder
  private val root = "id -u".!!.trim == "0"

  override def beforeAll(): Unit = {
    super.beforeAll()
    if (root) {
      MultiHostCluster.unavailable.foreach(why => throw new IllegalStateException(s"cannot make test hosts: $why"))
      cluster = new MultiHostCluster("t", hosts = 2, executorsPerHost = 2, Paths.get("target", "multi-host"))
      startOn(Seq.empty)
    }
  }

  /** Stops the current context (if any) and starts one on the cluster with `extra` settings. */
  private def startOn(extra: Seq[(String, String)], expected: Int = executors): Unit = {
    if (sc != null) {
      sc.stop()
      sc = null
    }
    sc = startContext(baseConf.setMaster(cluster.masterUrl)
      .set("spark.driver.host", cluster.rootAddress)
      .set("spark.driver.bindAddress", cluster.rootAddress)
      .set("spark.cores.max", executors.toString)
      .set("spark.executor.cores", "1")
      .set("spark.executor.memory", "1g")
      .set("spark.shuffle.hcomm.readTimeout", s"${readTimeoutSeconds}s")
      .set("spark.shuffle.hcomm.channelSetupTimeout", "5s")
      .set("spark.shuffle.hcomm.maxBytesInFlight", "1m")
      .set("spark.shuffle.hcomm.readChunkSize", "64k")
      .set("spark.shuffle.hcomm.receiveBufferSize", "8m")
      .setAll(extra), expected, seconds = 120)
    recorder = new TaskRecorder // stage ids start again at 0 in a new context
    sc.addSparkListener(recorder)
  }

  override def afterAll(): Unit = {
    try super.afterAll()
    finally {
      if (cluster != null) {
        cluster.close()
        assert(MultiHostCluster.leftovers("t").isEmpty, s"left behind: ${MultiHostCluster.leftovers("t")}")
        assert(cluster.survivors.isEmpty, s"processes of the cluster still alive: ${cluster.survivors}")
      }
    }
  }

  override protected def assertNoLocalCluster(): Unit = ()

  private def needsHosts(): Unit = if (!root) {
    cancel("needs root to create network namespaces (the test hosts); run as root, as CI does")
  }

  private val keyCount = 2000

  /**
   * (key, (i, 100 bytes)) for i in 1..n with key i % keys, shuffled into 8 partitions; with `mapGate`, each map task
   * waits at it first.
   */
  private def shuffled(n: Int, mapGate: TaskGate = null): org.apache.spark.rdd.RDD[(Int, (Long, Array[Byte]))] = {
    val keys = keyCount // the closures must not capture the suite
    val gate = Option(mapGate)
    sc.parallelize(1 to n, 8).mapPartitions { it => gate.foreach(_.pass()); it }
      .map(i => (i % keys, (i.toLong, Array.fill[Byte](100)(7))))
      .partitionBy(new HashPartitioner(8))
  }

  /**
   * Sums per key of a shuffled RDD (reading it); `slowEvery`: sleep 1 ms per that many records. A reduce task waits
   * at `readGate` with its reader open and nothing read (the reads go out at its first record), and at `endGate`
   * after its last record.
   */
  private def sums(rdd: org.apache.spark.rdd.RDD[(Int, (Long, Array[Byte]))], slowEvery: Int = 0,
      readGate: TaskGate = null, endGate: TaskGate = null): Map[Int, Long] = {
    val gates = (Option(readGate), Option(endGate))
    rdd.mapPartitions { it =>
      gates._1.foreach(_.pass())
      var seen = 0
      val out = scala.collection.mutable.HashMap.empty[Int, Long]
      it.foreach { case (k, (v, _)) =>
        seen += 1
        if (slowEvery > 0 && seen % slowEvery == 0) Thread.sleep(1)
        out(k) = out.getOrElse(k, 0L) + v
      }
      gates._2.foreach(_.pass())
      out.iterator
    }.collect().toMap
  }

  /** (key, sum of i) over i in 1..n with key i % keys, through a shuffle. */
  private def job(n: Int, slowEvery: Int = 0): Map[Int, Long] = sums(shuffled(n), slowEvery)

  private def expected(n: Int): Map[Int, Long] =
    (1 to n).groupBy(_ % keyCount).map { case (k, v) => k -> v.map(_.toLong).sum }

  /** `f` run on every live executor, by executor id. */
  private def perExecutor[T: scala.reflect.ClassTag](f: () => T): Map[String, T] = {
    val live = liveExecutors(sc).size
    var got = Map.empty[String, T]
    eventually(s"a task on every executor: $got", 60) {
      got = sc.parallelize(1 to 4 * live, 4 * live).map { _ =>
        Thread.sleep(100)
        SparkEnv.get.executorId -> f()
      }.collect().toMap
      got.size == live
    }
    got
  }

  /**
   * Starts `sums` of `shuffled(n, mapGate)`, timed, and returns once the whole cluster is in its reduce stage with
   * nothing read: the map tasks wait at `mapGate` until one is on each executor (so every executor, both hosts,
   * holds a map output that readers on the other host read across the link), and a reduce task of each executor
   * is at `readGate` with its reader open. A fault injected then strikes before any reduce read is issued; the
   * reads go out when the test opens `readGate`.
   */
  private def startAtReadGate(n: Int, mapGate: TaskGate, readGate: TaskGate): Future[(Map[Int, Long], Double)] = {
    val result = Future(timed(sums(shuffled(n, mapGate), readGate = readGate)))
    mapGate.awaitOnExecutors(executors, result)
    mapGate.open()
    readGate.awaitOnExecutors(executors, result)
    result
  }

  /** Attempt ids of the tasks that failed with a fetch failure so far. */
  private def fetchFailedAttempts: Set[Long] =
    recorder.failures.asScala.filter(_.reason.isInstanceOf[FetchFailed]).map(_.taskId).toSet

  private def fetchFailures: Int = recorder.failures.asScala.count(_.reason.isInstanceOf[FetchFailed])

  /** Nothing left live once the jobs are done: no channel, every receive-buffer chunk back. */
  /**
   * Nothing left live once the jobs are done: no channel by the plugin's count (the cluster's total, unless
   * executors died: their last reports stay in it) nor by soft HComm's own in any executor, and every
   * receive-buffer chunk back.
   */
  private def assertNothingLive(executorsDied: Boolean = false): Unit = {
    eventually("no channel live", 60) {
      if (executorsDied) perExecutor(() => internal.executor.ExecutorProbe.channelsLive()).values.forall(_ == 0)
      else metric("channelsLive") == 0
    }
    eventually("no soft HComm channel in any executor", 60) {
      perExecutor(() => SoftHcomm.counters().channels).values.forall(_ == 0)
    }
    assertEveryChunkFree(sc, 60)
  }

  private def timed[T](body: => T): (T, Double) = {
    val t0 = System.nanoTime()
    val r = body
    (r, (System.nanoTime() - t0) / 1e9)
  }

  test("2 hosts x 2 executors: one job reads across hosts through the soft NIC and within a host from shared memory") {
    needsHosts()
    val hosts = perExecutor(() => SparkEnv.get.blockManager.blockManagerId.host)
    assert(hosts.values.toSet == cluster.hostAddress.values.toSet, s"executors' hosts: $hosts")
    assert(hosts.values.groupBy(identity).values.forall(_.size == 2), s"two executors per host: $hosts")
    val cross0 = metric("bytesReadCrossHost")
    val within0 = metric("bytesReadWithinHost")
    val soft0 = perExecutor(() => MultiHostSuite.softBytes())
    assert(job(200000) == expected(200000))
    eventually("both kinds of one-sided bytes reported") {
      metric("bytesReadCrossHost") > cross0 && metric("bytesReadWithinHost") > within0
    }
    assert(metric("bytesReadFallback") == 0)
    val soft1 = perExecutor(() => MultiHostSuite.softBytes())
    // the soft NIC served what crossed hosts; what was read and not served by any soft NIC came from shared memory
    val served = soft1.keys.toSeq.map(e => soft1(e)._1 - soft0.get(e).map(_._1).getOrElse(0L)).sum
    val read = soft1.keys.toSeq.map(e => soft1(e)._2 - soft0.get(e).map(_._2).getOrElse(0L)).sum
    assert(served >= metric("bytesReadCrossHost") - cross0, s"soft NIC served $served")
    assert(read - served > 0, s"read $read, served by a soft NIC $served: nothing from shared memory")
    assertNothingLive()
  }

  test(s"a link down for longer than readTimeout mid-reduce: reads fail as fetch failures, Spark retries, the " +
      "answer is right") {
    needsHosts()
    val failures0 = fetchFailures
    TaskGate.using("map", "read") { case Seq(mapGate, readGate) =>
      val result = startAtReadGate(200000, mapGate, readGate)
      // every executor's reduce task has its reader open and has read nothing: the link goes down first, then the
      // reads are issued, and it stays down until a read timed out into a fetch failure
      cluster.link(2, up = false)
      val down = System.nanoTime()
      val (downSeconds, passedWhileDown) = try {
        readGate.open()
        eventually("a fetch failure with the link down", 120)(fetchFailures > failures0)
        ((System.nanoTime() - down) / 1e9, readGate.passed)
      } finally cluster.link(2, up = true)
      assert(Await.result(result, 5.minutes)._1 == expected(200000))
      assert(fetchFailures > failures0, s"no fetch failure while the link was down: ${recorder.failures}")
      // the reads that failed were issued with the link down, and it was down for longer than readTimeout
      assert(fetchFailedAttempts.exists(passedWhileDown), s"no fetch failure of a reduce task that began reading " +
        s"with the link down (${passedWhileDown.toSeq.sorted}): ${recorder.failures}")
      assert(downSeconds > readTimeoutSeconds, f"a fetch failure after $downSeconds%.1f s, within readTimeout")
    }
    assertNothingLive()
  }

  test("a link that flaps (down 1 s, up 2 s) for a whole job, and a link at 1 Mbit/s mid-reduce: right answers, " +
      "slowdown recorded") {
    needsHosts()
    val n = 200000
    // the same job three times; the gates, not slow tasks, put its reads where the link changes (a task issues its
    // waves at its first read, so slow consumption keeps no read in flight)
    val (clean, cleanSeconds) = timed(job(n))
    assert(clean == expected(n))
    @volatile var flapping = true
    val flaps = new java.util.concurrent.atomic.AtomicInteger() // times the link went down
    @volatile var passedWhileDown = Set.empty[Long]
    val (flapped, flapSeconds) = TaskGate.using("map", "read", "end") { case Seq(mapGate, readGate, endGate) =>
      // the reduce tasks' reads go out while the link is down (the flapper opens readGate at a down edge once a
      // reduce task is there, whose reads of the other host's outputs cross the link, and keeps the link down until
      // one passed), and no reduce task ends before the link went down twice (endGate)
      val flapper = Future {
        while (flapping) {
          cluster.link(2, up = false)
          if (flaps.incrementAndGet() >= 2) endGate.open()
          if (!readGate.isOpen && readGate.arrived.nonEmpty) {
            readGate.open()
            eventually("a reduce task past the gate", 60)(readGate.passed.nonEmpty)
            passedWhileDown = readGate.passed
          }
          Thread.sleep(1000)
          cluster.link(2, up = true)
          Thread.sleep(2000)
        }
      }
      try {
        val result = Future(timed(sums(shuffled(n, mapGate), readGate = readGate, endGate = endGate)))
        mapGate.awaitOnExecutors(executors, result)
        mapGate.open()
        Await.result(result, 5.minutes)
      } finally {
        flapping = false
        Await.result(flapper, 1.minute)
        cluster.link(2, up = true)
      }
    }
    assert(flapped == expected(n))
    assert(flaps.get >= 2, s"the link went down only $flaps times during the job")
    assert(passedWhileDown.nonEmpty, "no reduce task began reading while the link was down")

    val (trickleSeconds, passedWhileShaped) = TaskGate.using("map", "read") { case Seq(mapGate, readGate) =>
      val result = startAtReadGate(n, mapGate, readGate)
      // the reduce tasks' reads go out on the shaped link
      cluster.rate(2, "1mbit")
      val passed = try {
        readGate.open()
        Thread.sleep(6000)
        // the token bucket held packets back (it shaped real traffic, not an idle link)
        val stats = cluster.qdiscStats(2)
        assert("""overlimits (\d+)""".r.findAllMatchIn(stats).exists(_.group(1).toLong > 0), stats)
        readGate.passed
      } finally cluster.rate(2, "none")
      val (trickled, seconds) = Await.result(result, 5.minutes)
      assert(trickled == expected(n))
      (seconds, passed)
    }
    assert(passedWhileShaped.nonEmpty, "no reduce task began reading while the link was shaped")
    info(f"job: $cleanSeconds%.1f s on clean links, $flapSeconds%.1f s with host 2's link flapping ($flaps times " +
      f"down), $trickleSeconds%.1f s with 6 s of 1 Mbit/s on host 2's link mid-reduce; fetch failures so far " +
      s"$fetchFailures")
    assertNothingLive()
  }

  test("links delayed by the user-space forwarder (2 ms between the hosts): the delay measured, answers right and " +
      "read one-sidedly across it, no forwarder left") {
    needsHosts()
    // a block manager on host 2: the driver (root namespace) to it crosses host 2's link twice per round trip
    val addr = cluster.hostAddress(2)
    val port = sc.getExecutorMemoryStatus.keys.collectFirst { case hp if hp.startsWith(addr + ":") =>
      hp.substring(addr.length + 1).toInt }.getOrElse(fail(s"no block manager on $addr"))
    def connectMs(): Double = { // a TCP connect is one round trip
      val times = (1 to 21).map { _ =>
        val t0 = System.nanoTime()
        val socket = new java.net.Socket()
        try socket.connect(new java.net.InetSocketAddress(addr, port), 5000) finally socket.close()
        (System.nanoTime() - t0) / 1e6
      }
      times.sorted.apply(times.size / 2)
    }
    val plain = connectMs()
    cluster.hostAddress.keys.foreach(i => cluster.delay(i, "500us")) // per link and way: host to host 4 x 0.5 ms
    val (delayed, answers, seconds) = try {
      val d = connectMs()
      val cross0 = metric("bytesReadCrossHost")
      val (got, secs) = timed(job(200000))
      eventually("one-sided bytes across the delayed links")(metric("bytesReadCrossHost") > cross0)
      (d, got, secs)
    } finally cluster.hostAddress.keys.foreach(i => cluster.delay(i, "none"))
    assert(answers == expected(200000))
    // root to host: 2 x 0.5 ms more; the forwarder wakes in 50-70 us and the VM adds its own jitter
    assert(delayed - plain >= 0.8 && delayed - plain < 5, f"connect $plain%.3f ms, delayed $delayed%.3f ms")
    assert(scala.sys.process.Process(Seq("pgrep", "-f", "hcomm-delay-link")).! != 0, "a forwarder is left")
    info(f"connect to host 2: $plain%.3f ms plain, $delayed%.3f ms with the links delayed; the job $seconds%.1f s")
    assertNothingLive()
  }

  test("hostile processes on another host attack every executor's soft NIC (garbage, cut-short and oversized " +
      "frames, a wrong secret, a replayed handshake, out-of-range requests, idle connections): refused and logged, " +
      "the executors and their channels unaffected") {
    needsHosts()
    // the protocol attacks: soft HComm's hostile_peer (native-bridge's `make test` builds it), with the application's
    // real channel secret so that its valid handshakes and read requests get as far as a peer can
    val hostilePeer = Paths.get("..", "native-bridge", "target", "native", "hostile_peer").toAbsolutePath.normalize
    assert(Files.isExecutable(hostilePeer), s"$hostilePeer missing: native-bridge's make test builds it")
    val secret = sc.getConf.get(s"spark.plugins.internal.conf.${classOf[HcommShufflePlugin].getName}.channel.secret")
    val targets = perExecutor(() => internal.executor.ExecutorProbe.listenAddress()).values.map { case (h, p) => s"$h:$p" }
      .toSeq
    assert(targets.size == executors && targets.forall(!_.endsWith(":0")), s"soft NIC listeners: $targets")
    val log = Paths.get("target", "multi-host", "hostile-peer.log").toFile
    val before = liveExecutors(sc).toSet
    val failures0 = recorder.failures.size
    val attacker = cluster.startJvm(2, Seq(HostilePeer.getClass.getName.stripSuffix("$"), "600") ++ targets, log)
    val protocolLog = Paths.get("target", "multi-host", "hostile_peer.log").toFile
    // steps of up to 10 s: the flood above fills the listeners' backlogs, and a loaded host answers late
    val protocol = cluster.start(2, Seq(hostilePeer.toString, "--secret", secret, "--seconds", "15", "--step-ms",
      "10000") ++ targets, protocolLog)
    val (answers, seconds) = try {
      eventually("the attack under way", 60)(log.exists() && Files.readString(log.toPath).contains("hostile round"))
      // two jobs, the first with slow reduce tasks, so that channels are set up and read while the attack goes on
      val r = timed(Seq(job(200000, slowEvery = 8), job(100000)))
      // it floods for 600 s unless it failed; stopped below, once the jobs are done
      assert(attacker.isAlive, s"the attacker stopped before the jobs ended: ${Files.readString(log.toPath)}")
      r
    } finally {
      attacker.destroyForcibly()
      attacker.waitFor()
    }
    assert(protocol.waitFor(120, TimeUnit.SECONDS), "hostile_peer did not end")
    val protocolOut = Files.readString(protocolLog.toPath)
    assert(protocol.exitValue() == 0, s"hostile_peer exit ${protocol.exitValue()}:\n$protocolOut")
    assert(protocolOut.contains("all refused"), protocolOut)
    assert(answers == Seq(expected(200000), expected(100000)))
    // unaffected: the same executors, and no task of the two jobs failed
    assert(liveExecutors(sc).toSet == before, s"executors before ${before}, after ${liveExecutors(sc)}")
    assert(recorder.failures.size == failures0, s"tasks failed under attack: ${recorder.failures}")
    info(f"two jobs under attack: $seconds%.1f s; ${Files.readString(log.toPath).linesIterator.size} flood rounds; " +
      protocolOut.linesIterator.toSeq.last)
    // the executors say what they refused, naming the attacker's host (their stderr, in this application's
    // directories of the Workers)
    val attackerAddress = cluster.hostAddress(2)
    val refusals = Files.walk(Paths.get("target", "multi-host")).iterator().asScala
      .filter(p => p.getFileName.toString == "stderr" && p.toString.contains(sc.applicationId))
      .map(p => Files.readString(p).linesIterator.count(l => l.startsWith("hcomm-soft[") &&
        l.contains(s"the connection from $attackerAddress")))
      .sum
    assert(refusals > 0, s"no executor logged a refused connection from $attackerAddress")
    assertNothingLive()
  }

  test("graceful decommission with shuffle block migration: outputs moved to another executor are read from " +
      "their new owner one-sidedly, never from the old one, and not recomputed") {
    decommissionMovesOutputs(arena = false)
  }

  test("graceful decommission with writeTarget=arena: outputs held only in the arena are copied to Spark's files, " +
      "moved, read from their new owner one-sidedly and not recomputed") {
    decommissionMovesOutputs(arena = true)
  }

  /**
   * Decommissions the executor that holds a shuffle's first map output; checks its outputs moved and were read.
   * With `arena`, every output was first written into the arena only (no file: Spark could not move it unless the
   * plugin copied it out to Spark's files).
   */
  private def decommissionMovesOutputs(arena: Boolean): Unit = {
    needsHosts()
    startOn(Seq("spark.decommission.enabled" -> "true", "spark.storage.decommission.enabled" -> "true",
      "spark.storage.decommission.shuffleBlocks.enabled" -> "true",
      "spark.storage.decommission.rddBlocks.enabled" -> "false",
      "spark.storage.decommission.replicationReattemptInterval" -> "2s") ++ (if (arena) {
      Seq("spark.shuffle.hcomm.writeTarget" -> "arena", "spark.shuffle.readHostLocalDisk" -> "false")
    } else Nil))
    val n = 200000
    val rdd = shuffled(n)
    assert(sums(rdd) == expected(n))
    val shuffleId = rdd.dependencies.head.asInstanceOf[org.apache.spark.ShuffleDependency[_, _, _]].shuffleId
    val tracker = sc.env.mapOutputTracker.asInstanceOf[org.apache.spark.MapOutputTrackerMaster]
    def owners: Seq[String] = tracker.shuffleStatuses(shuffleId).mapStatuses.toSeq.map(_.location.executorId)
    val victim = owners.head
    if (arena) {
      eventually("every output reported written into the arena")(metric("outputsWrittenToArena") == owners.size)
      assert(metric("outputsOverflowed") == 0)
    }
    val mapTasks0 = recorder.tasksOf(0) // stage 0 wrote the shuffle: no task of it may run again
    val movedIn0 = metric("outputsPublishedLate")
    val backend = sc.schedulerBackend.asInstanceOf[org.apache.spark.scheduler.cluster.CoarseGrainedSchedulerBackend]
    assert(backend.decommissionExecutor(victim, org.apache.spark.scheduler.ExecutorDecommissionInfo("test"),
      adjustTargetNumExecutors = true))
    eventually(s"executor $victim's map outputs migrated: owners $owners", 120)(!owners.contains(victim))
    eventually(s"executor $victim gone", 120)(!liveExecutors(sc).contains(victim))
    assert(sums(rdd) == expected(n))
    assert(recorder.tasksOf(0) == mapTasks0, "the map stage ran again: outputs were recomputed, not read")
    eventually("the new owners published what moved to them")(metric("outputsPublishedLate") > movedIn0)
    assert(metric("bytesReadFallback") == 0)
    assertNothingLive()
  }

  test("dynamic allocation with shuffle tracking: executors that come and go join the shuffle, answers right") {
    needsHosts()
    startOn(Seq("spark.dynamicAllocation.enabled" -> "true",
      "spark.dynamicAllocation.shuffleTracking.enabled" -> "true",
      "spark.dynamicAllocation.minExecutors" -> "1", "spark.dynamicAllocation.initialExecutors" -> "1",
      "spark.dynamicAllocation.maxExecutors" -> executors.toString,
      "spark.dynamicAllocation.executorIdleTimeout" -> "2s",
      "spark.dynamicAllocation.schedulerBacklogTimeout" -> "1s"), expected = 1)
    // executors added, as Spark announces them (one that came during a job may already be gone again when it ends:
    // idle for 2 s without shuffle data)
    def added = recorder.executorsAdded.asScala.toSet
    val first = liveExecutors(sc).toSet
    val n = 200000
    /**
     * `sums` of `rdd`, its reduce tasks held at a gate until one of them is on an executor not in `old`: the
     * backlog brings executors while the job runs, and they read its shuffle.
     */
    def sumsJoinedBy(rdd: org.apache.spark.rdd.RDD[(Int, (Long, Array[Byte]))], old: Set[String]): Map[Int, Long] =
      TaskGate.using("read") { case Seq(readGate) =>
        val result = Future(sums(rdd, readGate = readGate))
        readGate.awaitArrivals(s"a reduce task on an executor added for the job (not one of $old)", 180, result)(
          _.exists(a => !old(a.executorId)))
        readGate.open()
        Await.result(result, 5.minutes)
      }
    val rdd = shuffled(n)
    assert(sumsJoinedBy(rdd, first) == expected(n))
    sc.listenerBus.waitUntilEmpty()
    val grown = added -- first
    assert(grown.nonEmpty, s"no executor was added: ${liveExecutors(sc)}")
    // the shuffle is cleaned: its executors go idle without shuffle data and are removed
    val shuffleId = rdd.dependencies.head.asInstanceOf[org.apache.spark.ShuffleDependency[_, _, _]].shuffleId
    sc.cleaner.get.doCleanupShuffle(shuffleId, blocking = true)
    eventually(s"executors removed when idle: ${liveExecutors(sc)}", 120)(liveExecutors(sc).size == 1)
    assert(sumsJoinedBy(shuffled(n), first ++ grown) == expected(n))
    sc.listenerBus.waitUntilEmpty()
    val regrown = added -- first -- grown
    assert(regrown.nonEmpty, s"no new executor joined the second job: added before $grown, live ${liveExecutors(sc)}")
    assert(metric("bytesReadFallback") == 0)
    eventually("no channel live", 60)(metric("channelsLive") == 0)
  }

  test("the communicator path with windows across hosts, RoCE as CANN's (late landing, no read fence, notifies as " +
      "flags): ten times the HCCL buffer, every remote byte one-sided, none staged") {
    needsHosts()
    startOn(Seq("spark.executorEnv.HCOMM_SOFT_SOC" -> "Ascend910B3",
      "spark.shuffle.hcomm.communicator.settle" -> "300ms",
      "spark.shuffle.hcomm.communicator.transfer" -> "window",
      "spark.shuffle.hcomm.communicator.bufferSize" -> "8m",
      "spark.shuffle.hcomm.communicator.sliceSize" -> "1m",
      "spark.shuffle.hcomm.communicator.slots" -> "2",
      "spark.executorEnv.HCOMM_SOFT_ROCE_LAND_DELAY_MS" -> "2",
      "spark.executorEnv.HCOMM_SOFT_ROCE_READ_FENCE" -> "0",
      "spark.executorEnv.HCOMM_SOFT_NOTIFY_FLAG" -> "1"))
    eventually("the communicator formed over both hosts", 90) {
      Option(driverState.communicatorMembers()).exists(_.size() == executors)
    }
    val paths0 = metric("bytesReadCrossHost") -> metric("bytesReadWithinHost")
    val rows = 160000
    def value(i: Int): Array[Byte] = {
      val b = new Array[Byte](1000)
      new java.util.Random(i).nextBytes(b)
      b
    }
    val got = sc.parallelize(0 until rows, 8).map(i => (i % 700, value(i))).groupByKey(8)
      .map { case (k, vs) => k -> vs.map(_.foldLeft(0L)(_ + _)).sum }.collect().toMap
    assert(got == (0 until rows).groupBy(_ % 700).map { case (k, is) => k -> is.map(value(_).foldLeft(0L)(_ + _)).sum })
    // executors report after their tasks: wait for the totals, not for the first reports. How the remote bytes
    // split between the hosts depends on where the reduce tasks ran; together they are ten buffers' worth, and
    // more than one buffer's crosses the hosts
    def read: (Long, Long) = (metric("bytesReadCrossHost") - paths0._1, metric("bytesReadWithinHost") - paths0._2)
    eventually(s"ten HCCL buffers read one-sidedly, one of them across hosts: $read (across, within)", 30) {
      sc.parallelize(1 to 16, 16).count()
      val (across, within) = read
      across > 8L * 1024 * 1024 && across + within > 10L * 8 * 1024 * 1024
    }
    assert(metric("bytesReadFallback") == 0 && metric("outputsCopied") == 0 && metric("windowsPoisoned") == 0)
  }

  test("a host dies mid-reduce (its processes killed, its link removed): Spark recomputes its outputs on the " +
      "survivors") {
    needsHosts()
    // the default context again (the tests before ran other settings); a dead host says nothing, so
    // Spark notices its executors are gone by their missing heartbeats: after spark.network.timeout
    startOn(Seq("spark.network.timeout" -> "15s", "spark.network.timeoutInterval" -> "2s",
      "spark.executor.heartbeatInterval" -> "2s"))
    val (answer, atGateOnHost2, passed, victims) = TaskGate.using("map", "read") { case Seq(mapGate, readGate) =>
      // host 2's executors hold map outputs and run reduce tasks, their readers open, when the host dies; host 1's
      // reduce tasks read its outputs after that
      val result = startAtReadGate(200000, mapGate, readGate)
      val atGate = readGate.arrived.filter(_.host == cluster.hostAddress(2))
      val victims = cluster.netnsPids(2)
      assert(victims.nonEmpty)
      cluster.killHost(2)
      readGate.open()
      (Await.result(result, 5.minutes)._1, atGate, readGate.passed, victims)
    }
    assert(answer == expected(200000))
    assert(atGateOnHost2.nonEmpty && !atGateOnHost2.exists(a => passed(a.attempt)),
      s"host 2's reduce tasks when it died: $atGateOnHost2 (passed the gate: $passed)")
    // the map stage (stage 0 of this context, 8 tasks) ran again for the dead host's outputs
    assert(recorder.tasksOf(0) > 8, s"map tasks started: ${recorder.tasksOf(0)}: nothing was recomputed")
    assert(!"ip netns list".!!.contains("hcxt-h2"), "host 2's namespace is still there")
    assert(victims.forall(p => !ProcessHandle.of(p).isPresent || !ProcessHandle.of(p).get.isAlive))
    eventually("host 2's executors removed", 120)(liveExecutors(sc).size == 2)
    // a second job runs on the survivors alone
    assert(job(50000) == expected(50000))
    assertNothingLive(executorsDied = true)
  }
}

object MultiHostSuite {
  /** This process's soft HComm bytes: (served by its soft NIC, read on every path). */
  def softBytes(): (Long, Long) = {
    val c = SoftHcomm.counters()
    (c.bytesServed, c.bytesRead)
  }
}
