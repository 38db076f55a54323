package org.apache.spark.shuffle.hcomm

import java.util.concurrent.TimeUnit

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.shuffle.hcomm.internal.{DriverState, Runtimes}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * A suite sharing one SparkContext on `local-cluster[executors,1,1024]`: real executor JVMs, the HComm shuffle
 * activated with its two settings, and fallback `never` so any block not read one-sidedly fails the job.
 */
abstract class LocalClusterSuite extends AnyFunSuite with BeforeAndAfterAll {
  protected def executors: Int = 2
  protected def extraConf: Seq[(String, String)] = Seq.empty
  @volatile protected var sc: SparkContext = _

  protected def baseConf: SparkConf = new SparkConf()
    .setMaster(s"local-cluster[$executors,1,1024]")
    .setAppName(getClass.getSimpleName)
    .set("spark.plugins", classOf[HcommShufflePlugin].getName)
    .set("spark.shuffle.manager", classOf[HcommShuffleManager].getName)
    .set("spark.shuffle.hcomm.fallback", "never")
    .set("spark.shuffle.hcomm.receiveBufferSize", "16m")
    .set("spark.shuffle.hcomm.sendArenaSize", "64m")
    .set("spark.executor.extraJavaOptions", "-XX:+UseSerialGC")
    .set("spark.ui.enabled", "false")
    .setAll(extraConf)

  override def beforeAll(): Unit = {
    super.beforeAll()
    sc = new SparkContext(baseConf)
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
    while (sc.statusTracker.getExecutorInfos.length < executors + 1 || registered < executors) {
      assert(!sc.isStopped, "SparkContext stopped while waiting for executors")
      assert(System.nanoTime() < deadline, s"executors did not register: ${sc.statusTracker.getExecutorInfos.length}")
      Thread.sleep(100)
    }
  }

  override def afterAll(): Unit = {
    try {
      if (sc != null) sc.stop()
    } finally {
      sc = null
      super.afterAll()
    }
  }

  private def registered: Int = Option(Runtimes.driver()).map(_.registeredExecutors()).getOrElse(0)

  protected def driverState: DriverState = Runtimes.driver()

  /** Waits until `cond` holds (executor reports arrive asynchronously), failing after `seconds`. */
  protected def eventually(what: String, seconds: Int = 20)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (!cond) {
      assert(System.nanoTime() < deadline, s"timed out waiting for: $what")
      Thread.sleep(50)
    }
  }

  /** The cluster's total of one HcommShuffle metric, as the executors last reported it. */
  protected def metric(name: String): Long = driverState.clusterTotal(name)
}
