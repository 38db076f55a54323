package org.apache.spark.shuffle.hcomm

import org.apache.spark.shuffle.hcomm.internal.executor.ExecutorProbe

import org.apache.spark.{HashPartitioner, SparkConf, SparkContext, SparkEnv}
import org.apache.spark.shuffle.hcomm.TestLine.SparkSession
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col, count, max, row_number, sum}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * Local mode (`local`, `local[N]`, `local[*]`, `local[N,F]`): one executor inside the driver's JVM, every block local.
 * The plugin must start there with either fallback setting and stay out of the way: every kind of shuffle gives the
 * built-in shuffle's answers, no HComm runtime starts, nothing is read one-sidedly or fetched by a fallback. One
 * context per test (a local context starts in about a second); the built-in shuffle's answers are computed once, on a
 * context without the plugin.
 */
class LocalModeSuite extends AnyFunSuite with BeforeAndAfterAll {
  private def conf(master: String, plugin: Boolean, extra: (String, String)*): SparkConf = {
    val c = new SparkConf().setMaster(master).setAppName(getClass.getSimpleName)
      .set("spark.ui.enabled", "false")
      .set("spark.sql.shuffle.partitions", "7")
      .set("spark.sql.adaptive.enabled", "true")
      .set("spark.sql.autoBroadcastJoinThreshold", "-1")
    if (plugin) {
      c.set("spark.plugins", classOf[HcommShufflePlugin].getName)
        .set("spark.shuffle.manager", classOf[HcommShuffleManager].getName)
    }
    c.setAll(extra)
  }

  /** Runs `body` on a new context of `conf` and stops it, also when `body` fails. */
  private def withContext[T](conf: SparkConf)(body: SparkContext => T): T = {
    val sc = new SparkContext(conf)
    try body(sc)
    finally {
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
      sc.stop()
    }
  }

  /** One shuffle of each kind, each reduced to a value that two runs of a correct shuffle give identically. */
  private def shuffles(sc: SparkContext): Map[String, Any] = {
    val pairs = sc.parallelize(1 to 60000, 6).map(i => (i % 701, i.toLong))
    val rnd = new scala.util.Random(11)
    val unsorted = Seq.fill(20000)(rnd.nextInt())
    val spark = SparkSession.builder().sparkContext(sc).getOrCreate()
    import spark.implicits._
    val events = sc.parallelize(1 to 40000, 5).map(i => (i % 997, i % 13, i.toLong)).toDF("user", "kind", "value")
    val users = sc.parallelize(0 until 997, 3).map(u => (u, s"u$u")).toDF("user", "name")
    val byUser = Window.partitionBy("user").orderBy(col("value").desc)
    Map(
      "reduceByKey (map-side combine)" -> pairs.reduceByKey(_ + _, 5).collect().toMap,
      "groupByKey" -> pairs.groupByKey(4).mapValues(_.toSeq.sorted).collect().toMap,
      "aggregateByKey" -> pairs.aggregateByKey((0L, 0), 3)((a, v) => (a._1 + v, a._2 + 1),
        (a, b) => (a._1 + b._1, a._2 + b._2)).collect().toMap,
      "sortByKey" -> sc.parallelize(unsorted, 4).map(x => (x, 1)).sortByKey(numPartitions = 5).keys.collect().toSeq,
      "join" -> pairs.join(sc.parallelize(1 to 3000, 3).map(i => (i % 900, i)), 4).count(),
      "cogroup" -> pairs.cogroup(sc.parallelize(1 to 3000, 3).map(i => (i % 900, i)), 3)
        .mapValues { case (a, b) => (a.size, b.size) }.collect().toMap,
      "distinct" -> sc.parallelize((1 to 30000).map(_ % 4321), 4).distinct(6).collect().toSet,
      "partitionBy, skewed and mostly empty" -> sc.parallelize(1 to 30000, 4)
        .map(i => if (i % 10 < 8) (0, i) else (i % 5, i)).partitionBy(new HashPartitioner(64))
        .mapPartitions(it => Iterator(it.map(_._2.toLong).sum)).collect().toSeq,
      "repartition" -> sc.parallelize(1 to 20000, 3).repartition(9).mapPartitions(it => Iterator(it.size)).collect()
        .sum,
      "coalesce with a shuffle" -> sc.parallelize(1 to 20000, 8).coalesce(3, shuffle = true).map(_.toLong).sum(),
      "SQL aggregation (AQE)" -> events.groupBy("kind").agg(sum("value"), count("*")).collect().map(_.toString)
        .toSet,
      "SQL join and window (AQE)" -> events.join(users, "user")
        .withColumn("rank", row_number().over(byUser)).where(col("rank") <= 2)
        .groupBy("name").agg(max("value")).collect().map(_.toString).toSet)
  }

  @volatile private var builtin: Map[String, Any] = _

  override def beforeAll(): Unit = {
    super.beforeAll()
    builtin = withContext(conf("local[2]", plugin = false))(shuffles)
  }

  /** The plugin's executor side did not start, and nothing moved through it. */
  private def outOfTheWay(sc: SparkContext): Unit = {
    assert(ExecutorProbe.runtimeStarted() == false, "an HComm runtime started in local mode")
    val driver = internal.driver.DriverState.current()
    assert(driver != null, "the plugin's driver component did not start")
    assert(driver.registeredExecutors() == 0)
    for (m <- Seq("bytesReadOneSided", "bytesReadFallback", "channelsCreated")) {
      assert(driver.clusterTotal(m) == 0, m)
    }
    assert(SparkEnv.get.shuffleManager.isInstanceOf[HcommShuffleManager])
  }

  private def sameAnswers(got: Map[String, Any]): Unit = {
    assert(got.keySet == builtin.keySet)
    for ((what, answer) <- builtin) {
      assert(got(what) == answer, s"$what differs from the built-in shuffle's answer")
    }
  }

  for (fallback <- Seq("auto", "never")) {
    test(s"local[2] with fallback $fallback: every kind of shuffle gives the built-in shuffle's answers", CrossLine) {
      withContext(conf("local[2]", plugin = true, "spark.shuffle.hcomm.fallback" -> fallback)) { sc =>
        sameAnswers(shuffles(sc))
        outOfTheWay(sc)
      }
    }
  }

  for (master <- Seq("local", "local[*]", "local[3,2]")) {
    test(s"$master starts with the plugin (fallback auto and never) and shuffles", CrossLine) {
      for (fallback <- Seq("auto", "never")) {
        withContext(conf(master, plugin = true, "spark.shuffle.hcomm.fallback" -> fallback)) { sc =>
          val got = sc.parallelize(1 to 60000, 6).map(i => (i % 701, i.toLong)).reduceByKey(_ + _, 5).collect().toMap
          assert(got == builtin("reduceByKey (map-side combine)"), s"$master, fallback $fallback")
          outOfTheWay(sc)
        }
      }
    }
  }

  test("local mode with fallback never and no loadable HComm library starts: it loads none", CrossLine) {
    withContext(conf("local[2]", plugin = true, "spark.shuffle.hcomm.fallback" -> "never",
        "spark.shuffle.hcomm.libraryPath" -> "/nonexistent/libhcomm.so")) { sc =>
      assert(sc.parallelize(1 to 1000, 4).map(i => (i % 10, 1)).reduceByKey(_ + _).count() == 10)
      outOfTheWay(sc)
    }
  }

  test("local mode still refuses invalid configuration, naming the key and the allowed values", CrossLine) {
    val thrown = intercept[Exception] {
      withContext(conf("local[2]", plugin = true, "spark.shuffle.hcomm.fallback" -> "sometimes"))(_ => ())
    }
    // Spark 3.5 creates the shuffle manager first, by reflection: its error comes wrapped
    val e = thrown match {
      case w: java.lang.reflect.InvocationTargetException => w.getCause
      case other => other
    }
    assert(e.isInstanceOf[IllegalArgumentException], s"not the configuration error: $thrown")
    assert(e.getMessage.contains("spark.shuffle.hcomm.fallback") && e.getMessage.contains("never"), e.getMessage)
    assert(SparkContext.getActive.isEmpty, "a context outlived its failed start")
  }
}
