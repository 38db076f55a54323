package org.apache.spark.shuffle.hcomm

import java.lang.reflect.InvocationTargetException
import java.util.concurrent.{ConcurrentLinkedQueue, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.spark.{HashPartitioner, SparkConf, SparkContext, SparkEnv}
import org.apache.spark.deploy.LocalSparkCluster
import org.apache.spark.scheduler._
import org.apache.spark.shuffle.hcomm.internal.compat.StartupOrder

/** Records why executors were removed; named in `spark.extraListeners`, so it sees even the first executor. */
class ExecutorLossRecorder extends SparkListener {
  override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit = ExecutorLossRecorder.reasons.add(e.reason)
}

object ExecutorLossRecorder {
  val reasons = new ConcurrentLinkedQueue[String]()
}

/**
 * What the HComm shuffle does when things go wrong: an executor dies in the middle of a reduce stage, the HComm
 * library cannot load (with fallback `auto` and `never`), and the configuration is bad. Each test makes (and stops)
 * its own context; the configuration tests fail at the driver before any executor starts.
 */
class FailureSuite extends LocalClusterSuite {
  override protected def sharedContext: Boolean = false

  private implicit val ec: ExecutionContext = ExecutionContext.global
  private val bogusLibrary = "/nonexistent/libhcomm.so"

  private def withContext[T](conf: SparkConf, hcommRegistered: Boolean = true, expected: Int = executors)(
      body: SparkContext => T): T = {
    sc = startContext(conf, expected, hcommRegistered = hcommRegistered)
    val result = try body(sc)
    finally {
      sc.stop()
      sc = null
    }
    assertNoLocalCluster()
    result
  }

  private def sums(n: Int, keys: Int): Map[Int, Long] = (1 to n).groupBy(_ % keys).map { case (k, v) =>
    k -> v.map(_.toLong).sum
  }

  // ---- bad configuration: the driver refuses to start ----

  /**
   * The error a SparkContext fails with at start-up. On Spark 4 the plugin's driver component validates first and its
   * error is the one thrown; on Spark 3.5 SparkEnv creates the shuffle manager first, by reflection, so the manager's
   * error arrives wrapped in an InvocationTargetException (what spark-submit prints as "Caused by: ...").
   */
  private def startupError(key: String, value: String): IllegalArgumentException = {
    val t0 = System.nanoTime()
    val thrown = intercept[Exception](new SparkContext(baseConf.set(key, value)))
    assert(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) < 30, "startup error was not immediate")
    assert(SparkContext.getActive.isEmpty, "a SparkContext is still active after the failed start")
    val e = thrown match {
      case w: InvocationTargetException if StartupOrder.MANAGER_BEFORE_PLUGINS => w.getCause
      case other => other
    }
    assert(e.isInstanceOf[IllegalArgumentException], s"not the configuration error: $thrown")
    e.asInstanceOf[IllegalArgumentException]
  }

  test("a bad value fails the SparkContext at startup, naming the key, the value and the allowed values", CrossLine) {
    val e = startupError("spark.shuffle.hcomm.readStrategy", "bogus")
    assert(e.getMessage.contains("spark.shuffle.hcomm.readStrategy"), e.getMessage)
    assert(e.getMessage.contains("'bogus'"), e.getMessage)
    assert(e.getMessage.contains("onThread, nbiFence"), e.getMessage)
  }

  test("an unknown spark.shuffle.hcomm key fails the SparkContext at startup, naming it and the known keys",
      CrossLine) {
    val e = startupError("spark.shuffle.hcomm.nope", "1")
    assert(e.getMessage.contains("spark.shuffle.hcomm.nope"), e.getMessage)
    assert(e.getMessage.contains("spark.shuffle.hcomm.readStrategy"), e.getMessage)
    assert(e.getMessage.contains("spark.shuffle.hcomm.fallback"), e.getMessage)
  }

  // ---- the HComm library cannot load ----

  test("library unavailable, fallback auto: Spark's fetch gives the right answer and the driver counts its bytes",
      CrossLine) {
    val conf = baseConf.set("spark.shuffle.hcomm.libraryPath", bogusLibrary).set("spark.shuffle.hcomm.fallback", "auto")
    fetchedBySpark(conf, "an executor registered an HComm endpoint without a library")
  }

  /**
   * On a context of `conf` where no executor can open HComm (`why` if one registered an endpoint), a shuffle's answer
   * is right and every remote byte was fetched by Spark's transfer, counted by the driver as fallback bytes.
   */
  private def fetchedBySpark(conf: SparkConf, why: String): Unit = {
    withContext(conf, hcommRegistered = false) { c =>
      assert(driverState.registeredExecutors() == 0, why)
      val tasks = new TaskRecorder
      c.addSparkListener(tasks)
      val got = c.parallelize(1 to 100000, 6).map(i => (i % 1000, i.toLong)).reduceByKey(_ + _, 4).collect().toMap
      assert(got == sums(100000, 1000))
      c.listenerBus.waitUntilEmpty()
      assert(tasks.remoteBytes.get > 0, "nothing was read remotely: nothing to prove")
      eventually(s"fallback bytes == Spark's remoteBytesRead (${tasks.remoteBytes.get})") {
        metric("bytesReadFallback") == tasks.remoteBytes.get
      }
      assert(metric("bytesReadOneSided") == 0)
      assert(metric("channelsCreated") == 0)
    }
  }

  test("library unavailable, fallback never: executors cannot start, naming spark.shuffle.hcomm.fallback", CrossLine) {
    executorsCannotStart(bogusLibrary, bogusLibrary)
  }

  test("an install failing the doctor's quick checks (functions missing), fallback never: executors stop with the " +
      "doctor's line") {
    // a real shared library that loads but exports one HComm function of the 11 every strategy needs
    val dir = java.nio.file.Files.createTempDirectory("hcomm-fake-install")
    try {
      val c = dir.resolve("partial.c")
      java.nio.file.Files.writeString(c, "int HcommEndpointCreate(const void *d, void **h) { return 5; }\n")
      val lib = dir.resolve("libhcomm_partial.so").toString
      val gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", c.toString, "-o", lib).inheritIO().start()
      assert(gcc.waitFor() == 0, "gcc failed")
      executorsCannotStart(lib, "FAIL symbols", lib, "HcommEndpointDestroy", "which the endpoint API (api=endpoint, both read strategies) needs")
    } finally {
      dir.toFile.listFiles().foreach(_.delete())
      dir.toFile.delete()
    }
  }

  // ---- an Atlas A2 host: soft HComm behaves as that product is documented to ----

  /**
   * Executors that run soft HComm's Atlas A2 profile (HCOMM_SOFT_SOC), as on an Ascend910B host, made to use the
   * endpoint API (`api=auto` would take the communicator path there: CommunicatorWindowSuite).
   */
  private def onAtlasA2(conf: SparkConf): SparkConf = conf.set("spark.executorEnv.HCOMM_SOFT_SOC", "Ascend910B3")
    .set("spark.shuffle.hcomm.api", "endpoint")

  test("an Atlas A2 host on the endpoint API (soft HComm's A2 profile), fallback auto: the endpoint API is refused " +
      "there, so Spark's fetch reads every remote block and the answer is right") {
    fetchedBySpark(onAtlasA2(baseConf.set("spark.shuffle.hcomm.fallback", "auto")),
      "an executor registered an endpoint on an A2 profile")
  }

  test("an Atlas A2 host on the endpoint API, fallback never: executors cannot start, naming the refused call and " +
      "the key") {
    executorsCannotStart(null, Seq("spark.executorEnv.HCOMM_SOFT_SOC" -> "Ascend910B3",
      "spark.shuffle.hcomm.api" -> "endpoint"), "HcommEndpointCreate", "NOT_SUPPORT", "Ascend910B3",
      "spark.shuffle.hcomm.api=communicator")
  }

  /** With fallback never and `library`, the one executor cannot start; its loss reason names the key and `phrases`. */
  private def executorsCannotStart(library: String, phrases: String*): Unit =
    executorsCannotStart(library, Seq.empty, phrases: _*)

  /** The same, with `extra` settings (and the bundled library when `library` is null). */
  private def executorsCannotStart(library: String, extra: Seq[(String, String)], phrases: String*): Unit = {
    ExecutorLossRecorder.reasons.clear()
    val conf = baseConf.setMaster("local-cluster[1,1,1024]")
      .set("spark.shuffle.hcomm.fallback", "never")
      .setAll(extra)
      .set("spark.extraListeners", classOf[ExecutorLossRecorder].getName)
      .set("spark.deploy.maxExecutorRetries", "1") // the local Master gives up on the application at once
    if (library != null) conf.set("spark.shuffle.hcomm.libraryPath", library)
    val c = new SparkContext(conf)
    try {
      val job = Future(c.parallelize(1 to 100, 2).map(i => (i % 3, i)).reduceByKey(_ + _).count())
      eventually(s"an executor lost with the reason naming the key and $phrases (seen: ${ExecutorLossRecorder.reasons})",
          60) {
        ExecutorLossRecorder.reasons.asScala.exists(r => r.contains("spark.shuffle.hcomm.fallback") &&
          r.contains("never") && phrases.forall(r.contains))
      }
      val e = intercept[Exception](Await.result(job, 60.seconds))
      assert(!e.isInstanceOf[java.util.concurrent.TimeoutException], "the job hangs instead of failing")
      eventually("the application stopped", 30)(c.isStopped)
    } finally {
      c.stop()
      // the scheduler backend stops a dead application in another thread: wait until it is done
      eventually("the SparkContext fully stopped", 30)(SparkContext.getActive.isEmpty)
      // Spark's stop of an application its Master removed fails ("Could not find AppClient") before it stops the
      // local cluster, whose Master and Workers would then live until the JVM exits: stop it here
      LocalSparkCluster.get.foreach(_.stop())
    }
  }

  // ---- an executor dies ----

  test("an executor killed during the reduce stage: Spark retries and the answer is right") {
    // a short read timeout, so that a reduce task starved of receive buffer fails fast instead of after 60 s
    withContext(baseConf.set("spark.shuffle.hcomm.readTimeout", "10s")) { c =>
      val removed = new ConcurrentLinkedQueue[String]()
      val tasks = new TaskRecorder {
        override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit = removed.add(e.executorId)
      }
      c.addSparkListener(tasks)
      val (got, victim, readers) = killOwnerMidReduce(c, 200000)
      assert(got == sums(200000, 1000))
      c.listenerBus.waitUntilEmpty()
      assert(removed.asScala.toSeq.contains(victim), s"executor $victim was not removed: $removed")
      assert(!tasks.failures.isEmpty, "no task failed: the kill did not hit the job")
      // the other executor's reduce task, at the gate when the victim died, read its outputs and failed
      assert(readers.nonEmpty && readers.forall(r => tasks.failures.asScala.exists(f =>
        f.taskId == r.attempt && failedReading(victim)(f.reason))),
        s"readers of the dead executor's outputs: $readers; failures: ${tasks.failures}")
      assert(metric("bytesReadFallback") == 0)
      // once the relaunched executor is back with its HComm endpoint (so the next shuffle has a remote side): the
      // reads that failed with the dead executor gave their receive buffer back, and a later shuffle on the
      // surviving and relaunched executors runs one-sidedly without a single failed task
      // the job returned once every partition had one successful attempt; tasks of other attempts may still run,
      // and each must end without waiting out a timeout of its own (a task still running holds an executor's only
      // core and the receive buffer chunks it borrowed)
      val drainStart = System.nanoTime()
      eventually(s"tasks left running by the job to end: ${tasks.runningNow}", 30)(tasks.runningNow.isEmpty)
      info(s"tasks left running by the job ended within ${(System.nanoTime() - drainStart) / 1000000} ms")
      awaitReplaced(victim, c)
      assertEveryChunkFree(c)
      val before = metric("bytesReadOneSided")
      c.setJobGroup("after-kill", "the shuffle after the kill")
      assert(c.parallelize(1 to 10000, 4).map(i => (i % 7, 1)).reduceByKey(_ + _, 3).collect().toMap ==
        (1 to 10000).groupBy(_ % 7).map { case (k, v) => k -> v.size })
      c.clearJobGroup()
      c.listenerBus.waitUntilEmpty()
      val failures = tasks.failuresIn(c, c.statusTracker.getJobIdsForGroup("after-kill").toSeq)
      assert(failures.isEmpty, failures.mkString("\n"))
      assertReadOneSided(before)
    }
  }

  // ---- an owner stops answering ----

  test("an owner that stops answering mid-stage, read with another in one batch: the fetch failure names it, the " +
    "reader's chunks are retired until the attempt's channels are destroyed, and the job completes once it answers " +
    "again") {
    // three executors, so a reduce task reads two owners in one batch; the soft NIC's TCP path (over shared memory a
    // stopped process's memory stays readable); read and channel setup timeouts short, but not so short that a healthy
    // owner answering late on a loaded host would be blamed
    val conf = baseConf.setMaster("local-cluster[3,1,1024]")
      .set("spark.shuffle.hcomm.readTimeout", "6s")
      .set("spark.shuffle.hcomm.channelSetupTimeout", "6s")
      .set("spark.executorEnv.HCOMM_SOFT_FORCE_TCP", "1")
    withContext(conf, expected = 3) { c => TaskGate.using("map", "read") { case Seq(mapGate, readGate) =>
      val pids = executorPids(c)
      val mapExecutors = c.collectionAccumulator[String]("map task executors")
      val shuffled = c.parallelize(0 until 12, 12).mapPartitions { it =>
        mapGate.pass() // until a map task is on each executor
        mapExecutors.add(SparkEnv.get.executorId)
        it.flatMap(p => (0 until 600).map(i => (i % 60, p.toLong)))
      }.partitionBy(new HashPartitioner(6)) // no aggregation: a reduce task reads its data as it is consumed
      val counted = Future(shuffled.count())
      mapGate.awaitOnExecutors(3, counted)
      mapGate.open()
      assert(Await.result(counted, 120.seconds) == 7200) // the map outputs now live in all three executors
      assert(mapExecutors.value.asScala.toSet.size == 3, s"map outputs on ${mapExecutors.value}")

      val resultStage = new AtomicInteger(-1)
      val named = new ConcurrentLinkedQueue[(String, String, Long)]() // (reader, owner named, reader's attempt)
      val killed = new ConcurrentLinkedQueue[String]() // reasons of tasks killed as zombies of the failed attempt
      c.addSparkListener(new SparkListener {
        override def onJobStart(e: SparkListenerJobStart): Unit = resultStage.set(e.stageIds.max)
        override def onTaskEnd(e: SparkListenerTaskEnd): Unit = e.reason match {
          case f: org.apache.spark.FetchFailed if f.bmAddress != null =>
            named.add((e.taskInfo.executorId, f.bmAddress.executorId, e.taskInfo.taskId))
          case k: org.apache.spark.TaskKilled => killed.add(s"${e.taskInfo.executorId}: ${k.reason}")
          case _ =>
        }
      })
      val victim = "1"
      // the map stage is skipped; each reduce task's channels are READY and its index read before its closure runs,
      // which waits at the gate before its first read: the owner is stopped once a reduce task of each executor is
      // there, then the reads go out
      val job = Future(shuffled.mapPartitions { it =>
        readGate.pass()
        it
      }.collect())
      readGate.awaitOnExecutors(3, job)
      signal(pids(victim), "STOP")
      val passedWhileStopped = try {
        readGate.open()
        eventually("a fetch failure", 60)(!named.isEmpty)
        // the stopped owner's own reader, at the gate, resumes once the other two executors destroyed their ends of
        // the failed attempt's channels: its reads over them fail then (checked below)
        eventually("the other executors' ends of the failed attempt's channels destroyed", 60)(
          driverState.destroyCallsOf(resultStage.get, 0) >= 2)
        readGate.passed
      } finally signal(pids(victim), "CONT")
      val got = Await.result(job, 180.seconds)
      assert(got.length == 7200)
      assert(got.groupBy(_._1).map { case (k, vs) => k -> vs.map(_._2).sum } == (0 until 60).map(k => k -> 10L * (0 until 12).sum).toMap)
      c.listenerBus.waitUntilEmpty()
      // every fetch failure names the stopped owner: tasks still running in the failed attempt (on any executor,
      // the stopped one too once resumed) lose reads when other executors destroy their ends of its channels, and
      // must not blame them (Spark would unregister those executors' healthy outputs); they are killed instead
      assert(!named.isEmpty && named.asScala.forall(_._2 == victim),
        s"fetch failures (reader, owner named, attempt): ${named.asScala.toSeq}; killed: ${killed.asScala.toSeq}")
      // and reads issued while it was stopped failed so
      assert(named.asScala.exists(n => passedWhileStopped(n._3)),
        s"no fetch failure of a reader that began reading with the owner stopped (${passedWhileStopped.toSeq.sorted})")
      // at least the stopped owner's own reader is such a task: resumed after the first fetch failure, it reads
      // from an executor that has destroyed its ends of the failed attempt's channels
      assert(!killed.isEmpty && killed.asScala.forall(_.contains("ended while this task read its shuffle blocks")),
        s"tasks killed: ${killed.asScala.toSeq}; fetch failures: ${named.asScala.toSeq}")
      // the chunks the timed-out readers retired are lent again once the failed attempt's channels are destroyed
      eventually("retired chunks reported, and reclaimed", 60)(
        metric("chunksRetired") > 0 && metric("chunksReclaimed") == metric("chunksRetired"))
      assertEveryChunkFree(c)
    }}
  }
}
