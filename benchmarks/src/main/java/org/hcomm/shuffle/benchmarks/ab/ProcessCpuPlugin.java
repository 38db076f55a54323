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
    /** With this set to true the executors also report CPU per thread group (reads /proc/self/task each sample). */
    static final String THREAD_GROUPS_CONF = "spark.hcommBench.threadCpu";
    /** Thread groups by name, in report order; see {@link #group(String)}. */
    static final List<String> GROUPS = List.of("task", "jit", "gc", "hcomm native", "netty", "other");

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
            double a = cpuAt(s, fromMs, 1);
            double b = cpuAt(s, toMs, 1);
            return (b - a) / 1e9;
        }
    }

    /**
     * CPU seconds of each thread group of the executor between two instants (same interpolation), or an empty map
     * when the executor did not report thread groups.
     */
    static Map<String, Double> groupSeconds(String executorId, long fromMs, long toMs) {
        List<long[]> s = SAMPLES.get(executorId);
        Map<String, Double> out = new java.util.LinkedHashMap<>();
        if (s == null) {
            return out;
        }
        synchronized (s) {
            if (s.isEmpty() || s.get(0).length < 2 + GROUPS.size()) {
                return out;
            }
            for (int g = 0; g < GROUPS.size(); g++) {
                out.put(GROUPS.get(g), (cpuAt(s, toMs, 2 + g) - cpuAt(s, fromMs, 2 + g)) / 1e9);
            }
        }
        return out;
    }

    /** The group a thread belongs to, by the name Linux knows it by (15 characters at most). */
    static String group(String comm) {
        if (comm.startsWith("Executor task")) {
            return "task";
        }
        if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler") || comm.startsWith("Sweeper")) {
            return "jit";
        }
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.startsWith("VM Thread")) {
            return "gc";
        }
        if (comm.startsWith("hcomm-")) {
            return "hcomm native";
        }
        if (comm.startsWith("shuffle-") || comm.startsWith("rpc-") || comm.startsWith("netty")) {
            return "netty";
        }
        return "other";
    }

    /** Executors that sent samples. */
    static List<String> executors() {
        List<String> ids = new ArrayList<>(SAMPLES.keySet());
        Collections.sort(ids);
        return ids;
    }

    /** Value {@code column} of the samples (0 is the time) at time t, linearly interpolated. */
    private static double cpuAt(List<long[]> s, long t, int column) {
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
            return a[column];
        }
        return a[column] + (double) (b[column] - a[column]) * (t - a[0]) / (b[0] - a[0]);
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
                long[] sample = new long[f.length - 1];
                for (int i = 1; i < f.length; i++) {
                    sample[i - 1] = Long.parseLong(f[i]);
                }
                List<long[]> s = SAMPLES.computeIfAbsent(f[0], k -> new ArrayList<>());
                synchronized (s) {
                    s.add(sample);
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
            private ThreadGroupCpu groups;

            @Override
            public void init(PluginContext ctx, Map<String, String> extraConf) {
                this.ctx = ctx;
                if (ctx.conf().getBoolean(THREAD_GROUPS_CONF, false)) {
                    groups = new ThreadGroupCpu();
                }
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
                StringBuilder msg = new StringBuilder().append(ctx.executorID()).append(' ')
                        .append(System.currentTimeMillis()).append(' ').append(cpu);
                if (groups != null) {
                    for (long g : groups.sample()) {
                        msg.append(' ').append(g);
                    }
                }
                try {
                    ctx.send(msg.toString());
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

    /**
     * Cumulative CPU per thread group of this process from /proc/self/task/N/stat (user + system, in clock ticks of
     * 10 ms, reported in ns). A thread that exits keeps its last value in its group, so the sums never go back.
     */
    static final class ThreadGroupCpu {
        private static final long NS_PER_TICK = 10_000_000L;
        private final Map<String, long[]> byThread = new java.util.HashMap<>(); // tid -> {group, ticks}
        private final long[] retired = new long[GROUPS.size()]; // ticks of threads whose id was reused

        long[] sample() {
            java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
            if (tasks != null) {
                for (java.io.File t : tasks) {
                    try {
                        String stat = java.nio.file.Files.readString(t.toPath().resolve("stat"));
                        int open = stat.indexOf('(');
                        int close = stat.lastIndexOf(')');
                        String[] f = stat.substring(close + 2).split(" ");
                        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                        long g = GROUPS.indexOf(group(stat.substring(open + 1, close)));
                        long[] old = byThread.put(t.getName(), new long[] {g, ticks});
                        if (old != null && (old[0] != g || old[1] > ticks)) {
                            retired[(int) old[0]] += old[1];
                        }
                    } catch (java.io.IOException | RuntimeException e) {
                        // The thread exited between the listing and the read: its last value stays.
                    }
                }
            }
            long[] out = new long[GROUPS.size()];
            for (int g = 0; g < out.length; g++) {
                out[g] = retired[g] * NS_PER_TICK;
            }
            for (long[] v : byThread.values()) {
                out[(int) v[0]] += v[1] * NS_PER_TICK;
            }
            return out;
        }
    }
}
