package org.apache.spark.shuffle.hcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.deploy.LocalSparkCluster$;
import org.apache.spark.shuffle.hcomm.internal.driver.DriverState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/**
 * The line's bundle, as a user gets it: run by failsafe after {@code package}, with the bundle in place of the
 * plugin's and the bridge's classes and of JNA on the class path (so the executor JVMs, which inherit the class path
 * in local-cluster mode, load it too). What is inside it, and a shuffle on real executor JVMs from it alone.
 */
class BundleIT {
    /** Read in the test JVM only: the executors load this class too (for the lambdas), without the property. */
    private final Path bundle = Path.of(System.getProperty("hcomm.bundle"));
    private static final int JAVA_17 = 61;
    private static final String COMPAT = "org.apache.spark.shuffle.hcomm.internal.compat.";
    /** Where every class of the bundle lives: the plugin, the bridge and JNA. */
    private static final List<String> CLASS_ROOTS = List.of("org/apache/spark/shuffle/hcomm/", "org/hcomm/bridge/",
            "com/sun/jna/");

    @Test
    void holdsThePluginTheBridgeSoftHcommAndJnaButNoSparkOrScala() throws IOException {
        String expected = "hcomm-spark" + System.getProperty("hcomm.spark.line") + "_"
                + System.getProperty("hcomm.scala.binary") + "-" + System.getProperty("hcomm.version") + ".jar";
        assertEquals(expected, bundle.getFileName().toString());
        try (JarFile jar = new JarFile(bundle.toFile())) {
            List<String> names = jar.stream().map(JarEntry::getName).collect(Collectors.toList());
            List<String> strays = names.stream()
                    .filter(n -> n.endsWith(".class") && CLASS_ROOTS.stream().noneMatch(n::startsWith))
                    .collect(Collectors.toList());
            assertEquals(List.of(), strays, "classes outside the plugin, the bridge and JNA");
            // classes are covered above; nor any other file of Scala or Spark (directories excepted)
            assertTrue(names.stream().noneMatch(n -> !n.endsWith("/") && (n.startsWith("scala/")
                    || n.startsWith("org/apache/spark/") && !n.startsWith("org/apache/spark/shuffle/hcomm/"))),
                    "Scala or Spark inside the bundle");
            for (String c : List.of("org/apache/spark/shuffle/hcomm/HcommShuffleManager.class",
                    "org/apache/spark/shuffle/hcomm/HcommShufflePlugin.class",
                    "org/apache/spark/shuffle/hcomm/internal/compat/Sorters.class",
                    "org/apache/spark/shuffle/hcomm/internal/compat/StartupOrder.class",
                    "org/hcomm/bridge/transport/Transport.class", "com/sun/jna/Native.class")) {
                assertTrue(names.contains(c), c + " missing");
            }
            List<String> natives = names.stream().filter(n -> n.matches(".*\\.(so|dll|dylib|jnilib|a)$"))
                    .sorted().collect(Collectors.toList());
            System.out.println(bundle.getFileName() + ": " + names.size() + " entries, native libraries:\n  "
                    + String.join("\n  ", natives));
            assertTrue(natives.contains("linux-x86-64/libhcomm_soft.so"), "soft HComm missing: " + natives);
            assertTrue(natives.contains("com/sun/jna/linux-x86-64/libjnidispatch.so"), "JNA's dispatch: " + natives);
            assertEquals(62, elfMachine(jar, "linux-x86-64/libhcomm_soft.so"), "soft HComm is not an x86-64 library");
            // aarch64 (Kunpeng): built wherever the build had the cross compiler, which it skips without (saying so)
            if (natives.contains("linux-aarch64/libhcomm_soft.so") || onPath("aarch64-linux-gnu-gcc")) {
                assertTrue(natives.contains("linux-aarch64/libhcomm_soft.so"), "soft HComm for aarch64: " + natives);
                assertTrue(natives.contains("com/sun/jna/linux-aarch64/libjnidispatch.so"), "JNA's: " + natives);
                assertEquals(183, elfMachine(jar, "linux-aarch64/libhcomm_soft.so"),
                        "soft HComm under linux-aarch64/ is not an aarch64 library");
            }
            var attributes = jar.getManifest().getMainAttributes();
            assertEquals(System.getProperty("hcomm.spark.line"), attributes.getValue("Hcomm-Spark-Line"));
            assertEquals(System.getProperty("hcomm.scala.binary"), attributes.getValue("Hcomm-Scala-Binary-Version"));
        }
    }

    /** e_machine of an ELF file in the jar (62: x86-64, 183: aarch64). */
    private static int elfMachine(JarFile jar, String entry) throws IOException {
        byte[] elf;
        try (InputStream in = jar.getInputStream(jar.getEntry(entry))) {
            elf = in.readNBytes(20);
        }
        assertTrue(elf[0] == 0x7f && elf[1] == 'E' && elf[2] == 'L' && elf[3] == 'F', entry + " is not an ELF file");
        return (elf[18] & 0xff) | (elf[19] & 0xff) << 8;
    }

    private static boolean onPath(String program) {
        return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, program)));
    }

    @Test
    void itsCompatClassesAreTheLinesOwnVariants() throws IOException, ReflectiveOperationException {
        String line = System.getProperty("hcomm.spark.line");
        // read from the bundle's class, not the constant javac would inline into this test
        boolean managerFirst = Class.forName(COMPAT + "StartupOrder").getField("MANAGER_BEFORE_PLUGINS")
                .getBoolean(null);
        assertEquals("3.5".equals(line), managerFirst, "StartupOrder");
        try (JarFile jar = new JarFile(bundle.toFile())) {
            boolean sixArgs = classRefers(jar, "Sorters", "RowBasedChecksum");
            assertEquals(!line.equals("3.5") && !line.equals("4.0"), sixArgs, "Sorters: the 6-argument sorter");
            boolean scala212 = classRefers(jar, "ScalaCollections", "scala/collection/JavaConverters");
            assertEquals("2.12".equals(System.getProperty("hcomm.scala.binary")), scala212, "ScalaCollections");
        }
    }

    /** Whether a compat class of the bundle names {@code what} in its constant pool. */
    private static boolean classRefers(JarFile jar, String compatClass, String what) throws IOException {
        JarEntry entry = jar.getJarEntry(COMPAT.replace('.', '/') + compatClass + ".class");
        try (InputStream in = jar.getInputStream(entry)) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1).contains(what);
        }
    }

    @Test
    void everyClassRunsOnJava17AndTheProjectsOwnAreJava17Bytecode() throws IOException {
        Map<Integer, Integer> ownVersions = new TreeMap<>();
        Map<Integer, Integer> jnaVersions = new TreeMap<>();
        try (JarFile jar = new JarFile(bundle.toFile())) {
            for (JarEntry e : jar.stream().filter(e -> e.getName().endsWith(".class")).toList()) {
                int major = majorVersion(jar, e);
                (e.getName().startsWith("com/sun/jna/") ? jnaVersions : ownVersions).merge(major, 1, Integer::sum);
            }
        }
        System.out.println(bundle.getFileName() + ": class-file major versions, own " + ownVersions + ", JNA "
                + jnaVersions);
        assertEquals(List.of(JAVA_17), new ArrayList<>(ownVersions.keySet()), "the project's classes: " + ownVersions);
        assertTrue(jnaVersions.keySet().stream().allMatch(v -> v <= JAVA_17), "JNA needs more than Java 17");
    }

    @Test
    @Timeout(value = 660, unit = TimeUnit.SECONDS)
    void javaDashJarDoctorPassesWithSoftHcommAndJudgesTheSparkLineItFinds() throws Exception {
        String line = System.getProperty("hcomm.spark.line");
        String scala = System.getProperty("hcomm.scala.binary");
        Path home = java.nio.file.Files.createTempDirectory("spark-home");
        try {
            Path jars = java.nio.file.Files.createDirectories(home.resolve("jars"));
            Path core = java.nio.file.Files.createFile(jars.resolve("spark-core_" + scala + "-" + line + ".0.jar"));
            String out = doctor(home, 0);
            for (String check : List.of("library", "symbols", "abi", "product", "end-to-end", "spark")) {
                assertTrue(out.lines().anyMatch(l -> l.startsWith("PASS  " + check)), check + " did not pass:\n" + out);
            }
            assertTrue(out.contains("GB/s") && out.contains(bundle.getFileName() + " is the bundle for its line"), out);
            // another line's Spark: the Spark check fails, naming the bundle to use
            java.nio.file.Files.delete(core);
            String other = line.equals("4.2") ? "spark-core_2.12-3.5.9.jar" : "spark-core_2.13-4.2.0.jar";
            java.nio.file.Files.createFile(jars.resolve(other));
            String wrong = doctor(home, 1);
            assertTrue(wrong.lines().anyMatch(l -> l.startsWith("FAIL  spark") && l.contains("use hcomm-spark")),
                    wrong);
            assertTrue(wrong.contains("this bundle does not fit the Spark found") && !wrong.contains("executors"),
                    wrong);
        } finally {
            try (var files = java.nio.file.Files.walk(home)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** {@code java -jar <bundle> doctor} with {@code SPARK_HOME=sparkHome}, 16 MiB read; expects the exit code. */
    private String doctor(Path sparkHome, int exit) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar",
                bundle.toString(), "doctor", "--bytes", Long.toString(16L << 20));
        pb.environment().put("SPARK_HOME", sparkHome.toString());
        Path log = java.nio.file.Files.createTempFile("bundle-doctor", ".out");
        try {
            Process p = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(300, TimeUnit.SECONDS)) { // longer than the doctor's own deadlines
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                throw new AssertionError("the doctor did not end in 300 s");
            }
            String out = java.nio.file.Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(exit, p.exitValue(), out);
            return out;
        } finally {
            java.nio.file.Files.delete(log);
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aShuffleOnTwoExecutorJvmsReadsOneSidedlyWithTheBundleAlone() throws Exception {
        assertEquals(bundle, jarOf(HcommShuffleManager.class), "the plugin must come from the bundle");
        assertEquals(bundle, jarOf(com.sun.jna.Native.class), "JNA must come from the bundle");
        SparkConf conf = new SparkConf()
                .setMaster("local-cluster[2,1,1024]")
                .setAppName("BundleIT")
                .set("spark.plugins", HcommShufflePlugin.class.getName())
                .set("spark.shuffle.manager", HcommShuffleManager.class.getName())
                .set("spark.shuffle.hcomm.fallback", "never")
                .set("spark.shuffle.hcomm.receiveBufferSize", "16m")
                .set("spark.shuffle.hcomm.sendArenaSize", "64m")
                .set("spark.executor.extraJavaOptions", TestJvm.executorJavaOptions())
                .set("spark.ui.enabled", "false");
        SparkContext sc = new SparkContext(conf);
        try {
            awaitExecutors(sc, 2);
            JavaSparkContext jsc = new JavaSparkContext(sc);
            Map<Integer, Long> got = jsc.parallelize(IntStream.rangeClosed(1, 100_000).boxed().toList(), 6)
                    .mapToPair(i -> new Tuple2<>(i % 101, (long) i))
                    .reduceByKey(Long::sum, 4)
                    .collectAsMap();
            Map<Integer, Long> want = IntStream.rangeClosed(1, 100_000).boxed()
                    .collect(Collectors.groupingBy(i -> i % 101, Collectors.summingLong(i -> (long) i)));
            assertEquals(want, new TreeMap<>(got));
            // each executor's jar of the plugin and architecture (an aarch64 run must not have x86-64 executors)
            List<List<String>> executors = jsc.parallelize(Arrays.asList(1, 2, 3, 4, 5, 6, 7, 8), 8)
                    .map(i -> {
                        Thread.sleep(100);
                        return List.of(jarOf(HcommShuffleManager.class).toString(), System.getProperty("os.arch"));
                    }).distinct().collect();
            List<String> executorJars = executors.stream().map(e -> e.get(0)).distinct().toList();
            assertEquals(List.of(bundle.toString()), executorJars, "executors loaded the plugin from elsewhere");
            String arch = System.getProperty("os.arch");
            List<String> executorArchs = executors.stream().map(e -> e.get(1)).distinct().toList();
            assertEquals(List.of(arch), executorArchs, "executors on another architecture than the test JVM");
            System.out.println("BundleIT: the test JVM and its executor JVMs on " + arch + ", "
                    + System.getProperty("java.home"));
            DriverState driver = DriverState.current();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            // every executor's last report in: nothing live, and created = destroyed in the same wait (a report
            // arriving between two separate reads of them made them differ once, on 4.0)
            while (driver.clusterTotal("channelsLive") != 0 || driver.clusterTotal("bytesReadOneSided") == 0
                    || driver.clusterTotal("channelsCreated") != driver.clusterTotal("channelsDestroyed")) {
                assertTrue(System.nanoTime() < deadline, "one-sided bytes "
                        + driver.clusterTotal("bytesReadOneSided") + ", channels live " + driver.clusterTotal(
                                "channelsLive") + ", created " + driver.clusterTotal("channelsCreated")
                        + ", destroyed " + driver.clusterTotal("channelsDestroyed"));
                Thread.sleep(50);
            }
            assertEquals(0, driver.clusterTotal("bytesReadFallback"));
        } finally {
            sc.stop();
        }
        assertTrue(LocalSparkCluster$.MODULE$.get().isEmpty(), "a local cluster outlived its SparkContext");
    }

    private static void awaitExecutors(SparkContext sc, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (sc.statusTracker().getExecutorInfos().length < n + 1 || DriverState.current().registeredExecutors() < n) {
            assertTrue(!sc.isStopped() && System.nanoTime() < deadline, "executors did not start");
            Thread.sleep(100);
        }
    }

    private static int majorVersion(JarFile jar, JarEntry e) throws IOException {
        try (InputStream raw = jar.getInputStream(e); DataInputStream in = new DataInputStream(raw)) {
            assertEquals(0xCAFEBABE, in.readInt(), e.getName() + " is not a class file");
            in.readUnsignedShort();
            return in.readUnsignedShort();
        }
    }

    private static Path jarOf(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath();
    }
}
