package org.apache.spark.shuffle.hcomm

import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.LongAdder

import scala.jdk.CollectionConverters._

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.scheduler.{SparkListener, SparkListenerStageSubmitted, SparkListenerTaskEnd}
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary

/**
 * The HComm tab in a real browser (headless Chromium): in the live UI of a `local-cluster` job, then in the history
 * server rebuilt from the job's event log, each number checked against the driver's metrics and Spark's own task
 * metrics; then a context with the UI disabled. Canceled, saying why, without Chromium. Every UI binds to
 * `SPARK_LOCAL_IP` (loopback, as the build sets it for the suites).
 */
class UiTabSuite extends LocalClusterSuite {
  private val eventLogs: Path = Files.createTempDirectory("hcomm-event-logs")

  override protected def sharedContext: Boolean = Chromium.binary.isDefined

  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.ui.enabled" -> "true",
    "spark.ui.port" -> "0", // a free port: other builds may share the machine
    "spark.eventLog.enabled" -> "true",
    "spark.eventLog.dir" -> eventLogs.toUri.toString)

  /** The numbers the tab shows, by (row, metric), as the browser's DOM has them. */
  private def cells(dom: String): Map[(String, String), Long] =
    """<td data-row="([^"]+)" data-metric="([^"]+)">(-?\d+)</td>""".r.findAllMatchIn(dom)
      .map(m => (m.group(1), m.group(2)) -> m.group(3).toLong).toMap

  private def value(metrics: java.util.Map[String, java.lang.Long], name: String): Long =
    Option(metrics.get(name)).map(_.longValue).getOrElse(0L)

  /** What the tab must show for a summary: the totals, every stage attempt's row and every executor's. */
  private def expected(s: ShuffleSummary, metrics: Set[String]): Map[(String, String), Long] = {
    val totals = metrics.map(m => ("total", m) -> s.total(m))
    val stages = s.stages.asScala.flatMap { r =>
      metrics.map(m => (s"stage-${r.stageId}.${r.attempt}", m) -> value(r.metrics, m))
    }
    val executors = s.executors.asScala.flatMap { r =>
      metrics.map(m => (s"executor-${r.executorId}", m) -> value(r.metrics, m))
    }
    (totals ++ stages ++ executors).toMap
  }

  @volatile private var finalSummary: ShuffleSummary = _
  @volatile private var appId: String = _

  test("the live UI's HComm tab shows the driver's metrics per stage and per executor") {
    assume(Chromium.binary.isDefined, Chromium.missing)
    val remoteByStage = new ConcurrentHashMap[Int, LongAdder]()
    @volatile var readingStage = -1
    val listener = new SparkListener {
      override def onStageSubmitted(e: SparkListenerStageSubmitted): Unit =
        if (e.stageInfo.parentIds.nonEmpty) readingStage = e.stageInfo.stageId
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = if (end.taskMetrics != null) {
        remoteByStage.computeIfAbsent(end.stageId, _ => new LongAdder)
          .add(end.taskMetrics.shuffleReadMetrics.remoteBytesRead)
      }
    }
    sumByKeyListened(listener)
    val stage = readingStage
    val remote = remoteByStage.get(stage).sum()
    assert(stage >= 0 && remote > 0, "no task read a remote block: the job tested nothing")
    eventually(s"every executor reported the end of stage $stage") {
      val expectedCalls = driverState.destroyCallsExpected(stage, 0)
      expectedCalls > 0 && driverState.destroyCallsOf(stage, 0) == expectedCalls &&
        driverState.clusterTotal("channelsCreated") == driverState.clusterTotal("channelsDestroyed")
    }
    val summary = driverState.summary()
    // Spark's UI binds to SPARK_LOCAL_IP: this asks it there, so a UI bound elsewhere fails here
    assert(sys.env.get("SPARK_LOCAL_IP").contains("127.0.0.1"), "SPARK_LOCAL_IP is not 127.0.0.1")
    val url = s"http://127.0.0.1:${sc.ui.getOrElse(fail("the UI is not running")).boundPort}/hcomm/"
    val dom = Chromium.dumpDom(url)
    assert(dom.contains(">HComm</a>"), "no HComm tab in the tab bar")
    val shown = cells(dom)
    val metrics = shown.keySet.map(_._2)
    assert(metrics.contains("bytesReadOneSided") && metrics.contains("bytesReadFallback") &&
      metrics.contains("readRoundTrips") && metrics.contains("channelsCreated") && metrics.contains("bytesToHost"))
    val want = expected(summary, metrics)
    assert(shown == want, "the tab shows, where the driver has: " + (shown.keySet ++ want.keySet)
      .filter(k => shown.get(k) != want.get(k)).toSeq.sorted.map(k => s"$k ${shown.get(k)} (${want.get(k)})")
      .mkString(", "))
    // the numbers against the driver's gauges and Spark's own task metrics
    metrics.foreach(m => assert(shown(("total", m)) == driverState.clusterTotal(m), s"total of $m"))
    assert(shown((s"stage-$stage.0", "bytesReadOneSided")) == remote,
      s"stage $stage's one-sided bytes; Spark's remote bytes read: $remote")
    assert(shown((s"stage-$stage.0", "bytesReadFallback")) == 0)
    assert(shown((s"stage-$stage.0", "channelsDestroyed")) == driverState.channelsDestroyedOf(stage, 0))
    assert(shown((s"stage-$stage.0", "channelsCreated")) > 0)
    assert(liveExecutors().forall(e => shown.contains((s"executor-$e", "bytesReadOneSided"))))
    Chromium.screenshot(url, Paths.get("target", "hcomm-ui-tab.png"))
    finalSummary = summary
    appId = sc.applicationId
  }

  test("the history server rebuilds the tab from the event log") {
    assume(Chromium.binary.isDefined, Chromium.missing)
    assume(appId != null, "the live UI's test did not run")
    sc.stop() // the application ends: its event log is complete
    assertNoLocalCluster()
    val server = new InProcessHistoryServer(eventLogs.toUri.toString)
    try {
      val url = s"${server.url()}/history/$appId/hcomm/"
      val dom = Chromium.dumpDom(url)
      assert(dom.contains(">HComm</a>"), s"no HComm tab at $url: $dom")
      val shown = cells(dom)
      assert(shown.nonEmpty, s"no numbers at $url")
      val want = expected(finalSummary, shown.keySet.map(_._2))
      assert(shown == want, "the history server shows, where the live driver had: " +
        (shown.keySet ++ want.keySet).filter(k => shown.get(k) != want.get(k)).toSeq.sorted
          .map(k => s"$k ${shown.get(k)} (${want.get(k)})").mkString(", "))
    } finally {
      server.close()
    }
  }

  test("with spark.ui.enabled=false the plugin starts and runs a shuffle, and its driver state has the summary") {
    if (sc != null) {
      sc.stop()
    }
    val conf = new SparkConf().setMaster("local[2]").setAppName("UiTabSuite-no-ui")
      .set("spark.plugins", classOf[HcommShufflePlugin].getName)
      .set("spark.shuffle.manager", classOf[HcommShuffleManager].getName)
      .set("spark.ui.enabled", "false")
    val c = new SparkContext(conf)
    try {
      assert(c.ui.isEmpty)
      val got = c.parallelize(1 to 1000, 4).map(i => (i % 10, 1)).reduceByKey(_ + _, 2).collect().toMap
      assert(got == (0 until 10).map(_ -> 100).toMap)
      assert(driverState != null && driverState.summary() != null)
    } finally {
      c.stop()
    }
  }

  override def afterAll(): Unit = {
    try super.afterAll()
    finally org.apache.spark.util.Utils.deleteRecursively(eventLogs.toFile)
  }
}
