package org.apache.spark.shuffle.hcomm

import org.apache.spark.shuffle.hcomm.internal.driver.DriverState

import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, Future}
import scala.concurrent.duration._

import org.apache.spark.{FetchFailed, HashPartitioner, MapOutputTrackerMaster, ShuffleDependency, SparkConf,
  SparkContext, SparkEnv, TaskEndReason, TaskKilled}
import org.apache.spark.deploy.LocalSparkCluster
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * A suite sharing one SparkContext on `local-cluster[executors,cores,1024]`: real executor JVMs, the HComm shuffle
 * activated with its two settings, and fallback `never` so any block not read one-sidedly fails the job.
 */
abstract class LocalClusterSuite extends AnyFunSuite with BeforeAndAfterAll {
  protected def executors: Int = 2
  /** Task slots per executor: more than one lets an executor's reduce tasks share its channels and receive buffer. */
  protected def coresPerExecutor: Int = 1
  protected def extraConf: Seq[(String, String)] = Seq.empty
  @volatile protected var sc: SparkContext = _

  protected def baseConf: SparkConf = new SparkConf()
    .setMaster(s"local-cluster[$executors,$coresPerExecutor,1024]")
    .setAppName(getClass.getSimpleName)
    .set("spark.plugins", classOf[HcommShufflePlugin].getName)
    .set("spark.shuffle.manager", classOf[HcommShuffleManager].getName)
    .set("spark.shuffle.hcomm.fallback", "never")
    .set("spark.shuffle.hcomm.receiveBufferSize", "16m")
    .set("spark.shuffle.hcomm.sendArenaSize", "64m")
    .set("spark.executor.extraJavaOptions", TestJvm.executorJavaOptions())
    .set("spark.ui.enabled", "false")
    .setAll(extraConf)

  /** Whether beforeAll starts the suite's shared context (suites that make their own contexts turn it off). */
  protected def sharedContext: Boolean = true

  override def beforeAll(): Unit = {
    super.beforeAll()
    if (sharedContext) {
      sc = startContext(baseConf)
    }
  }

  /**
   * Starts a context and waits (bounded) until its executors run and, when `hcommRegistered`, have registered
   * their HComm endpoints with the driver; stops the context when they do not.
   */
  protected def startContext(conf: SparkConf, expected: Int = executors, hcommRegistered: Boolean = true,
      seconds: Int = 180): SparkContext = {
    val c = new SparkContext(conf)
    try {
      val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
      while (c.statusTracker.getExecutorInfos.length < expected + 1 || (hcommRegistered && registered < expected)) {
        assert(!c.isStopped, "SparkContext stopped while waiting for executors")
        assert(System.nanoTime() < deadline, s"executors did not register: ${c.statusTracker.getExecutorInfos.length}")
        Thread.sleep(100)
      }
      c
    } catch {
      case e: Throwable =>
        c.stop()
        throw e
    }
  }

  override def afterAll(): Unit = {
    try {
      if (sc != null) {
        sc.stop()
        assertNoLocalCluster()
      }
    } finally {
      sc = null
      super.afterAll()
    }
  }

  /**
   * Runs a shuffle of (i % 1000, i) for i in 1..100000 (6 map tasks, 4 reduce partitions, summed per key) on `sc`
   * with `listener` added until every event of the job has reached it, and checks the sums.
   */
  protected def sumByKeyListened(listener: org.apache.spark.scheduler.SparkListener): Unit = {
    sc.addSparkListener(listener)
    val got = try {
      sc.parallelize(1 to 100000, 6).map(i => (i % 1000, i.toLong)).reduceByKey(_ + _, 4).collect().toMap
    } finally {
      sc.listenerBus.waitUntilEmpty()
      sc.removeSparkListener(listener)
    }
    assert(got == (1 to 100000).groupBy(_ % 1000).map { case (k, v) => k -> v.map(_.toLong).sum })
  }

  /** After a context stopped: its local cluster (Master, Workers, executor JVMs) went with it. */
  protected def assertNoLocalCluster(): Unit =
    assert(LocalSparkCluster.get.isEmpty, "a local cluster outlived its SparkContext")

  private def registered: Int = Option(DriverState.current()).map(_.registeredExecutors()).getOrElse(0)

  protected def driverState: DriverState = DriverState.current()

  /** Waits until `cond` holds (executor reports arrive asynchronously), failing after `seconds` with `what`. */
  protected def eventually(what: => String, seconds: Int = 20)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for: $what")
      Thread.sleep(50)
    }
  }

  /**
   * Asserts that the cluster's one-sided bytes grew beyond `before` (executors report at stage end, so this waits)
   * and that nothing was fetched by the fallback.
   */
  protected def assertReadOneSided(before: Long): Unit = {
    eventually("one-sided bytes reported")(metric("bytesReadOneSided") > before)
    assert(metric("bytesReadFallback") == 0, "bytes went through Spark's fetch instead of one-sided reads")
  }

  /**
   * Waits until every live executor of `c` has all its receive-buffer chunks back, none on loan or retired (nothing
   * is reading once jobs are done, and chunks retired after a timeout come back when their stage's channels are
   * destroyed; a chunk still out is a leak that starves later reduce tasks).
   */
  protected def assertEveryChunkFree(c: SparkContext = sc, seconds: Int = 20): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    var clean = false
    while (!clean) {
      val live = liveExecutors(c).size
      val notFree = c.parallelize(1 to 4 * live, 4 * live).map { _ =>
        Thread.sleep(50) // keep every executor busy, so each one runs a probe
        (SparkEnv.get.executorId, internal.executor.ExecutorProbe.chunksNotFree())
      }.collect().toMap
      clean = notFree.size == live && notFree.values.forall(_ == 0)
      assert(clean || System.nanoTime() < deadline, s"receive buffer chunks not free per executor: $notFree " +
        s"(executors ${liveExecutors(c).sorted.mkString(", ")}; tasks running per block manager: " +
        c.statusTracker.getExecutorInfos.map(i => s"${i.host}:${i.port} ${i.numRunningTasks}").mkString(", ") + ")")
      if (!clean) Thread.sleep(200)
    }
  }

  /**
   * The executors `c` can run tasks on now: the scheduler's own list. The status tracker's (the block managers
   * registered) and the plugin's registrations can still hold an executor that was killed, for a while after
   * Spark saw it lost, so they cannot tell whether it has been replaced.
   */
  protected def liveExecutors(c: SparkContext = sc): Seq[String] = c.getExecutorIds()

  /**
   * Waits until `dead` is gone and `executors` executors run tasks, each registered with the plugin's driver side.
   * The scheduler lists an executor from its registration on, but offers it tasks only once its `Executor` (plugins
   * included) has started, which on a busy host can be many seconds later: so this also waits until a job's tasks
   * ran on every executor listed.
   */
  protected def awaitReplaced(dead: String, c: SparkContext = sc): Unit = {
    eventually(s"executor $dead replaced: ${liveExecutors(c)}", 180) {
      val live = liveExecutors(c)
      !live.contains(dead) && live.size == executors && driverState.registeredExecutors() == executors
    }
    var ran = Set.empty[String]
    eventually(s"a task ran on every executor: ran on $ran of ${liveExecutors(c)}", 180) {
      val live = liveExecutors(c)
      ran = c.parallelize(1 to 4 * live.size, 4 * live.size).map { _ =>
        Thread.sleep(50)
        SparkEnv.get.executorId
      }.collect().toSet
      ran == live.toSet
    }
  }

  /** Each executor's process id, from tasks that keep every executor of `c` busy long enough to run one. */
  protected def executorPids(c: SparkContext = sc): Map[String, Long] = {
    val live = liveExecutors(c).size
    val pids = c.parallelize(1 to 4 * live, 4 * live).map { _ =>
      Thread.sleep(200)
      SparkEnv.get.executorId -> ProcessHandle.current().pid()
    }.collect().toMap
    assert(pids.size == live, s"pids: $pids")
    pids
  }

  /** For each key `i % keys`, i in 0 until n: the sum of every byte of `RandomValues(i)`, computed here. */
  protected def byteSums(n: Int, keys: Int): Map[Int, Long] =
    (0 until n).groupBy(_ % keys).map { case (k, is) => k -> is.map(RandomValues(_).foldLeft(0L)(_ + _)).sum }

  /**
   * Shuffles (i % keys, RandomValues(i)) for i in 0 until n from `maps` map tasks into `reduces` partitions on `c`;
   * each reduce task takes one record and waits at a gate, its read-ahead meanwhile held by the budget mid-stream
   * (with more blocks per owner than `maxBytesInFlight` holds, a window stays open, its owner waiting for an ACK).
   * Once a task waits on every executor, `strike` runs with the arrivals, then the gate opens. Returns the byte sums
   * the job computed (as `byteSums`, unchecked) and what `strike` returned.
   */
  protected def midReadStrike[T](c: SparkContext, n: Int, keys: Int, maps: Int, reduces: Int)(
      strike: Seq[GateArrival] => T): (Map[Int, Long], T) = {
    import scala.concurrent.ExecutionContext.Implicits.global
    val executorsNow = liveExecutors(c).size
    TaskGate.using("midread") { case Seq(gate) =>
      val rdd = c.parallelize(0 until n, maps).map(i => (i % keys, RandomValues(i)))
        .partitionBy(new HashPartitioner(reduces))
      val job = Future(rdd.mapPartitions { it =>
        val first = it.next()
        gate.pass()
        val sums = scala.collection.mutable.HashMap(first._1 -> first._2.foldLeft(0L)(_ + _))
        it.foreach { case (k, v) => sums(k) = sums.getOrElse(k, 0L) + v.foldLeft(0L)(_ + _) }
        sums.iterator
      }.reduceByKey(_ + _).collect().toMap)
      val struck = strike(gate.awaitOnExecutors(executorsNow, job))
      gate.open()
      (Await.result(job, 180.seconds), struck)
    }
  }

  /**
   * Runs a shuffle of (i % 1000, i) for i in 1..n (8 map tasks, 6 reduce partitions, summed per key) on `c` and kills
   * an executor holding a map output in its reduce stage: once every executor has a reduce task there with its
   * reader open and nothing read (they wait at a gate, opened once it is gone), so that the other executors' reads
   * of its outputs go out after it died. Returns the sums (unchecked), the victim, and the reduce tasks that were at
   * the gate on the other executors.
   */
  protected def killOwnerMidReduce(c: SparkContext, n: Int): (Map[Int, Long], String, Seq[GateArrival]) = {
    import scala.concurrent.ExecutionContext.Implicits.global
    val pids = executorPids(c)
    TaskGate.using("read") { case Seq(gate) =>
      val rdd = c.parallelize(1 to n, 8).map(i => (i % 1000, i.toLong)).partitionBy(new HashPartitioner(6))
      val job = Future(rdd.mapPartitions { it => // no aggregation: the reader reads as the records are consumed
        gate.pass()
        val sums = scala.collection.mutable.HashMap.empty[Int, Long]
        it.foreach { case (k, v) => sums(k) = sums.getOrElse(k, 0L) + v }
        sums.iterator
      }.collect().toMap)
      val atGate = gate.awaitOnExecutors(pids.size, job)
      val shuffleId = rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleId
      val victim = c.env.mapOutputTracker.asInstanceOf[MapOutputTrackerMaster].shuffleStatuses(shuffleId)
        .mapStatuses.head.location.executorId
      val process = ProcessHandle.of(pids(victim)).get()
      assert(process.destroyForcibly(), s"could not kill executor $victim")
      process.onExit().get(60, TimeUnit.SECONDS) // gone, not exiting: a read of it now cannot succeed
      gate.open()
      (Await.result(job, 180.seconds), victim, atGate.filter(_.executorId != victim))
    }
  }

  /** Whether `reason` is a read of `owner`'s outputs that failed: a fetch failure naming it, or the reader killed. */
  protected def failedReading(owner: String)(reason: TaskEndReason): Boolean = reason match {
    case f: FetchFailed => f.bmAddress != null && f.bmAddress.executorId == owner
    case k: TaskKilled => k.reason.contains("ended while this task read")
    case _ => false
  }

  /** Sends signal `name` (e.g. STOP, CONT) to process `pid`. */
  protected def signal(pid: Long, name: String): Unit = {
    val kill = new ProcessBuilder("kill", "-" + name, pid.toString).inheritIO().start()
    assert(kill.waitFor() == 0, s"kill -$name $pid")
  }

  /** The cluster's total of one HcommShuffle metric, as the executors last reported it. */
  protected def metric(name: String): Long = driverState.clusterTotal(name)
}

/** Shuffle values for tasks (an object, so a task's closure does not capture its suite). */
object RandomValues {
  /** 1,000 bytes of random, incompressible data seeded by `i`. */
  def apply(i: Int): Array[Byte] = {
    val b = new Array[Byte](1000)
    new java.util.Random(i).nextBytes(b)
    b
  }
}
