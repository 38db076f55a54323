package org.apache.spark.shuffle.hcomm

import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.spark.{HashPartitioner, ShuffleDependency, SparkEnv}
import org.apache.spark.rdd.ShuffledRDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer}

/**
 * Shuffles with Kryo as the context's serializer and `spark.shuffle.compress=false` (blocks are raw serializer
 * streams), plus a Java-serialised shuffle in the same context; the answers against plain Scala, the proof that
 * every remote byte Spark counted was read one-sidedly, and the `HcommShuffle` metrics source.
 */
class SerializerCompressionSuite extends LocalClusterSuite {
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.shuffle.compress" -> "false",
    "spark.serializer" -> classOf[KryoSerializer].getName)

  /** Spark's remoteBytesRead of every task of the suite, and of the tasks since the last `reset`. */
  private object RemoteBytes extends SparkListener {
    val total = new AtomicLong()
    val sinceReset = new AtomicLong()
    val remoteBlocks = new AtomicLong()
    val fetchWaitMs = new AtomicLong()
    val readingTasks = new AtomicLong()

    override def onTaskEnd(e: SparkListenerTaskEnd): Unit = if (e.taskMetrics != null) {
      val r = e.taskMetrics.shuffleReadMetrics
      total.addAndGet(r.remoteBytesRead)
      sinceReset.addAndGet(r.remoteBytesRead)
      remoteBlocks.addAndGet(r.remoteBlocksFetched)
      fetchWaitMs.addAndGet(r.fetchWaitTime)
      if (r.remoteBlocksFetched > 0) readingTasks.incrementAndGet()
    }

    def reset(): Unit = {
      sinceReset.set(0)
      remoteBlocks.set(0)
      fetchWaitMs.set(0)
      readingTasks.set(0)
    }
  }

  private val fetchWaitSplit = Seq("fetchWaitIndexMicros", "fetchWaitFirstWaveMicros", "fetchWaitLaterWavesMicros")

  override def beforeAll(): Unit = {
    super.beforeAll()
    sc.addSparkListener(RemoteBytes) // before any job, so its total covers the whole application
  }

  test("executors shuffle with Kryo, uncompressed") {
    assert(!sc.getConf.getBoolean("spark.shuffle.compress", true))
    val seen = sc.parallelize(1 to 4, 4).map { _ =>
      val env = SparkEnv.get
      (env.serializer.getClass.getName, env.conf.getBoolean("spark.shuffle.compress", true))
    }.collect().toSet
    assert(seen == Set((classOf[KryoSerializer].getName, false)))
  }

  test("reduceByKey, groupByKey and sortByKey give the answers of plain Scala", CrossLine) {
    val before = metric("bytesReadOneSided")
    val data = (1 to 120000).map(i => (i % 1013, i.toLong))
    val rdd = sc.parallelize(data, 6)

    val sums = rdd.reduceByKey(_ + _, 5).collect().toMap
    assert(sums == data.groupBy(_._1).map { case (k, v) => k -> v.map(_._2).sum })

    val groups = rdd.groupByKey(7).mapValues(_.toSeq.sorted).collect().toMap
    assert(groups == data.groupBy(_._1).map { case (k, v) => k -> v.map(_._2).sorted })

    val rnd = new scala.util.Random(11)
    val keys = Seq.fill(60000)(rnd.nextLong())
    val sorted = sc.parallelize(keys.map(k => (k, k.toString)), 5).sortByKey(numPartitions = 4).collect().toSeq
    assert(sorted.map(_._1) == keys.sorted)
    assert(sorted.forall { case (k, v) => v == k.toString })

    assertReadOneSided(before)
  }

  test("a Java-serialised shuffle in the Kryo context") {
    val before = metric("bytesReadOneSided")
    val data = (1 to 40000).map(i => (i % 211, i.toLong))
    val shuffled = new ShuffledRDD[Int, Long, Long](sc.parallelize(data, 5), new HashPartitioner(4))
      .setSerializer(new JavaSerializer(sc.getConf))
    assert(shuffled.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].serializer.isInstanceOf[JavaSerializer])
    val got = shuffled.mapPartitionsWithIndex((p, it) => it.map { case (k, v) => (p, k, v) }).collect()
    assert(got.forall { case (p, k, _) => p == new HashPartitioner(4).getPartition(k) }, "record in a wrong partition")
    assert(got.map(x => (x._2, x._3)).sorted.toSeq == data.sorted)
    assertReadOneSided(before)
  }

  test("every remote byte Spark counted was read one-sidedly, none by the fallback", CrossLine) {
    // everything before this test has been reported: the plugin's total equals Spark's
    sc.listenerBus.waitUntilEmpty()
    eventually("earlier reports")(metric("bytesReadOneSided") == RemoteBytes.total.get)
    val before = metric("bytesReadOneSided")
    val fallbackBefore = metric("bytesReadFallback")
    RemoteBytes.reset()

    val got = sc.parallelize(1 to 100000, 8).map(i => (i % 4099, Array.fill(8)(i))).reduceByKey((a, b) =>
      a.zip(b).map { case (x, y) => x + y }, 6).mapValues(_.head.toLong).collect().toMap
    val want = (1 to 100000).groupBy(_ % 4099).map { case (k, v) => k -> v.map(_.toLong).sum.toInt.toLong }
    assert(got == want)

    sc.listenerBus.waitUntilEmpty()
    val remote = RemoteBytes.sinceReset.get
    assert(remote > 0 && RemoteBytes.remoteBlocks.get > 0, "the job read nothing remote: nothing to prove")
    eventually(s"one-sided delta == Spark's remoteBytesRead ($remote)")(metric("bytesReadOneSided") - before == remote)
    assert(metric("bytesReadFallback") == fallbackBefore)
    assert(fallbackBefore == 0)
    assertEveryChunkFree()
  }

  test("the fetch wait split covers the one-sided wait Spark's task metrics show, phase by phase", CrossLine) {
    sc.listenerBus.waitUntilEmpty()
    eventually("earlier reports")(metric("bytesReadOneSided") == RemoteBytes.total.get)
    val before = fetchWaitSplit.map(metric)
    val sparkIteratorBefore = metric("fetchWaitSparkMillis")
    RemoteBytes.reset()

    val got = sc.parallelize(1 to 200000, 8).map(i => (i % 1009, i.toLong)).reduceByKey(_ + _, 6).collect().toMap
    assert(got == (1 to 200000).groupBy(_ % 1009).map { case (k, v) => k -> v.map(_.toLong).sum })

    sc.listenerBus.waitUntilEmpty()
    val remote = RemoteBytes.sinceReset.get
    assert(remote > 0, "the job read nothing remote: nothing to prove")
    eventually("the job's reports")(metric("bytesReadOneSided") == RemoteBytes.total.get)
    val Seq(index, firstWave, laterWaves) = fetchWaitSplit.map(metric).zip(before).map { case (a, b) => a - b }
    // every reading task waited for its first wave, however briefly, and for no index: the outputs' offsets came
    // with their publication (an index round per task until issue 29; ConcurrentReadersSuite still has them)
    assert(index == 0 && firstWave > 0, s"index $index us, first wave $firstWave us")
    // Spark's fetch wait is each task's one-sided wait, rounded to whole milliseconds (so within half a millisecond
    // per task of the split), plus what Spark's own iterator counted for the task's own executor's blocks: that part
    // is fetchWaitSparkMillis, exactly as Spark was given it (a descheduled thread or a GC pause makes it several ms
    // on a loaded machine, so it is taken out by measurement, not by a guessed slack)
    val splitMs = (index + firstWave + laterWaves) / 1000.0
    val sparkMs = RemoteBytes.fetchWaitMs.get
    val sparkIteratorMs = metric("fetchWaitSparkMillis") - sparkIteratorBefore
    val tasks = RemoteBytes.readingTasks.get
    assert(sparkIteratorMs >= 0 && sparkIteratorMs <= sparkMs, s"Spark's iterator $sparkIteratorMs ms of $sparkMs ms")
    val oneSidedMs = sparkMs - sparkIteratorMs
    assert(math.abs(splitMs - oneSidedMs) <= tasks / 2.0 + 0.01,
      s"split $splitMs ms vs Spark's one-sided fetch wait $oneSidedMs ms ($sparkMs ms, of which $sparkIteratorMs in " +
        s"Spark's iterator) over $tasks reading tasks")
  }

  test("a task that stops reading early still reports what it read to Spark's task metrics") {
    sc.listenerBus.waitUntilEmpty()
    eventually("earlier reports")(metric("bytesReadOneSided") == RemoteBytes.total.get)
    val before = metric("bytesReadOneSided")
    RemoteBytes.reset()

    // each reduce task takes 10 records of several MB and stops, as a sort-merge join or a limit does
    val taken = sc.parallelize(1 to 200000, 8).map(i => (i, Array.fill(16)(i)))
      .partitionBy(new HashPartitioner(4)).mapPartitions(it => Iterator(it.take(10).size)).collect()
    assert(taken.toSeq == Seq.fill(4)(10))

    sc.listenerBus.waitUntilEmpty()
    val remote = RemoteBytes.sinceReset.get
    assert(remote > 0, "Spark's task metrics show no remote bytes for tasks that did read one-sidedly")
    eventually(s"one-sided delta == Spark's remoteBytesRead ($remote)")(metric("bytesReadOneSided") - before == remote)
    assertEveryChunkFree()
  }

  test("the HcommShuffle metrics source with every gauge, on the driver and on executors", CrossLine) {
    val sources = SparkEnv.get.metricsSystem.getSourcesByName("HcommShuffle")
    assert(sources.size == 1, s"driver sources named HcommShuffle: $sources")
    val registry = sources.head.metricRegistry
    val driverGauges = registry.getGauges.asScala
    assert(driverGauges.keySet == internal.driver.DriverProbe.documentedMetrics(onDriver = true),
      s"driver gauges: ${driverGauges.keySet}")
    // the driver's gauges are the cluster's totals: what earlier tests read shows here
    def gauge(name: String): Long = driverGauges(name).getValue.asInstanceOf[Number].longValue
    eventually("the driver's gauge equals the cluster total")(gauge("bytesReadOneSided") == metric("bytesReadOneSided"))
    assert(gauge("bytesReadOneSided") > 0)
    assert(gauge("readsIssued") > 0 && gauge("channelsCreated") > 0 && gauge("destroyCalls") > 0)
    assert(gauge("bytesReadFallback") == 0)

    val expected = internal.driver.DriverProbe.documentedMetrics(onDriver = false)
    val onExecutors = sc.parallelize(1 to 2 * executors, 2 * executors).map { _ =>
      Thread.sleep(300) // keep both executors busy, so the tasks spread
      val found = SparkEnv.get.metricsSystem.getSourcesByName("HcommShuffle")
      (SparkEnv.get.executorId, found.size, found.flatMap(_.metricRegistry.getMetrics.keySet.asScala).toSet)
    }.collect()
    assert(onExecutors.map(_._1).toSet.size == executors, s"tasks ran on ${onExecutors.map(_._1).toSet}")
    onExecutors.foreach { case (id, n, names) =>
      assert(n == 1, s"executor $id has $n HcommShuffle sources")
      assert(names == expected, s"executor $id metrics: $names")
    }
  }
}
