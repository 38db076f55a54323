package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ResourceTypeInfo;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.SparkHadoopUtil;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.slf4j.Logger;
import scala.Tuple2;

/**
 * On YARN, at the driver's start: every resource type the application asks YARN for
 * ({@code spark.yarn.{executor,driver,am}.resource.<type>.amount}, e.g. the NPUs of the communicator path) must be one
 * YARN's ResourceManager declares. Spark itself only logs a warning in the ApplicationMaster's log (under Hadoop's
 * text asking to report a bug) and has YARN start the containers without that type, uncounted, so that more executors
 * land on a node than it has NPUs; this makes it an error naming the setting, the types YARN declares and what
 * declares one (under fallback {@code auto} a warning, and the application goes on). The ResourceManager is asked once (its answer to getResourceTypeInfo); when it cannot be asked
 * (security, a slow RM) the check logs why and lets the application go on as Spark would.
 */
final class YarnResourceCheck {
    private static final Logger LOG = LogCategory.DRIVER_STATE.logger();
    private static final List<String> PREFIXES =
            List.of("spark.yarn.executor.resource.", "spark.yarn.driver.resource.", "spark.yarn.am.resource.");
    private static final String AMOUNT = ".amount";

    private YarnResourceCheck() {
    }

    /** Fails when {@code conf} runs on YARN and asks it for a resource type it does not declare. */
    static void verify(SparkConf conf) {
        if (!conf.get("spark.master", "").startsWith("yarn")) {
            return;
        }
        Map<String, String> requested = requested(conf);
        if (requested.isEmpty()) {
            return;
        }
        Set<String> declared;
        try {
            declared = ResourceManager.declaredTypes(conf);
        } catch (Exception | LinkageError e) {
            LOG.warn("HComm shuffle: could not ask YARN's ResourceManager which resource types it declares, so {} "
                    + "are not checked: {}", requested.keySet(), e.toString());
            return;
        }
        judge(problem(requested, declared), conf);
    }

    /**
     * An undeclared type fails the application under fallback {@code never}; under {@code auto} it is one warning
     * naming the same settings, and the application goes on as Spark would start it (NPUs then uncounted per
     * container: the communicator path may refuse executors that share one, and they read by Spark's fetch).
     */
    static void judge(String problem, SparkConf conf) {
        if (problem == null) {
            return;
        }
        if (HcommConf.FALLBACK.get(conf) == Fallback.Mode.AUTO) {
            LOG.warn("HComm shuffle: {}. With {}=auto the application goes on: YARN starts its containers without "
                    + "that type, so executors may share an NPU, and those the communicator path refuses read by "
                    + "Spark's fetch (set {}=never to make this an error)", problem, HcommConf.FALLBACK.key(),
                    HcommConf.FALLBACK.key());
            return;
        }
        throw new IllegalArgumentException(problem);
    }

    /** The YARN resource types the configuration asks for, by the setting that asks (sorted). */
    static Map<String, String> requested(SparkConf conf) {
        Map<String, String> byKey = new TreeMap<>();
        for (Tuple2<String, String> e : conf.getAll()) {
            String key = e._1();
            for (String prefix : PREFIXES) {
                if (key.startsWith(prefix) && key.endsWith(AMOUNT) && key.length() > prefix.length() + AMOUNT.length()) {
                    byKey.put(key, key.substring(prefix.length(), key.length() - AMOUNT.length()));
                }
            }
        }
        return byKey;
    }

    /** What is wrong with asking for {@code requested} (setting → type) of a YARN declaring {@code declared}, or null. */
    static String problem(Map<String, String> requested, Set<String> declared) {
        Map<String, String> unknown = new TreeMap<>(requested);
        unknown.values().removeIf(declared::contains);
        if (unknown.isEmpty()) {
            return null;
        }
        String type = unknown.values().iterator().next();
        return unknown.entrySet().stream().map(e -> e.getKey() + " asks YARN for resource type '" + e.getValue() + "'")
                .collect(Collectors.joining(", ")) + ", which YARN's ResourceManager does not declare (it declares "
                + String.join(", ", new TreeSet<>(declared)) + "): YARN would start the containers without it,"
                + " uncounted, so that a node may get more executors than it has NPUs. Ask for a declared type in"
                + " spark.yarn.executor.resource.<type>.amount, or declare '" + type + "' on the cluster:"
                + " yarn.resource-types=" + type + " in resource-types.xml of the ResourceManager and every"
                + " NodeManager, each NodeManager's amount as yarn.nodemanager.resource-type." + type
                + " (node-resources.xml), and for the CapacityScheduler to count it yarn.scheduler.capacity"
                + ".resource-calculator=org.apache.hadoop.yarn.util.resource.DominantResourceCalculator; then restart"
                + " them";
    }

    /** The one place that talks to YARN: loaded only on YARN, where Spark's class path has Hadoop's client. */
    private static final class ResourceManager {
        static Set<String> declaredTypes(SparkConf conf) throws Exception {
            Configuration hadoop = SparkHadoopUtil.get().newConfiguration(conf);
            YarnConfiguration yarn = new YarnConfiguration(hadoop);
            // an unreachable ResourceManager fails this check within seconds; Spark's own client then says more
            yarn.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 10_000L);
            yarn.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 1_000L);
            YarnClient client = YarnClient.createYarnClient();
            client.init(yarn);
            client.start();
            try {
                return client.getResourceTypeInfo().stream().map(ResourceTypeInfo::getName)
                        .collect(Collectors.toCollection(TreeSet::new));
            } finally {
                client.stop();
            }
        }
    }
}
