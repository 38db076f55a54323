package org.apache.spark.shuffle.hcomm

import scala.collection.mutable

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.shuffle.hcomm.TestLine.SparkSession
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanHelper, AQEShuffleReadExec}
import org.apache.spark.sql.execution.joins.SortMergeJoinExec
import org.apache.spark.sql.functions.{count, lit, sum}

/**
 * SQL with adaptive query execution on two executor JVMs: the answers of aggregations and joins, including
 * AQE-coalesced reads (contiguous partition ranges) and skew splits (map-index ranges), against answers computed in
 * plain Scala; with fallback `never` every remote block must have been read one-sidedly. The send arena is far too
 * small for the suite's map outputs (as for an application with many shuffles), so most outputs are published from
 * Spark's own data and index files.
 */
class SqlAqeSuite extends LocalClusterSuite {
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.sql.adaptive.enabled" -> "true",
    "spark.sql.autoBroadcastJoinThreshold" -> "-1",
    "spark.shuffle.hcomm.sendArenaSize" -> "64k")

  @volatile private var spark: SparkSession = _

  /** Walks the final adaptive plan, into query stages. */
  private object Plans extends AdaptiveSparkPlanHelper

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = SparkSession.builder().sparkContext(sc).getOrCreate()
  }

  override def afterAll(): Unit = {
    try {
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
      spark = null
    } finally {
      super.afterAll()
    }
  }

  private def withSqlConf[T](pairs: (String, String)*)(body: => T): T = {
    val old = pairs.map { case (k, _) => k -> spark.conf.getOption(k) }
    pairs.foreach { case (k, v) => spark.conf.set(k, v) }
    try body
    finally old.foreach {
      case (k, Some(v)) => spark.conf.set(k, v)
      case (k, None) => spark.conf.unset(k)
    }
  }

  private def finalPlan(df: DataFrame): SparkPlan = df.queryExecution.executedPlan

  private def shuffleReads(df: DataFrame): Seq[AQEShuffleReadExec] =
    Plans.collect(finalPlan(df)) { case r: AQEShuffleReadExec => r }

  private def sortMergeJoins(df: DataFrame): Seq[SortMergeJoinExec] =
    Plans.collect(finalPlan(df)) { case j: SortMergeJoinExec => j }

  /** Rows (k, count, sum a, sum b) per key as a map. */
  private def perKey(df: DataFrame): Map[Long, (Long, Long, Long)] =
    df.collect().map(r => r.getLong(0) -> (r.getLong(1), r.getLong(2), r.getLong(3))).toMap

  /** What an inner equi-join followed by (count, sum a, sum b) per key gives, computed in plain Scala. */
  private def joinOracle(left: Seq[(Long, Long)], right: Seq[(Long, Long)]): Map[Long, (Long, Long, Long)] = {
    val l = left.groupBy(_._1).map { case (k, v) => k -> (v.size.toLong, v.map(_._2).sum) }
    val r = right.groupBy(_._1).map { case (k, v) => k -> (v.size.toLong, v.map(_._2).sum) }
    l.keySet.intersect(r.keySet).map { k =>
      val (lc, ls) = l(k)
      val (rc, rs) = r(k)
      k -> (lc * rc, ls * rc, rs * lc)
    }.toMap
  }

  test("groupBy aggregation gives the same sums and counts, read one-sidedly", CrossLine) {
    val before = metric("bytesReadOneSided")
    val n = 300000L
    val df = withSqlConf("spark.sql.shuffle.partitions" -> "12") {
      val q = spark.range(0, n, 1, 8).selectExpr("id % 1000 AS k", "id AS v")
        .groupBy("k").agg(sum("v").as("s"), count(lit(1)).as("c"))
      val got = q.collect().map(r => r.getLong(0) -> (r.getLong(1), r.getLong(2))).toMap
      val want = (0L until n).groupBy(_ % 1000).map { case (k, vs) => k -> (vs.sum, vs.size.toLong) }
      assert(got == want)
      q
    }
    assert(shuffleReads(df).nonEmpty || finalPlan(df).toString.contains("Exchange"), finalPlan(df).toString)
    assertReadOneSided(before)
  }

  test("sort-merge join (no broadcast) gives the same rows per key, read one-sidedly", CrossLine) {
    val before = metric("bytesReadOneSided")
    val left = (0L until 100000L).map(i => (i % 5000, i))
    val right = (0L until 20000L).map(i => (i % 7000, i * 2))
    val q = withSqlConf("spark.sql.shuffle.partitions" -> "16") {
      val l = spark.range(0, 100000, 1, 6).selectExpr("id % 5000 AS k", "id AS a")
      val r = spark.range(0, 20000, 1, 4).selectExpr("id % 7000 AS k", "id * 2 AS b")
      val joined = l.join(r, "k")
      val q = joined.groupBy("k").agg(count(lit(1)), sum("a"), sum("b"))
      assert(perKey(q) == joinOracle(left, right))
      q
    }
    assert(sortMergeJoins(q).nonEmpty, s"expected a sort-merge join in\n${finalPlan(q)}")
    assertReadOneSided(before)
  }

  test("AQE coalesces 200 shuffle partitions into a few reads, same answer, read one-sidedly", CrossLine) {
    val before = metric("bytesReadOneSided")
    val tasksPerStage = mutable.Map.empty[Int, Int].withDefaultValue(0)
    val listener = new SparkListener {
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit = tasksPerStage.synchronized {
        tasksPerStage(e.stageId) += 1
      }
    }
    sc.addSparkListener(listener)
    val q = try {
      withSqlConf("spark.sql.shuffle.partitions" -> "200", "spark.sql.adaptive.coalescePartitions.enabled" -> "true") {
        val q = spark.range(0, 200000, 1, 4).selectExpr("id % 777 AS k", "id AS v").groupBy("k").agg(sum("v"))
        val got = q.collect().map(r => r.getLong(0) -> r.getLong(1)).toMap
        assert(got == (0L until 200000L).groupBy(_ % 777).map { case (k, vs) => k -> vs.sum })
        q
      }
    } finally {
      sc.listenerBus.waitUntilEmpty()
      sc.removeSparkListener(listener)
    }
    val reads = shuffleReads(q)
    assert(reads.exists(r => r.hasCoalescedPartition && r.partitionSpecs.size < 200), s"not coalesced:\n${finalPlan(q)}")
    assert(finalPlan(q).toString.contains("coalesced"), finalPlan(q).toString)
    val counts = tasksPerStage.synchronized(tasksPerStage.toMap)
    assert(counts.nonEmpty && counts.values.forall(_ < 200), s"tasks per stage: $counts")
    assertReadOneSided(before)
  }

  test("AQE splits a skewed join partition by map ranges, same answer, read one-sidedly", CrossLine) {
    val before = metric("bytesReadOneSided")
    // 80% of the left rows on key 0; every key has two right rows
    val left = (0L until 200000L).map(i => (if (i % 10 < 8) 0L else i % 1000, i))
    val right = (0L until 2000L).map(i => (i % 1000, i))
    val q = withSqlConf(
      "spark.sql.shuffle.partitions" -> "10",
      "spark.sql.adaptive.coalescePartitions.enabled" -> "false",
      "spark.sql.adaptive.skewJoin.enabled" -> "true",
      // the aggregation by the join key needs the join's partitioning: splitting costs an extra shuffle, allow it
      "spark.sql.adaptive.forceOptimizeSkewedJoin" -> "true",
      "spark.sql.adaptive.skewJoin.skewedPartitionFactor" -> "2",
      "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes" -> "1k",
      "spark.sql.adaptive.advisoryPartitionSizeInBytes" -> "1k") {
      val l = spark.range(0, 200000, 1, 8).selectExpr("CASE WHEN id % 10 < 8 THEN 0 ELSE id % 1000 END AS k", "id AS a")
      val r = spark.range(0, 2000, 1, 4).selectExpr("id % 1000 AS k", "id AS b")
      val q = l.join(r, "k").groupBy("k").agg(count(lit(1)), sum("a"), sum("b"))
      assert(perKey(q) == joinOracle(left, right))
      q
    }
    val reads = shuffleReads(q)
    assert(reads.exists(_.hasSkewedPartition), s"no skew split:\n${finalPlan(q)}")
    assert(finalPlan(q).toString.contains("skewed"), finalPlan(q).toString)
    assert(sortMergeJoins(q).exists(_.isSkewJoin), s"no skew join:\n${finalPlan(q)}")
    assertReadOneSided(before)
    assertEveryChunkFree()
  }

  // not CrossLine: the arena and the publishing from Spark's files are the plugin's own code, the same on every line,
  // and at 20-30 s the longest test a line would run
  test("a send arena too small for the application: outputs published from Spark's files, all read one-sidedly") {
    val before = metric("bytesReadOneSided")
    val mapped = Seq("outputsMapped", "indexesMapped")
    def counts = mapped.map(m => m -> metric(m)).toMap
    sc.listenerBus.waitUntilEmpty()
    eventually("earlier stage reports")(metric("channelsLive") == 0)
    val countsBefore = counts
    // 200 partitions: each output's index is 8 x 201 = 1,608 bytes, so 40 fill the 64 KiB arena. 96 map tasks a round
    // on 2 executors: one executor holds at least 48 of a round's outputs, whose indexes alone (77 KB) overflow even
    // an empty arena. (With 48 a round, ~24 an executor, it took two rounds whose first shuffle was still registered:
    // when Spark's cleaner released it in between, no index overflowed; seen on Spark 3.5.)
    withSqlConf("spark.sql.shuffle.partitions" -> "200", "spark.sql.adaptive.coalescePartitions.enabled" -> "false") {
      for (round <- 1 to 2) {
        val n = 200000L
        val q = spark.range(0, n, 1, 96).selectExpr(s"id % 3001 AS k", s"id * $round AS v").groupBy("k")
          .agg(sum("v").as("s"))
        val got = q.collect().map(r => r.getLong(0) -> r.getLong(1)).toMap
        assert(got == (0L until n).groupBy(_ % 3001).map { case (k, vs) => k -> vs.map(_ * round).sum })
      }
    }
    assertReadOneSided(before)
    // this test's own outputs soon cannot be copied into the 64 KB the indexes fill, and their
    // indexes overflow the arena: both Spark files are registered, and read one-sidedly
    eventually(s"data and index files mapped by this test (before: $countsBefore, last seen: $counts)") {
      mapped.forall(m => counts(m) > countsBefore(m))
    }
    assert(metric("outputsCopied") > 0, "no output of the suite was copied into the arena")
    assertEveryChunkFree()
  }
}
