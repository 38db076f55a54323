package org.apache.spark.shuffle.hcomm.internal.compat;

/**
 * Spark 3.5's start-up order: SparkEnv creates the shuffle manager before the plugins start and before the
 * executors fetch the application's jars.
 *
 * <p>One of the compat layer's twins: the build compiles the one its Spark line needs (the parent pom's spark-*
 * profiles choose the directory).
 */
public final class StartupOrder {
    /**
     * Whether SparkEnv creates the shuffle manager before the plugins start, from the JVM's own class path (Spark
     * 3.5), or after them, with the application's jars in reach (4.0 on, SPARK-45762).
     */
    public static final boolean MANAGER_BEFORE_PLUGINS = true;

    private StartupOrder() {
    }
}
