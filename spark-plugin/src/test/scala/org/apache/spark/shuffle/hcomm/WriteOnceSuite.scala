package org.apache.spark.shuffle.hcomm

import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.spark.{HashPartitioner, ShuffleDependency, SparkEnv}
import org.apache.spark.network.buffer.ManagedBuffer
import org.apache.spark.network.shuffle.BlockFetchingListener
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.serializer.KryoSerializer
import org.apache.spark.storage.BlockId

/**
 * Map outputs written once, straight into the executors' send arenas (`writeTarget=arena`), on two executor JVMs:
 * Spark's three writers, the local reads and Spark's fetch served from the arena, and an output too large for it
 * going to Spark's file whole.
 */
class WriteOnceSuite extends LocalClusterSuite {
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.shuffle.hcomm.writeTarget" -> "arena",
    "spark.shuffle.readHostLocalDisk" -> "false",
    "spark.shuffle.hcomm.sendArenaSize" -> "8m", // 7 MiB for data: the overflow test's outputs do not fit
    "spark.serializer" -> classOf[KryoSerializer].getName)

  /** The shuffle ids in the lineage of `rdd`. */
  private def shuffleIds(rdd: RDD[_]): Set[Int] = rdd.dependencies.flatMap {
    case s: ShuffleDependency[_, _, _] => Set(s.shuffleId) ++ shuffleIds(s.rdd)
    case d => shuffleIds(d.rdd)
  }.toSet

  /** Spark's data and index files of these shuffles on every executor (names). */
  private def dataAndIndexFiles(shuffles: Set[Int]): Seq[String] = {
    val live = liveExecutors().size
    val prefixes = shuffles.map(id => s"shuffle_${id}_")
    sc.parallelize(1 to 4 * live, 4 * live).flatMap { _ =>
      Thread.sleep(50) // every executor runs one
      SparkEnv.get.blockManager.diskBlockManager.getAllFiles().map(_.getName)
        .filter(n => prefixes.exists(n.startsWith) && (n.endsWith(".data") || n.endsWith(".index")))
        .map(n => s"executor ${SparkEnv.get.executorId}: $n")
    }.collect().distinct.toSeq
  }

  /** Runs `body`, returning with its value Spark's local shuffle bytes read by the tasks that ran meanwhile. */
  private def localBytes[T](body: => T): (T, Long) = {
    val local = new AtomicLong()
    val listener = new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
        if (e.taskMetrics != null) local.addAndGet(e.taskMetrics.shuffleReadMetrics.localBytesRead)
    }
    sc.addSparkListener(listener)
    try {
      val t = body
      sc.listenerBus.waitUntilEmpty()
      (t, local.get)
    } finally sc.removeSparkListener(listener)
  }

  test("Spark's three writers (sort, bypass, serialized) write into the arena: right answers, own blocks read " +
      "locally from it, no data or index file", CrossLine) {
    val oneSided = metric("bytesReadOneSided")
    val inArena = metric("outputsWrittenToArena")
    val data = sc.parallelize(1 to 40000, 6).map(i => (i % 400, i.toLong))
    val want = (1 to 40000).groupBy(_ % 400).map { case (k, v) => k -> v.map(_.toLong).sum }
    val sorted = data.reduceByKey(_ + _, 4) // map-side combine: the sort writer
    val bypassed = data.groupByKey(4).mapValues(_.sum) // no combine, 4 partitions: the bypass writer
    val serialized = data.partitionBy(new HashPartitioner(300)) // Kryo, no combine, > 200 partitions: serialized
    val (answers, local) = localBytes {
      (sorted.collect().toMap, bypassed.collect().toMap,
        serialized.mapPartitions(it => Iterator(it.map(_._2).sum)).collect().sum)
    }
    assert(answers._1 == want)
    assert(answers._2 == want)
    assert(answers._3 == want.values.sum)
    assert(local > 0, "own blocks were read by Spark's local path")
    eventually("outputs reported")(metric("outputsWrittenToArena") - inArena == 18) // 3 shuffles x 6 maps
    assert(metric("outputsOverflowed") == 0)
    assertReadOneSided(oneSided)
    val files = dataAndIndexFiles(Seq(sorted, bypassed, serialized).flatMap(shuffleIds).toSet)
    assert(files.isEmpty, s"outputs written once, into the arena: $files")
  }

  test("Spark's fetch serves blocks held in the arena, as the fallback would read them") {
    val rdd = sc.parallelize(1 to 20000, 4).map(i => (i % 100, i.toLong)).reduceByKey(_ + _, 3)
    val dep = rdd.dependencies.head.asInstanceOf[ShuffleDependency[Int, Long, Long]]
    sc.submitMapStage(dep).get()
    val blocks = sc.env.mapOutputTracker.getMapSizesByExecutorId(dep.shuffleId, 0, Int.MaxValue, 0, 3)
      .map { case (owner, bs) => owner -> bs.filter(_._2 > 0).map(_._1.toString) }.toMap
    assert(blocks.size == 2 && blocks.values.forall(_.nonEmpty), s"outputs on both executors: $blocks")
    val live = liveExecutors().size
    // each block as its owner serves it to itself (Spark's local read) and as the other executor fetches it
    val seen = sc.parallelize(1 to 4 * live, 4 * live).flatMap { _ =>
      Thread.sleep(100) // every executor runs one
      val bm = SparkEnv.get.blockManager
      val own = blocks.getOrElse(bm.blockManagerId, Nil).map { id =>
        ("local", id, WriteOnceSuite.digest(bm.getLocalBlockData(BlockId(id))))
      }
      val fetched = blocks.filter(_._1 != bm.blockManagerId).toSeq.flatMap { case (owner, ids) =>
        val got = new ConcurrentHashMap[String, String]()
        val done = new CountDownLatch(ids.size)
        bm.blockStoreClient.fetchBlocks(owner.host, owner.port, owner.executorId, ids.toArray,
          new BlockFetchingListener {
            override def onBlockFetchSuccess(id: String, buf: ManagedBuffer): Unit = {
              got.put(id, WriteOnceSuite.digest(buf))
              done.countDown()
            }
            override def onBlockFetchFailure(id: String, e: Throwable): Unit = {
              got.put(id, e.toString)
              done.countDown()
            }
          }, null)
        assert(done.await(60, TimeUnit.SECONDS), s"fetches from ${owner.executorId} ended")
        got.asScala.toSeq.map { case (id, digest) => ("fetched", id, digest) }
      }
      own ++ fetched
    }.collect().distinct.toSeq
    val local = seen.filter(_._1 == "local").map(b => b._2 -> b._3).toMap
    val fetched = seen.filter(_._1 == "fetched").map(b => b._2 -> b._3).toMap
    assert(local.size == blocks.values.map(_.size).sum, s"every block read locally: $local")
    assert(fetched == local, "every block fetched by Spark's transfer, byte for byte as its owner holds it")
    assert(dataAndIndexFiles(Set(dep.shuffleId)).isEmpty, "served from the arena: there is no file")
  }

  test("an output larger than the arena's room goes on in Spark's file, whole (and the next ones of its shuffle go " +
      "there from the start), and is still read one-sidedly") {
    val oneSided = metric("bytesReadOneSided")
    val overflowed = metric("outputsOverflowed")
    val toFile = metric("outputsSentToFile")
    val rdd = sc.parallelize(0 until 4, 4).flatMap { m =>
      val random = new java.util.Random(m)
      (0 until 12000).map { i =>
        val value = new Array[Byte](1000) // random bytes: 12 MB per map task even compressed
        random.nextBytes(value)
        (i % 8, value)
      }
    }.partitionBy(new HashPartitioner(8))
    val got = rdd.mapPartitions(it => Iterator(it.map(v => v._2.length.toLong + v._2(0)).sum)).collect().sum
    val want = (0 until 4).map { m =>
      val random = new java.util.Random(m)
      (0 until 12000).map { _ =>
        val value = new Array[Byte](1000)
        random.nextBytes(value)
        1000L + value(0)
      }.sum
    }.sum
    assert(got == want)
    // an executor's first output of the shuffle overflows; its later ones are expected as large: file from the start
    eventually("outputs reported") {
      metric("outputsOverflowed") - overflowed + metric("outputsSentToFile") - toFile == 4
    }
    assert(metric("outputsSentToFile") - toFile >= 1 && metric("outputsOverflowed") - overflowed >= 1)
    assert(metric("bytesOverflowCopied") > 0)
    assertReadOneSided(oneSided)
    assert(dataAndIndexFiles(shuffleIds(rdd)).count(_.endsWith(".data")) == 4, "every output in Spark's files")
  }
}

object WriteOnceSuite {
  /** A buffer's size and CRC-32, read through its stream. */
  def digest(buf: ManagedBuffer): String = {
    val in = buf.createInputStream()
    try {
      val crc = new java.util.zip.CRC32
      val b = new Array[Byte](8192)
      var bytes = 0L
      var n = in.read(b)
      while (n >= 0) {
        crc.update(b, 0, n)
        bytes += n
        n = in.read(b)
      }
      s"$bytes bytes, crc ${crc.getValue}"
    } finally in.close()
  }
}
