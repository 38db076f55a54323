package org.hcomm.shuffle.benchmarks.ab;

import java.util.Map;
import java.util.TreeMap;

import com.codahale.metrics.Gauge;
import org.apache.spark.SparkEnv;
import org.apache.spark.metrics.source.Source;
import scala.collection.Seq;

/** The plugin's driver metrics source {@code HcommShuffle}: cluster totals reported by the executors. */
final class HcommMetrics {
    private HcommMetrics() {
    }

    /**
     * The gauges once the executors' last reports arrived: executors report asynchronously after each stage's
     * channels are destroyed, so this waits (bounded) until channels were created, none is live, and the one-sided
     * bytes reached {@code oneSidedBytes} (Spark's remote bytes of the jobs so far).
     */
    @SuppressWarnings("rawtypes")
    static Map<String, Long> settled(long timeoutMs, long oneSidedBytes) throws InterruptedException {
        Map<String, Long> out = new TreeMap<>();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            out.clear();
            Seq<Source> sources = SparkEnv.get().metricsSystem().getSourcesByName("HcommShuffle");
            if (!sources.isEmpty()) {
                for (Map.Entry<String, Gauge> g : sources.head().metricRegistry().getGauges().entrySet()) {
                    out.put(g.getKey(), ((Number) g.getValue().getValue()).longValue());
                }
            }
            boolean settled = out.getOrDefault("channelsCreated", 0L) > 0 && out.getOrDefault("channelsLive", 1L) == 0
                    && out.getOrDefault("bytesReadOneSided", 0L) >= oneSidedBytes;
            if (settled) {
                return out;
            }
            if (System.currentTimeMillis() > deadline) {
                out.put("notSettledAfterMs", timeoutMs);
                return out;
            }
            Thread.sleep(100);
        }
    }

    /** The counters' growth from {@code before} to {@code after}; levels (channelsLive) and markers as in after. */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new TreeMap<>(after);
        before.forEach((k, v) -> {
            if (!k.equals("channelsLive") && !k.equals("notSettledAfterMs") && out.containsKey(k)) {
                out.put(k, out.get(k) - v);
            }
        });
        return out;
    }
}
