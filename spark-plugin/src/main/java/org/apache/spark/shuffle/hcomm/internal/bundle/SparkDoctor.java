package org.apache.spark.shuffle.hcomm.internal.bundle;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.hcomm.bridge.doctor.Doctor;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.Finding;

/**
 * The bundle's {@code Main-Class}: {@code java -jar hcomm-spark<line>_<scala>-<version>.jar doctor [options]} runs
 * the bridge's doctor ({@link Doctor}) and adds the Spark check: which Spark this host has (on the class path, else
 * {@code $SPARK_HOME/jars}) and whether this bundle is the one for its line ({@link LineCheck}).
 * {@code java -jar <bundle> npu-discovery-script} prints Spark's resource discovery script for Ascend NPUs (the
 * bundle's copy of {@code examples/npu-discovery.sh}) to stdout.
 */
public final class SparkDoctor {
    private static final Pattern SPARK_CORE = Pattern.compile("spark-core_(\\d+\\.\\d+)-(\\d+\\.\\d+\\.\\d+.*)\\.jar");

    private SparkDoctor() {
    }

    /** The command that prints the NPU discovery script. */
    static final String NPU_DISCOVERY_SCRIPT = "npu-discovery-script";

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(NPU_DISCOVERY_SCRIPT)) {
            if (args.length > 1) {
                System.err.println("usage: " + NPU_DISCOVERY_SCRIPT + " (takes no options; prints the script)");
                System.exit(2);
            }
            byte[] script = npuDiscoveryScript();
            System.out.write(script, 0, script.length);
            System.out.flush();
            System.exit(0);
        }
        System.exit(Doctor.main(args, o -> check(System.getenv("SPARK_HOME")), System.out));
    }

    /** The NPU discovery script's bytes, as the bundle carries them. */
    static byte[] npuDiscoveryScript() {
        try (InputStream in = SparkDoctor.class.getResourceAsStream("npu-discovery.sh")) {
            if (in == null) {
                throw new IllegalStateException("npu-discovery.sh is missing from this jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The Spark check: this bundle against the Spark found on the class path or under {@code sparkHome}. */
    static Finding check(String sparkHome) {
        LineCheck.BuiltFor built = LineCheck.builtFor();
        Optional<String[]> found = onClassPath().or(() -> inSparkHome(sparkHome));
        if (found.isEmpty()) {
            return Finding.warn(Check.SPARK, "no Spark found (none on the class path, "
                    + (sparkHome == null ? "no $SPARK_HOME" : "no spark-core jar in " + sparkHome + "/jars")
                    + "); this is " + built.bundle(), "set SPARK_HOME to the Spark the jobs run on and run the "
                    + "doctor again");
        }
        String[] spark = found.get(); // {spark version, scala version, where}
        return LineCheck.lineMismatch(built, spark[0], spark[1])
                .map(m -> Finding.fail(Check.SPARK, m + " (Spark found " + spark[2] + ")",
                        "use the bundle named above; every line's bundle is built by mvn package -P<line profile>"))
                .orElseGet(() -> Finding.pass(Check.SPARK, "Spark " + spark[0] + " with Scala " + spark[1]
                        + " (" + spark[2] + "): " + built.bundle() + " is the bundle for its line"));
    }

    private static Optional<String[]> onClassPath() {
        try {
            Class<?> pkg = Class.forName("org.apache.spark.package$");
            Object module = pkg.getField("MODULE$").get(null);
            String version = (String) pkg.getMethod("SPARK_VERSION").invoke(module);
            return Optional.of(new String[] {version, scala.util.Properties$.MODULE$.versionNumberString(),
                "on the class path"});
        } catch (ReflectiveOperationException | LinkageError e) {
            return Optional.empty();
        }
    }

    private static Optional<String[]> inSparkHome(String sparkHome) {
        if (sparkHome == null || sparkHome.isBlank()) {
            return Optional.empty();
        }
        File[] jars = new File(sparkHome, "jars").listFiles();
        return jars == null ? Optional.empty() : Arrays.stream(jars)
                .map(f -> SPARK_CORE.matcher(f.getName()))
                .filter(Matcher::matches)
                .findFirst()
                .map(m -> new String[] {m.group(2), m.group(1), "in " + sparkHome + "/jars"});
    }
}
