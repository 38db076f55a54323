package org.apache.spark.shuffle.hcomm.internal;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Where the shuffle manager finds the plugin's runtime in the same JVM. Spark creates the plugin and the
 * ShuffleManager separately and gives neither a handle on the other (which starts first differs between Spark
 * lines), so this is the one piece of static state: set by the plugin at init, cleared at shutdown, read lazily by
 * the manager, which works in either order.
 */
public final class Runtimes {
    private static final AtomicReference<ExecutorRuntime> EXECUTOR = new AtomicReference<>();
    private static final AtomicReference<DriverState> DRIVER = new AtomicReference<>();

    private Runtimes() {
    }

    static void setExecutor(ExecutorRuntime rt) {
        EXECUTOR.set(rt);
    }

    static void clearExecutor(ExecutorRuntime rt) {
        EXECUTOR.compareAndSet(rt, null);
    }

    /** The executor runtime of this JVM, or null when the plugin is not active here. */
    public static ExecutorRuntime executor() {
        return EXECUTOR.get();
    }

    static void setDriver(DriverState d) {
        DRIVER.set(d);
    }

    static void clearDriver(DriverState d) {
        DRIVER.compareAndSet(d, null);
    }

    /** The driver state of this JVM, or null. */
    public static DriverState driver() {
        return DRIVER.get();
    }
}
