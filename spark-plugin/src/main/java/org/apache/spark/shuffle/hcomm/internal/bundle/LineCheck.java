package org.apache.spark.shuffle.hcomm.internal.bundle;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.Arrays;
import java.util.Optional;
import java.util.Properties;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.hcomm.internal.compat.StartupOrder;

/**
 * Start-up checks that the jar fits the Spark it runs in, made before anything else of the plugin runs, so that a
 * mismatch is one clear error at start-up rather than a linkage error deep in a task:
 * <ul>
 *   <li>the jar was built for the running Spark line and Scala binary version (each line has its own bundle,
 *       {@code hcomm-spark<line>_<scala>-<version>.jar});</li>
 *   <li>on lines whose SparkEnv creates the shuffle manager before it fetches {@code --jars} (Spark 3.5), the driver
 *       refuses a jar that came only with {@code --jars}: the executors could not load the manager and would be
 *       relaunched over and over while the job waits.</li>
 * </ul>
 */
public final class LineCheck {
    /** What the build wrote into {@code build-line.properties}. */
    record BuiltFor(String sparkLine, String scalaBinary, String version) {
        /** The bundle's file name for this line. */
        public String bundle() {
            return bundleName(sparkLine, scalaBinary, version);
        }
    }

    private LineCheck() {
    }

    /** The bundle's file name for a Spark line and Scala binary version. */
    static String bundleName(String sparkLine, String scalaBinary, String version) {
        return "hcomm-spark" + sparkLine + "_" + scalaBinary + "-" + version + ".jar";
    }

    /**
     * Fails when this jar was built for another Spark line or Scala version than the running one. Called first by
     * the shuffle manager's constructor and by both plugin components, since which of them starts first differs
     * between lines (a 4.x driver thus checks twice; it reads one small resource).
     */
    public static void verifyLine() {
        lineMismatch(builtFor(), org.apache.spark.package$.MODULE$.SPARK_VERSION(),
                scala.util.Properties$.MODULE$.versionNumberString()).ifPresent(m -> {
                    throw new IllegalStateException(m);
                });
    }

    /**
     * On the driver of a line that creates the shuffle manager before it fetches {@code --jars} (Spark 3.5): fails
     * when the executors will not be able to load the manager. The plugin itself is loaded after {@code --jars} on
     * every line, so only the manager calls this.
     */
    public static void verifyManagerLoadable(SparkConf conf) {
        if (!StartupOrder.MANAGER_BEFORE_PLUGINS) {
            return;
        }
        boolean onJvmClassPath = LineCheck.class.getClassLoader() == ClassLoader.getSystemClassLoader();
        jarsOnlyProblem(builtFor(), conf.get("spark.master", ""), onJvmClassPath, jarOf(LineCheck.class),
                conf.get("spark.driver.extraClassPath", ""), conf.get("spark.executor.extraClassPath", ""))
                .ifPresent(m -> {
                    throw new IllegalStateException(m);
                });
    }

    /** Why a jar built for {@code built} cannot run on this Spark and Scala version, if it cannot. */
    static Optional<String> lineMismatch(BuiltFor built, String sparkVersion, String scalaVersion) {
        String line = majorMinor(sparkVersion);
        String scala = majorMinor(scalaVersion);
        if (line.equals(built.sparkLine()) && scala.equals(built.scalaBinary())) {
            return Optional.empty();
        }
        return Optional.of(built.bundle() + " is the HComm shuffle for Spark " + built.sparkLine() + " with Scala "
                + built.scalaBinary() + ", but this JVM runs Spark " + sparkVersion + " with Scala " + scalaVersion
                + ": use " + bundleName(line, scala, built.version()) + " (one jar per Spark line; supported: "
                + "3.5 with Scala 2.12 or 2.13, 4.0, 4.1 and 4.2 with Scala 2.13)");
    }

    /**
     * On Spark 3.5, why the executors will not find the shuffle manager, if it is certain that they will not, given
     * where the driver loaded this jar from: from the application's jars ({@code --jars}, not the JVM's class path),
     * or from {@code spark.driver.extraClassPath}, while {@code spark.executor.extraClassPath} names no HComm jar. A
     * jar in the driver's {@code $SPARK_HOME/jars} is taken to be in every node's. A wildcard entry names the jar
     * when its directory here holds the jar, or is not here to look at. In local mode the executor is the driver's JVM
     * and nothing is needed.
     */
    static Optional<String> jarsOnlyProblem(BuiltFor built, String master, boolean onJvmClassPath,
            Optional<Path> jar, String driverClassPath, String executorClassPath) {
        boolean local = master.startsWith("local") && !master.startsWith("local-cluster");
        String name = jar.map(p -> String.valueOf(p.getFileName())).orElse(built.bundle());
        boolean fromDriverExtraClassPath = onJvmClassPath && jar.isPresent() && names(driverClassPath, name);
        if (local || (onJvmClassPath && !fromDriverExtraClassPath) || names(executorClassPath, name)) {
            return Optional.empty();
        }
        String path = jar.map(Path::toString).orElse("/path/to/" + name);
        String how = fromDriverExtraClassPath ? name + " is on spark.driver.extraClassPath but not on "
                + "spark.executor.extraClassPath, so" : name + " passed only with --jars";
        return Optional.of("On Spark " + built.sparkLine() + " the executors create the shuffle manager "
                + "(spark.shuffle.manager) before they fetch --jars: " + how + " cannot be loaded there and the "
                + "executors would fail over and over. Put the jar on the class path of every JVM instead: --conf "
                + "spark.driver.extraClassPath=" + path + " --conf spark.executor.extraClassPath=" + path
                + " (the jar at that path on every node), or copy it into $SPARK_HOME/jars on every node. Spark 4.0 "
                + "and later load it from --jars.");
    }

    /** Whether a class path names an HComm jar: this one by name, any other hcomm*.jar, or a wildcard holding it. */
    private static boolean names(String classPath, String jarName) {
        return Arrays.stream(classPath.split("[:,]"))
                .map(String::trim)
                .filter(e -> !e.isEmpty())
                .anyMatch(e -> {
                    Path entry = Path.of(e);
                    String file = String.valueOf(entry.getFileName());
                    if (file.equals("*")) {
                        Path dir = entry.getParent();
                        return dir == null || !Files.isDirectory(dir) || Files.exists(dir.resolve(jarName));
                    }
                    return file.equals(jarName) || (file.startsWith("hcomm") && file.endsWith(".jar"));
                });
    }

    private static String majorMinor(String version) {
        String[] parts = version.split("[.\\-]");
        return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
    }

    private static Optional<Path> jarOf(Class<?> c) {
        CodeSource source = c.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Path.of(source.getLocation().toURI()));
        } catch (URISyntaxException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The line this jar was built for, from {@code build-line.properties} (read at each call: start-up only). */
    static BuiltFor builtFor() {
        Properties p = new Properties();
        try (InputStream in = LineCheck.class.getResourceAsStream("build-line.properties")) {
            if (in == null) {
                throw new IllegalStateException("build-line.properties is missing from the HComm shuffle jar");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new BuiltFor(p.getProperty("spark.line"), p.getProperty("scala.binary.version"),
                p.getProperty("version"));
    }
}
