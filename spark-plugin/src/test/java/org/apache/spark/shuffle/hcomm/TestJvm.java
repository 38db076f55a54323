package org.apache.spark.shuffle.hcomm;

/**
 * The JVM options of the executors the tests start: the build's choice (system property
 * {@code hcomm.test.executorJavaOptions}, from the root pom's {@code test.executorJavaOptions}: the serial collector and
 * the tests' JIT), or the serial collector alone when a test runs outside Maven.
 */
public final class TestJvm {
    private TestJvm() {
    }

    public static String executorJavaOptions() {
        return System.getProperty("hcomm.test.executorJavaOptions", "-XX:+UseSerialGC");
    }
}
