package org.hcomm.shuffle.examples;

import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.shuffle.hcomm.internal.driver.DriverState;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import scala.collection.Seq;

/**
 * What the examples need around a job: its configuration with either shuffle, waiting for executor JVMs, and reading
 * and checking the plugin's metrics source.
 */
final class ClusterSupport {
    static final String HCOMM_PLUGIN = "org.apache.spark.shuffle.hcomm.HcommShufflePlugin";
    static final String HCOMM_MANAGER = "org.apache.spark.shuffle.hcomm.HcommShuffleManager";

    private ClusterSupport() {
    }

    /**
     * A job's command line: {@code [master] [events]} (defaults {@code local-cluster[2,1,1024]} and the job's size), or
     * under spark-submit {@code --submitted [events] [executors]} (defaults 1,000,000 and 2).
     */
    record JobArguments(boolean submitted, String master, int events, int executors) {
        static JobArguments parse(String[] args, int defaultEvents) {
            if (args.length > 0 && args[0].equals("--submitted")) {
                return new JobArguments(true, null, args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000,
                        args.length > 2 ? Integer.parseInt(args[2]) : 2);
            }
            return new JobArguments(false, args.length > 0 ? args[0] : "local-cluster[2,1,1024]",
                    args.length > 1 ? Integer.parseInt(args[1]) : defaultEvents, 0);
        }
    }

    /** A job's configuration on {@code master}: Spark's built-in shuffle, or the HComm shuffle's two settings. */
    static SparkConf conf(String appName, String master, boolean hcomm) {
        SparkConf conf = new SparkConf().setMaster(master)
                .setAppName(appName + "-" + (hcomm ? "hcomm" : "builtin"))
                .set("spark.ui.enabled", "false")
                .set("spark.executor.memory", "1g");
        if (hcomm) {
            conf.set("spark.plugins", HCOMM_PLUGIN).set("spark.shuffle.manager", HCOMM_MANAGER);
        }
        return conf;
    }

    /** Whether a configuration (say, the one spark-submit gave) selects the HComm shuffle. */
    static boolean selectsHcomm(SparkConf conf) {
        return conf.get("spark.shuffle.manager", "").equals(HCOMM_MANAGER);
    }

    /** Under spark-submit: waits until {@code executors} executors registered (the driver counts as one more). */
    static void awaitExecutorCount(SparkContext sc, int executors) throws InterruptedException {
        while (sc.statusTracker().getExecutorInfos().length < executors + 1) {
            if (sc.isStopped()) {
                throw new IllegalStateException("the context stopped while waiting for " + executors + " executors");
            }
            Thread.sleep(100);
        }
    }

    /** Prints the metrics one a line, as the scripts read them ({@code "  name   value"}). */
    static void printMetrics(Map<String, Long> metrics) {
        metrics.forEach((k, v) -> System.out.printf("  %-26s %d%n", k, v));
    }

    /**
     * What is wrong with an HComm run's metrics, or null: nothing read one-sidedly, fallback bytes when
     * {@code fallbackAllowed} is false, or channels created and destroyed that do not match.
     */
    static String metricsProblem(Map<String, Long> metrics, boolean fallbackAllowed) {
        if (metrics.getOrDefault("bytesReadOneSided", 0L) <= 0) {
            return "the HComm shuffle read nothing one-sidedly: " + metrics;
        }
        if (!fallbackAllowed && metrics.getOrDefault("bytesReadFallback", 0L) != 0) {
            return "the HComm shuffle fell back to Spark's fetch: " + metrics;
        }
        if (!metrics.getOrDefault("channelsCreated", -1L).equals(metrics.getOrDefault("channelsDestroyed", -2L))) {
            return "channels created and destroyed differ: " + metrics;
        }
        return null;
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
        awaitHcommReady(n);
    }

    /**
     * The HComm shuffle, when it runs: {@code n} executors registered with it (those where it can run), and on the
     * communicator path their communicator formed, so that the job reads one-sidedly from its first stage (30 s at
     * most).
     */
    static void awaitHcommReady(int n) throws InterruptedException {
        DriverState hcomm = DriverState.current();
        long ready = System.nanoTime() + 30_000_000_000L;
        while (hcomm != null && (hcomm.registeredExecutors() < n || hcomm.communicatorPending())
                && System.nanoTime() < ready) {
            Thread.sleep(100);
        }
    }

    /**
     * The driver's {@code HcommShuffle} metrics source (cluster totals reported by the executors), once every channel
     * created is reported destroyed: executors report after each stage's channels are destroyed, so this waits
     * for the last reports (30 s at most, then returns what it has). On the communicator path, which creates no
     * channels per stage, once executors joined a communicator, reported one-sided bytes, and the totals stayed the
     * same for a second. The totals are one consistent set ({@link ShuffleMetrics#clusterTotals()}).
     */
    static Map<String, Long> hcommMetrics(SparkContext sc) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L; // a loaded host reports late
        Map<String, Long> before = Map.of();
        long unchangedSince = System.nanoTime();
        while (true) {
            Map<String, Long> now = totals();
            if (!now.equals(before)) {
                before = now;
                unchangedSince = System.nanoTime();
            }
            boolean settled = now.getOrDefault("channelsLive", 1L) == 0 && now.getOrDefault("channelsCreated", 0L) > 0
                    && now.get("channelsCreated").equals(now.get("channelsDestroyed"));
            // the communicator path has no per-stage channels: its executors joined a communicator, reported reads,
            // and nothing changed for a second
            settled |= now.getOrDefault("channelsCreated", 0L) == 0 && now.getOrDefault("communicatorsJoined", 0L) > 0
                    && now.getOrDefault("bytesReadOneSided", 0L) > 0
                    && System.nanoTime() - unchangedSince >= 1_000_000_000L;
            if (settled || System.nanoTime() > deadline) {
                return now;
            }
            Thread.sleep(100);
        }
    }

    private static Map<String, Long> totals() {
        Seq<Source> sources = SparkEnv.get().metricsSystem().getSourcesByName(ShuffleMetrics.SOURCE_NAME);
        return sources.isEmpty() ? Map.of() : ((ShuffleMetrics) sources.head()).clusterTotals();
    }
}
