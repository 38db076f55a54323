package org.hcomm.shuffle.benchmarks.ab;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.hcomm.MultiHostCluster;

/**
 * The suite's multi-host mode: {@code -Dab.hosts=N} runs every cell on a standalone cluster of N hosts (network
 * namespaces, the Spark suites' {@link MultiHostCluster}, set "b": 198.18.98.0/24), the cell's executors spread
 * evenly over them, instead of {@code local-cluster}; {@code -Dab.linkRate=10gbit} shapes every host's link (tc tbf,
 * both directions; default unshaped); {@code -Dab.linkDelay=2ms} adds that round trip between two hosts (every
 * host's link delays each frame by a quarter of it each way, a user-space forwarder of netns-hosts.sh; the driver
 * and the Master, in the root namespace, get half of it to each host; default no delay). Between hosts,
 * builtin-network's Netty and hcomm's soft NIC cross the link; within a host, builtin reads files and hcomm shared
 * memory. One cluster serves every run of the same executor count (each run is a fresh application on it);
 * {@link #close} removes it, and the JVM's shutdown does too.
 */
final class Hosts {
    private static MultiHostCluster cluster;
    private static int clusterExecutors;
    private static boolean hooked;

    private Hosts() {
    }

    /** Hosts of the multi-host mode, or 0 (local-cluster). */
    static int count() {
        String v = System.getProperty("ab.hosts", "");
        if (v.isBlank() || v.startsWith("${")) {
            return 0;
        }
        int n = Integer.parseInt(v.trim());
        if (n < 0 || n > 20) {
            throw new IllegalArgumentException("ab.hosts: " + v + " (allowed: 0 for local-cluster, 1..20)");
        }
        return n;
    }

    /** The link rate of every host ("none": not shaped). */
    static String linkRate() {
        String v = System.getProperty("ab.linkRate", "");
        return v.isBlank() || v.startsWith("${") ? "none" : v.trim();
    }

    /** The round trip added between two hosts, e.g. "2ms" ("none": no delay). */
    static String linkDelay() {
        String v = System.getProperty("ab.linkDelay", "");
        return v.isBlank() || v.startsWith("${") ? "none" : v.trim();
    }

    /**
     * The delay of every host's link, one way, as netns-hosts.sh takes it: a quarter of {@link #linkDelay} (host to
     * host, a round trip crosses two links each way), e.g. "500us" for 2ms.
     */
    static String linkDelayOneWay() {
        Matcher m = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(us|ms)").matcher(linkDelay());
        if (!m.matches()) {
            throw new IllegalArgumentException("ab.linkDelay: " + linkDelay()
                    + " (a round trip like 0.2ms, 2ms, 500us)");
        }
        BigDecimal us = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(m.group(2).equals("ms") ? 1000 : 1));
        return us.divide(BigDecimal.valueOf(4)).stripTrailingZeros().toPlainString() + "us";
    }

    /** What the settings line and the summary say about where the runs ran. */
    static String describe() {
        int n = count();
        return n == 0 ? "local-cluster (one host)" : n + " hosts (network namespaces), links " + linkRate()
                + ", delay " + (linkDelay().equals("none") ? "none" : linkDelay() + " RTT host to host");
    }

    /** Points {@code conf} at a cluster of the mode's hosts with {@code executors} executors of 1 core. */
    static synchronized void apply(SparkConf conf, int executors, Path logDir) {
        int hosts = count();
        if (hosts == 0) {
            return;
        }
        if (executors % hosts != 0) {
            throw new IllegalArgumentException(executors + " executors cannot be spread evenly over " + hosts
                    + " hosts (ab.executors and ab.hosts)");
        }
        if (!linkDelay().equals("none")) {
            linkDelayOneWay(); // a malformed delay fails before a cluster is made
        }
        if (cluster == null || clusterExecutors != executors) {
            close();
            if (!hooked) {
                Runtime.getRuntime().addShutdownHook(new Thread(Hosts::close, "ab-hosts-down"));
                hooked = true;
            }
            cluster = new MultiHostCluster("b", hosts, executors / hosts, logDir.resolve("hosts"));
            clusterExecutors = executors;
            if (!linkRate().equals("none")) {
                for (int i = 1; i <= hosts; i++) {
                    cluster.rate(i, linkRate());
                }
            }
            if (!linkDelay().equals("none")) {
                for (int i = 1; i <= hosts; i++) {
                    cluster.delay(i, linkDelayOneWay());
                }
            }
        }
        conf.setMaster(cluster.masterUrl())
                .set("spark.driver.host", cluster.rootAddress())
                .set("spark.driver.bindAddress", cluster.rootAddress())
                .set("spark.cores.max", String.valueOf(executors))
                .set("spark.executor.cores", "1");
    }

    static synchronized void close() {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
    }
}
