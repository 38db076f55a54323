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
     * warm-up report that came after the baseline once put 3 of the warm-up's channel ends into a measured run). On
     * the communicator path, which has no stage channels and whose executors report after each task: once an
     * executor joined a communicator and the one-sided bytes reached {@code oneSidedBytes} (before, every window run
     * waited out the timeout).
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
            // the endpoint path's stage channels are destroyed and reported; the communicator path has none (its
            // executors report after each task): there every remote byte counted as one-sided is the sign
            boolean endpoint = out.getOrDefault("channelsCreated", 0L) > 0 && out.getOrDefault("channelsLive", 1L) == 0
                    && allReported(stages);
            boolean communicator = out.getOrDefault("channelsCreated", 0L) == 0
                    && out.getOrDefault("communicatorsJoined", 0L) > 0;
            boolean settled = (endpoint || communicator) && out.getOrDefault("bytesReadOneSided", 0L) >= oneSidedBytes;
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

    /** Gauges that are levels, not counters, and markers: {@link #since} keeps them as they are in after. */
    static final java.util.Set<String> LEVELS = java.util.Set.of("channelsLive", "communicatorsLive",
            "notSettledAfterMs");

    /**
     * The counters' growth from {@code before} to {@code after}; levels (channelsLive, communicatorsLive) and
     * markers as in after.
     */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new TreeMap<>(after);
        before.forEach((k, v) -> {
            if (!LEVELS.contains(k) && out.containsKey(k)) {
                out.put(k, out.get(k) - v);
            }
        });
        return out;
    }

    /**
     * The communicator path's own checks (warnings): one communicator per executor, formed before the timed tasks ran
     * (none planned its blocks for Spark's fetch), windows opened when shuffle bytes were written; and the endpoint
     * configurations on no communicator (an HCOMM_SOFT_SOC exported in the caller's shell would reach local-cluster
     * executors and turn hcomm into the communicator path).
     */
    static void communicatorChecks(RunResult r, String who, List<String> warnings) {
        Map<String, Long> m = r.hcomm();
        long live = m.getOrDefault("communicatorsLive", 0L);
        if (!r.config().isCommunicator()) {
            if (live != 0) {
                warnings.add(who + ": " + live + " communicator(s) live on the endpoint path (HCOMM_SOFT_SOC set?)");
            }
            return;
        }
        if (live != r.cell().executors()) {
            warnings.add(who + ": communicatorsLive " + live + ", expected one per executor (" + r.cell().executors()
                    + ")");
        }
        if (m.getOrDefault("tasksBeforeCommunicator", 0L) > 0) {
            warnings.add(who + ": " + m.getOrDefault("tasksBeforeCommunicator", 0L) + " reduce task(s) before the "
                    + "communicator");
        }
        if (m.getOrDefault("windowsOpened", 0L) == 0 && r.shuffleWriteBytes() > 0) {
            warnings.add(who + ": no window opened although " + r.shuffleWriteBytes()
                    + " shuffle bytes were written");
        }
    }
}
