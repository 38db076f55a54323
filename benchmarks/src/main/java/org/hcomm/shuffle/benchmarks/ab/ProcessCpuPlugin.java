package org.hcomm.shuffle.benchmarks.ab;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Samples every executor JVM's process CPU time (all its threads, Java and native: task threads, Netty's server,
 * soft HComm's threads, GC) every {@value #PERIOD_MS} ms and sends it to the driver, where the A/B runner asks how
 * much CPU an executor used within an interval — e.g. while the reduce stage ran on other executors. Spark's own
 * task metrics only count task threads, so they cannot show the CPU an executor spends serving other executors.
 *
 * <p>Benchmark-only: the samples travel as Strings ({@code "<executorId> <wallMs> <cpuNs>"}), the timeline is a
 * static map in the driver JVM that {@link #reset()} clears before each run.
 */
public final class ProcessCpuPlugin implements SparkPlugin {
    static final long PERIOD_MS = 25;

    /** executor id → samples {wall ms, process CPU ns}, in arrival order (each executor sends in time order). */
    private static final Map<String, List<long[]>> SAMPLES = new ConcurrentHashMap<>();

    static void reset() {
        SAMPLES.clear();
    }

    /**
     * Process CPU seconds the executor used between two wall-clock instants (ms), interpolating linearly between the
     * samples around each end; NaN when the executor sent no samples covering the interval.
     */
    static double cpuSeconds(String executorId, long fromMs, long toMs) {
        List<long[]> s = SAMPLES.get(executorId);
        if (s == null) {
            return Double.NaN;
        }
        synchronized (s) {
            double a = cpuAt(s, fromMs);
            double b = cpuAt(s, toMs);
            return (b - a) / 1e9;
        }
    }

    /** Executors that sent samples. */
    static List<String> executors() {
        List<String> ids = new ArrayList<>(SAMPLES.keySet());
        Collections.sort(ids);
        return ids;
    }

    private static double cpuAt(List<long[]> s, long t) {
        if (s.isEmpty() || t < s.get(0)[0] || t > s.get(s.size() - 1)[0]) {
            return Double.NaN;
        }
        int lo = 0;
        int hi = s.size() - 1;
        while (hi - lo > 1) {
            int mid = (lo + hi) >>> 1;
            if (s.get(mid)[0] <= t) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        long[] a = s.get(lo);
        long[] b = s.get(hi);
        if (b[0] == a[0]) {
            return a[1];
        }
        return a[1] + (double) (b[1] - a[1]) * (t - a[0]) / (b[0] - a[0]);
    }

    @Override
    public DriverPlugin driverPlugin() {
        return new DriverPlugin() {
            @Override
            public Map<String, String> init(SparkContext sc, PluginContext ctx) {
                return Map.of();
            }

            @Override
            public Object receive(Object message) {
                String[] f = ((String) message).split(" ");
                List<long[]> s = SAMPLES.computeIfAbsent(f[0], k -> new ArrayList<>());
                synchronized (s) {
                    s.add(new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                }
                return null;
            }
        };
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ExecutorPlugin() {
            private ScheduledExecutorService timer;
            private PluginContext ctx;

            @Override
            public void init(PluginContext ctx, Map<String, String> extraConf) {
                this.ctx = ctx;
                timer = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "process-cpu-sampler");
                    t.setDaemon(true);
                    return t;
                });
                timer.scheduleAtFixedRate(this::sample, 0, PERIOD_MS, TimeUnit.MILLISECONDS);
            }

            private void sample() {
                long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                        .getProcessCpuTime();
                try {
                    ctx.send(ctx.executorID() + " " + System.currentTimeMillis() + " " + cpu);
                } catch (Exception e) {
                    // The driver is going away: nothing left to measure.
                }
            }

            @Override
            public void shutdown() {
                timer.shutdownNow();
            }
        };
    }
}
