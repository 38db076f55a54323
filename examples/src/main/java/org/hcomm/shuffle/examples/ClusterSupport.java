package org.hcomm.shuffle.examples;

import java.util.Map;
import java.util.TreeMap;

import com.codahale.metrics.Gauge;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.metrics.source.Source;
import scala.collection.Seq;

/** What the examples need around a job: waiting for executor JVMs, and reading the plugin's metrics source. */
final class ClusterSupport {
    private ClusterSupport() {
    }

    /** For local-cluster[n,...] masters: waits until n executors registered (they start after the context). */
    static void awaitExecutors(SparkContext sc, String master) throws InterruptedException {
        if (!master.startsWith("local-cluster[")) {
            return;
        }
        int n = Integer.parseInt(master.substring("local-cluster[".length(), master.indexOf(',')));
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (sc.statusTracker().getExecutorInfos().length < n + 1) {
            if (sc.isStopped() || System.nanoTime() > deadline) {
                throw new IllegalStateException("executors did not start for " + master);
            }
            Thread.sleep(100);
        }
    }

    /**
     * The driver's {@code HcommShuffle} metrics source (cluster totals reported by the executors). Executors report
     * after each stage's channels are destroyed, so this waits briefly for the last reports.
     */
    static Map<String, Long> hcommMetrics(SparkContext sc) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        Map<String, Long> last = Map.of();
        while (true) {
            // each gauge is read on its own, so a report arriving between two reads can make them disagree (channels
            // created 15, destroyed 16): settled means two reads 100 ms apart agree on every value
            Map<String, Long> now = readGauges();
            boolean settled = now.equals(last) && now.getOrDefault("channelsLive", 1L) == 0
                    && now.getOrDefault("channelsCreated", 0L) > 0
                    && now.get("channelsCreated").equals(now.get("channelsDestroyed"));
            if (settled || System.nanoTime() > deadline) {
                return now;
            }
            last = now;
            Thread.sleep(100);
        }
    }

    private static Map<String, Long> readGauges() {
        Map<String, Long> out = new TreeMap<>();
        Seq<Source> sources = SparkEnv.get().metricsSystem().getSourcesByName("HcommShuffle");
        if (!sources.isEmpty()) {
            for (Map.Entry<String, Gauge> g : sources.head().metricRegistry().getGauges().entrySet()) {
                out.put(g.getKey(), ((Number) g.getValue().getValue()).longValue());
            }
        }
        return out;
    }
}
