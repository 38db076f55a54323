package org.apache.spark.shuffle.hcomm.internal.bundle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The start-up checks' decisions: which Spark a jar fits, and when Spark 3.5's executors could not load it. */
class LineCheckTest {
    private static final LineCheck.BuiltFor SPARK42 = new LineCheck.BuiltFor("4.2", "2.13", "0.2.0");
    private static final LineCheck.BuiltFor SPARK35 = new LineCheck.BuiltFor("3.5", "2.12", "0.2.0");
    private static final Optional<Path> JAR = Optional.of(Path.of("/opt/hcomm/hcomm-spark3.5_2.12-0.2.0.jar"));

    @Test
    void thisBuildNamesItsOwnLine() {
        LineCheck.BuiltFor built = LineCheck.builtFor();
        String running = org.apache.spark.package$.MODULE$.SPARK_VERSION();
        assertTrue(running.startsWith(built.sparkLine() + "."), built + " vs Spark " + running);
        assertEquals(Optional.empty(), LineCheck.lineMismatch(built, running,
                scala.util.Properties$.MODULE$.versionNumberString()));
    }

    @Test
    void anyPatchReleaseOfTheLineFits() {
        assertEquals(Optional.empty(), LineCheck.lineMismatch(SPARK42, "4.2.1", "2.13.18"));
        assertEquals(Optional.empty(), LineCheck.lineMismatch(SPARK35, "3.5.2", "2.12.15"));
    }

    @Test
    void anotherLineOrScalaNamesTheJarToUse() {
        String m = LineCheck.lineMismatch(SPARK42, "3.5.9", "2.12.18").orElseThrow();
        assertTrue(m.startsWith("hcomm-spark4.2_2.13-0.2.0.jar is the HComm shuffle for Spark 4.2 with Scala 2.13"), m);
        assertTrue(m.contains("this JVM runs Spark 3.5.9 with Scala 2.12.18: use hcomm-spark3.5_2.12-0.2.0.jar"), m);
        String scala = LineCheck.lineMismatch(SPARK35, "3.5.9", "2.13.8").orElseThrow();
        assertTrue(scala.contains("use hcomm-spark3.5_2.13-0.2.0.jar"), scala);
        assertTrue(LineCheck.lineMismatch(SPARK42, "4.1.3", "2.13.17").orElseThrow()
                .contains("use hcomm-spark4.1_2.13-0.2.0.jar"));
    }

    @Test
    void spark35JarsOnlyIsRefusedWithTheSettingsThatFixIt() {
        String m = LineCheck.jarsOnlyProblem(SPARK35, "spark://master:7077", false, JAR, "", "").orElseThrow();
        assertTrue(m.contains("passed only with --jars cannot be loaded there"), m);
        assertTrue(m.contains("--conf spark.driver.extraClassPath=/opt/hcomm/hcomm-spark3.5_2.12-0.2.0.jar"
                + " --conf spark.executor.extraClassPath=/opt/hcomm/hcomm-spark3.5_2.12-0.2.0.jar"), m);
        assertTrue(m.contains("$SPARK_HOME/jars"), m);
        assertTrue(LineCheck.jarsOnlyProblem(SPARK35, "local-cluster[2,1,1024]", false, JAR, "", "/other.jar:/")
                .isPresent());
    }

    @Test
    void spark35JarOnlyOnTheDriversExtraClassPathIsRefusedToo() {
        String m = LineCheck.jarsOnlyProblem(SPARK35, "spark://m:7077", true, JAR, JAR.get().toString(), "")
                .orElseThrow();
        assertTrue(m.contains("is on spark.driver.extraClassPath but not on spark.executor.extraClassPath"), m);
    }

    @Test
    void spark35JarOnTheClassPathOrNamedForExecutorsOrLocalModeIsFine(@TempDir Path dir) throws IOException {
        // on the JVM's class path without the driver's extraClassPath naming it: $SPARK_HOME/jars
        assertEquals(Optional.empty(), LineCheck.jarsOnlyProblem(SPARK35, "spark://m:7077", true, JAR, "", ""));
        assertEquals(Optional.empty(), LineCheck.jarsOnlyProblem(SPARK35, "spark://m:7077", false, JAR, "",
                "/other.jar:/nodes/hcomm/hcomm-spark3.5_2.12-0.2.0.jar"));
        assertEquals(Optional.empty(), LineCheck.jarsOnlyProblem(SPARK35, "spark://m:7077", true, JAR,
                JAR.get().toString(), "/nodes/hcomm.jar"), "a renamed HComm jar");
        assertEquals(Optional.empty(), LineCheck.jarsOnlyProblem(SPARK35, "yarn", false, JAR, "",
                "/no/such/dir/*"), "a wildcard that cannot be looked into here");
        Files.createFile(dir.resolve("hcomm-spark3.5_2.12-0.2.0.jar"));
        assertEquals(Optional.empty(), LineCheck.jarsOnlyProblem(SPARK35, "yarn", false, JAR, "", dir + "/*"));
        assertEquals(Optional.empty(), LineCheck.jarsOnlyProblem(SPARK35, "local[4]", false, JAR, "", ""));
    }

    @Test
    void spark35WildcardOfADirectoryWithoutTheJarIsNotEnough(@TempDir Path dir) {
        assertTrue(LineCheck.jarsOnlyProblem(SPARK35, "spark://m:7077", false, JAR, "", dir + "/*").isPresent());
    }
}
