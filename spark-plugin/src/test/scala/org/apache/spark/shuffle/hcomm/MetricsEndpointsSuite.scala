package org.apache.spark.shuffle.hcomm

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.time.Duration
import java.util.concurrent.atomic.LongAdder

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/**
 * Spark's own metrics endpoints with the plugin, fetched over HTTP from the running UI: the PrometheusServlet sink's
 * `/metrics/prometheus` (the driver's metrics system, so the driver's `HcommShuffle` source: the cluster's totals)
 * and `/metrics/executors/prometheus` (Spark's executor summaries, built from task metrics; no plugin source).
 */
class MetricsEndpointsSuite extends LocalClusterSuite {
  override protected def extraConf: Seq[(String, String)] = Seq(
    "spark.ui.enabled" -> "true",
    "spark.ui.port" -> "0", // a free port: suites run one after another, and other builds may share the machine
    "spark.ui.prometheus.enabled" -> "true",
    "spark.metrics.conf.*.sink.prometheusServlet.class" -> "org.apache.spark.metrics.sink.PrometheusServlet",
    "spark.metrics.conf.*.sink.prometheusServlet.path" -> "/metrics/prometheus")

  private val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
    .followRedirects(HttpClient.Redirect.NORMAL).build() // the servlet answers at path + "/", redirecting path

  /** One scrape of `path` on the UI: (metric name, labels) -> value. */
  private def scrape(path: String): Map[(String, String), String] = {
    val url = sc.uiWebUrl.getOrElse(fail("the UI is not running")) + path
    val response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
      HttpResponse.BodyHandlers.ofString())
    assert(response.statusCode() == 200, s"GET $url: ${response.statusCode()} ${response.body()}")
    val line = """^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})? (\S+)$""".r
    response.body().linesIterator.filter(l => l.nonEmpty && !l.startsWith("#")).map {
      case line(name, labels, value) => (name, Option(labels).getOrElse("")) -> value
      case other => fail(s"GET $url: not a Prometheus sample: $other")
    }.toMap
  }

  test("/metrics/prometheus has the driver's HcommShuffle totals and /metrics/executors/prometheus each " +
      "executor's shuffle read, which is one-sided bytes plus local bytes") {
    val local = new LongAdder
    val remote = new LongAdder
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = if (end.taskMetrics != null) {
        local.add(end.taskMetrics.shuffleReadMetrics.localBytesRead)
        remote.add(end.taskMetrics.shuffleReadMetrics.remoteBytesRead)
      }
    }
    sumByKeyListened(listener)
    assert(remote.sum() > 0, "no task read a remote block: the job tested nothing")

    // the PrometheusServlet names a driver gauge metrics_<app id>_driver_<source>_<metric>_Value{type="gauges"}
    val prefix = s"metrics_${sc.applicationId.replaceAll("[^a-zA-Z0-9]", "_")}_driver_HcommShuffle_"
    def driver(samples: Map[(String, String), String], metric: String): Long =
      samples.getOrElse((s"$prefix${metric}_Value", """{type="gauges"}"""),
        fail(s"no $prefix${metric}_Value in /metrics/prometheus: ${samples.keys.map(_._1).toSeq.sorted}")).toLong
    // executors report at each stage end, asynchronously: scrape until one scrape has every report in
    var samples = Map.empty[(String, String), String]
    eventually(s"one scrape with channels created = destroyed and bytesReadOneSided = Spark's remote bytes " +
      s"(${remote.sum()}): $samples") {
      samples = scrape("/metrics/prometheus")
      driver(samples, "channelsCreated") > 0 &&
        driver(samples, "channelsCreated") == driver(samples, "channelsDestroyed") &&
        driver(samples, "bytesReadOneSided") == remote.sum()
    }
    assert(driver(samples, "channelsLive") == 0)
    assert(driver(samples, "bytesReadFallback") == 0)
    assert(driver(samples, "readsIssued") > 0 && driver(samples, "readWaves") > 0)
    // the documented totals and nothing else; no executor's HcommShuffle source (executors serve no HTTP)
    val served = samples.keys.map(_._1).filter(_.contains("_HcommShuffle_"))
    assert(served.forall(_.startsWith(prefix)), s"HcommShuffle samples: ${served.toSeq.sorted}")
    assert(served.map(_.stripPrefix(prefix).replaceAll("_(Value|Number)$", "")) ==
      internal.driver.DriverProbe.documentedMetrics(onDriver = true), s"HcommShuffle samples: ${served.toSeq.sorted}")

    // Spark's executor summaries (Spark 4.2 names them metrics_executor_<field>_<unit>{application_id=..,
    // application_name=.., executor_id=..}): totalShuffleRead is its tasks' local + remote bytes read
    val executors = scrape("/metrics/executors/prometheus")
    def perExecutor(name: String): Map[String, Long] = executors.collect {
      case ((`name`, labels), value) => """executor_id="([^"]+)"""".r.findFirstMatchIn(labels).get.group(1) ->
        value.toLong
    }
    val reads = perExecutor("metrics_executor_totalShuffleRead_bytes_total")
    val writes = perExecutor("metrics_executor_totalShuffleWrite_bytes_total")
    assert(reads.keySet == liveExecutors().toSet + "driver", s"totalShuffleRead samples: $reads")
    assert(writes.keySet == reads.keySet, s"totalShuffleWrite samples: $writes")
    assert(reads("driver") == 0, s"totalShuffleRead samples: $reads") // the driver runs no task
    // one shuffle, each reduce partition read once: every byte written is read, locally or one-sidedly
    assert(reads.values.sum == writes.values.sum, s"read $reads, written $writes")
    assert(reads.values.sum == driver(samples, "bytesReadOneSided") + local.sum(),
      s"executors' totalShuffleRead $reads, one-sided bytes ${driver(samples, "bytesReadOneSided")}, local ${local.sum()}")
    assert(!executors.keys.exists(_._1.contains("HcommShuffle")))
  }
}
