package org.hcomm.shuffle.benchmarks.ab;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.codahale.metrics.Gauge;
import org.apache.spark.SparkEnv;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.shuffle.hcomm.internal.driver.DriverState;
import scala.collection.Seq;

/** The plugin's driver metrics source {@code HcommShuffle}: cluster totals reported by the executors. */
final class HcommMetrics {
    private HcommMetrics() {
    }

    /**
     * The gauges once the executors' last reports arrived: executors report asynchronously after each stage's
     * channels are destroyed, so this waits (bounded) until channels were created, none is live, the one-sided
     * bytes reached {@code oneSidedBytes} (Spark's remote bytes of the jobs so far), and the driver has every report
     * it told the executors to send for {@code stages} ("none live" alone cannot see a report not yet arrived: one
     * warm-up report that came after the baseline once put 3 of the warm-up's channel ends into a measured run).
     */
    @SuppressWarnings("rawtypes")
    static Map<String, Long> settled(long timeoutMs, long oneSidedBytes, List<StageMetricsListener.Stage> stages)
            throws InterruptedException {
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
                    && out.getOrDefault("bytesReadOneSided", 0L) >= oneSidedBytes && allReported(stages);
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

    /** Whether every ended stage attempt of {@code stages} brought the destroy reports the driver waits for. */
    private static boolean allReported(List<StageMetricsListener.Stage> stages) {
        DriverState driver = DriverState.current();
        if (driver == null) {
            return false;
        }
        for (StageMetricsListener.Stage st : stages) {
            int expected = driver.destroyCallsExpected(st.stageId, st.attempt);
            if (expected < 0 || driver.destroyCallsOf(st.stageId, st.attempt) < expected) {
                return false;
            }
        }
        return true;
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
