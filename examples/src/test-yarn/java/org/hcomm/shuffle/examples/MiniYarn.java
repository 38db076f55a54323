package org.hcomm.shuffle.examples;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * A YARN cluster in this JVM (Hadoop's {@link MiniYARNCluster}: one ResourceManager, one NodeManager, on
 * localhost) and spark-submit against it, from Maven's jars alone:
 * <ul>
 *   <li>YARN declares the resource type {@value #NPU_TYPE} and the NodeManager has {@value #NODE_NPUS} of it;
 *       scheduling counts it ({@code DominantResourceCalculator}; the default calculator counts memory only);</li>
 *   <li>the "Spark home" is a {@code jars/} folder of links to this test's class path without the project's own
 *       classes (what a Spark distribution's {@code jars/} holds), handed to YARN as {@code spark.yarn.jars} with
 *       {@code local:} (every node has it, nothing is uploaded) and to spark-submit's JVM as its class path;</li>
 *   <li>the plugin reaches the cluster only as a user's bundle does: one jar of the plugin, the bridge (with soft
 *       HComm's native library) and JNA, passed with {@code --jars}; the application jar holds the examples.</li>
 * </ul>
 * spark-submit runs in a JVM of its own ({@code java -cp jars/* org.apache.spark.deploy.SparkSubmit}), as the
 * {@code bin/} script would start it, with the Hadoop configuration directory on its class path.
 */
final class MiniYarn implements AutoCloseable {
    static final String NPU_TYPE = "npu";
    static final int NODE_NPUS = 2;

    final Path work;
    final Path confDir;
    final Path jarsDir;
    final Path bundle;
    final Path appJar;
    private final MiniYARNCluster cluster;

    private MiniYarn(Path work, MiniYARNCluster cluster, Path confDir, Path jarsDir, Path bundle, Path appJar) {
        this.work = work;
        this.cluster = cluster;
        this.confDir = confDir;
        this.jarsDir = jarsDir;
        this.bundle = bundle;
        this.appJar = appJar;
    }

    static MiniYarn start(Path work) throws IOException, InterruptedException {
        Files.createDirectories(work);
        YarnConfiguration conf = new YarnConfiguration();
        conf.set("yarn.resourcemanager.hostname", "localhost");
        conf.set("yarn.nodemanager.hostname", "localhost");
        conf.set(YarnConfiguration.RESOURCE_TYPES, NPU_TYPE);
        conf.set(YarnConfiguration.NM_RESOURCES_PREFIX + NPU_TYPE, Integer.toString(NODE_NPUS));
        conf.setInt(YarnConfiguration.NM_PMEM_MB, 4096);
        conf.setInt(YarnConfiguration.NM_VCORES, 8);
        conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
        // Java's reserved address space is no measure of use; the physical memory check stays on
        conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
        conf.set("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", "100.0");
        // the minicluster jar has no capacity-scheduler.xml: one queue, everything in it
        conf.set("yarn.scheduler.capacity.root.queues", "default");
        conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
        conf.setInt("yarn.scheduler.capacity.root.default.capacity", 100);
        conf.setInt("yarn.scheduler.capacity.root.default.maximum-capacity", 100);
        conf.setFloat("yarn.scheduler.capacity.root.default.user-limit-factor", 1);
        conf.set("yarn.scheduler.capacity.root.default.state", "RUNNING");
        conf.set("yarn.scheduler.capacity.root.default.acl_submit_applications", "*");
        conf.set("yarn.scheduler.capacity.root.default.acl_administer_queue", "*");
        conf.setInt("yarn.scheduler.capacity.node-locality-delay", -1);
        conf.set("yarn.scheduler.capacity.resource-calculator",
                "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
        MiniYARNCluster cluster = new MiniYARNCluster("hcomm-yarn", 1, 1, 1);
        cluster.init(conf);
        cluster.start();
        // start() may return before the ResourceManager wrote its port into the configuration
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (cluster.getConfig().get(YarnConfiguration.RM_ADDRESS).endsWith(":0")) {
            if (System.nanoTime() > deadline) {
                cluster.stop();
                throw new IllegalStateException("the ResourceManager did not come up");
            }
            Thread.sleep(100);
        }
        Path confDir = Files.createDirectories(work.resolve("hadoop-conf"));
        try (OutputStream out = Files.newOutputStream(confDir.resolve("yarn-site.xml"))) {
            cluster.getConfig().writeXml(out);
        }
        Path jars = sparkJars(work.resolve("spark-home/jars"));
        Path bundle = bundle(work.resolve(bundleName()));
        Path app = jarOf(work.resolve("hcomm-examples-app.jar"), projectEntries("examples"));
        return new MiniYarn(work, cluster, confDir, jars, bundle, app);
    }

    /** The ResourceManager's address, as the clients found it. */
    String resourceManager() {
        return cluster.getConfig().get(YarnConfiguration.RM_ADDRESS);
    }

    /**
     * What YARN's scheduler allocated to an application's containers over their lives, in resource-seconds of
     * {@code type} (memory-mb, vcores, or a declared type such as {@value #NPU_TYPE}); 0 when none was.
     */
    long resourceSeconds(String appId, String type) {
        var app = cluster.getResourceManager().getRMContext().getRMApps().get(ApplicationId.fromString(appId));
        if (app == null) {
            throw new IllegalArgumentException("YARN has no application " + appId);
        }
        return app.getRMAppMetrics().getResourceSecondsMap().getOrDefault(type, 0L);
    }

    /** The stderr of each container of the application, by container id, as the NodeManager keeps it. */
    Map<String, String> containerLogs(String appId) throws IOException {
        Map<String, String> logs = new java.util.TreeMap<>();
        for (String dir : cluster.getNodeManager(0).getConfig().get(YarnConfiguration.NM_LOG_DIRS).split(",")) {
            Path app = Path.of(dir.replaceFirst("^file:", "")).resolve(appId);
            if (Files.isDirectory(app)) {
                try (Stream<Path> containers = Files.list(app)) {
                    for (Path c : containers.toList()) {
                        Path err = c.resolve("stderr");
                        if (Files.exists(err)) {
                            logs.put(c.getFileName().toString(), Files.readString(err));
                        }
                    }
                }
            }
        }
        return logs;
    }

    /** What a spark-submit did: its exit code and its console (stdout and stderr together). */
    record Submitted(int exitCode, String console, double seconds) {
    }

    /**
     * Runs {@code spark-submit --master yarn --deploy-mode <mode> --jars <bundle> [conf] --class <main> <app jar>
     * <args>} and waits for it (at most {@code timeoutSeconds}; then it is killed and the test fails).
     */
    Submitted submit(String name, String deployMode, Map<String, String> sparkConf, String mainClass, int timeoutSeconds,
            String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(driverJvmOptions());
        command.addAll(List.of("-Xmx512m", "-cp", jarsDir + File.separator + "*" + File.pathSeparator + confDir,
                "org.apache.spark.deploy.SparkSubmit", "--master", "yarn", "--deploy-mode", deployMode,
                "--jars", bundle.toString()));
        Map<String, String> all = new LinkedHashMap<>(baseConf());
        all.putAll(sparkConf);
        all.forEach((k, v) -> command.addAll(List.of("--conf", k + "=" + v)));
        command.addAll(List.of("--class", mainClass, appJar.toString()));
        command.addAll(List.of(args));
        Path log = work.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("HADOOP_CONF_DIR", confDir.toString());
        pb.environment().put("YARN_CONF_DIR", confDir.toString());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        pb.environment().remove("SPARK_TESTING"); // a user's spark-submit, not Spark's test mode
        long t0 = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor();
            throw new AssertionError("spark-submit " + name + " took over " + timeoutSeconds + " s (log: " + log
                    + "):\n" + tail(Files.readString(log)));
        }
        return new Submitted(p.exitValue(), Files.readString(log), (System.nanoTime() - t0) / 1e9);
    }

    /** Settings of every submission: small containers, one attempt, loopback, the Spark jars already on each node. */
    private Map<String, String> baseConf() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("spark.yarn.jars", "local:" + jarsDir + File.separator + "*");
        c.put("spark.yarn.stagingDir", work.resolve("staging").toUri().toString());
        c.put("spark.yarn.maxAppAttempts", "1");
        c.put("spark.yarn.am.memory", "512m");
        c.put("spark.driver.memory", "512m");
        c.put("spark.executor.memory", "512m");
        c.put("spark.executor.cores", "1");
        c.put("spark.ui.enabled", "false");
        String javaHome = System.getProperty("java.home");
        for (String prefix : List.of("spark.executorEnv.", "spark.yarn.appMasterEnv.")) {
            c.put(prefix + "JAVA_HOME", javaHome);
            c.put(prefix + "SPARK_LOCAL_IP", "127.0.0.1");
        }
        String executorJvm = System.getProperty("hcomm.test.executorJavaOptions", "-XX:+UseSerialGC");
        c.put("spark.executor.extraJavaOptions", executorJvm);
        c.put("spark.driver.extraJavaOptions", executorJvm); // the driver in cluster mode (the AM's JVM)
        c.put("spark.yarn.am.extraJavaOptions", executorJvm);
        return c;
    }

    /** This JVM's --add-opens and JIT options, which a client-mode driver (spark-submit's JVM) needs as well. */
    private static List<String> driverJvmOptions() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--add-opens") || a.startsWith("--add-modules")
                        || a.startsWith("-XX:TieredStopAtLevel") || a.equals("-XX:+IgnoreUnrecognizedVMOptions")
                        || a.startsWith("-Dio.netty"))
                .toList();
    }

    static String tail(String s) {
        return s.length() <= 6000 ? s : "..." + s.substring(s.length() - 6000);
    }

    @Override
    public void close() {
        cluster.stop();
    }

    // ---- the jars ----

    private static List<Path> classPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.isEmpty()).map(Path::of).toList();
    }

    /** The class path entries of this project's module {@code module} (its classes and, for examples, test classes). */
    private static List<Path> projectEntries(String module) {
        return classPath().stream().filter(p -> p.toString().contains(File.separator + module + File.separator
                + "target" + File.separator) && Files.isDirectory(p)).toList();
    }

    /** What the bundle holds besides the plugin's and the bridge's classes. */
    private static boolean isJna(Path p) {
        return p.getFileName().toString().matches("jna-[0-9.]+\\.jar");
    }

    /**
     * Links to every jar of this test's class path that a Spark distribution would hold: not the project's classes,
     * not JNA (the bundle has it), not the test-only jars (JUnit, surefire, the YARN minicluster and what it needs).
     */
    private static Path sparkJars(Path dir) throws IOException {
        Files.createDirectories(dir);
        for (Path p : classPath()) {
            String n = p.getFileName().toString();
            if (Files.isDirectory(p) || !n.endsWith(".jar") || isJna(p) || n.startsWith("hcomm-") || n.startsWith("junit-")
                    || n.startsWith("opentest4j") || n.startsWith("apiguardian") || n.startsWith("surefire")
                    || n.startsWith("hadoop-client-minicluster") || n.startsWith("bcp")
                    || n.startsWith("bcutil")) {
                continue;
            }
            Path link = dir.resolve(n);
            if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createSymbolicLink(link, p.toAbsolutePath());
            }
        }
        return dir;
    }

    /** The bundle's file name for this build's line, from the plugin's build-line.properties. */
    private static String bundleName() throws IOException {
        Properties p = new Properties();
        try (InputStream in = MiniYarn.class.getResourceAsStream(
                "/org/apache/spark/shuffle/hcomm/internal/bundle/build-line.properties")) {
            p.load(in);
        }
        return "hcomm-spark" + p.getProperty("spark.line") + "_" + p.getProperty("scala.binary.version") + "-"
                + p.getProperty("version") + ".jar";
    }

    /**
     * The bundle as the build's shade step makes it (the plugin's classes and resources, the bridge's with soft
     * HComm's native library, JNA's), from this build's classes: the test phase runs before the package phase
     * that writes the real one.
     */
    private static Path bundle(Path jar) throws IOException {
        List<Path> parts = new ArrayList<>(projectEntries("spark-plugin"));
        parts.addAll(projectEntries("native-bridge"));
        parts.removeIf(p -> p.toString().contains("test-classes"));
        classPath().stream().filter(MiniYarn::isJna).forEach(parts::add);
        if (parts.size() < 3) {
            throw new IllegalStateException("the plugin's, the bridge's classes and JNA are not all on the class path: "
                    + parts);
        }
        return jarOf(jar, parts);
    }

    /** One jar of the given class folders and jars (the first entry of a name wins; signatures left out). */
    private static Path jarOf(Path jar, List<Path> parts) throws IOException {
        java.util.Set<String> seen = new java.util.HashSet<>();
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            for (Path part : parts) {
                if (Files.isDirectory(part)) {
                    try (Stream<Path> files = Files.walk(part)) {
                        for (Path f : files.filter(Files::isRegularFile).toList()) {
                            String name = part.relativize(f).toString().replace(File.separatorChar, '/');
                            add(out, seen, name, Files.readAllBytes(f));
                        }
                    }
                } else {
                    try (java.util.jar.JarFile in = new java.util.jar.JarFile(part.toFile())) {
                        for (JarEntry e : java.util.Collections.list(in.entries())) {
                            if (!e.isDirectory()) {
                                try (InputStream s = in.getInputStream(e)) {
                                    add(out, seen, e.getName(), s.readAllBytes());
                                }
                            }
                        }
                    }
                }
            }
        }
        return jar;
    }

    private static void add(JarOutputStream out, java.util.Set<String> seen, String name, byte[] bytes) {
        if (name.matches("META-INF/[^/]*\\.(SF|DSA|RSA)") || name.equals("META-INF/MANIFEST.MF")
                || name.endsWith("module-info.class") || !seen.add(name)) {
            return;
        }
        try {
            out.putNextEntry(new JarEntry(name));
            out.write(bytes);
            out.closeEntry();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
