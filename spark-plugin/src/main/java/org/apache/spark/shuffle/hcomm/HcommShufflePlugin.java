package org.apache.spark.shuffle.hcomm;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.shuffle.hcomm.internal.driver.ShuffleDriverPlugin;
import org.apache.spark.shuffle.hcomm.internal.executor.ShuffleExecutorPlugin;

/**
 * The HComm shuffle's Spark plugin. Activate it together with the shuffle manager:
 * <pre>
 * --conf spark.plugins=org.apache.spark.shuffle.hcomm.HcommShufflePlugin
 * --conf spark.shuffle.manager=org.apache.spark.shuffle.hcomm.HcommShuffleManager
 * </pre>
 * The driver component provisions HComm channels per executor pair for each stage that reads a shuffle and
 * announces stage ends; the executor component owns the executor's endpoint, registered memory and channels.
 */
public final class HcommShufflePlugin implements SparkPlugin {
    @Override
    public DriverPlugin driverPlugin() {
        return new ShuffleDriverPlugin();
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ShuffleExecutorPlugin();
    }
}
