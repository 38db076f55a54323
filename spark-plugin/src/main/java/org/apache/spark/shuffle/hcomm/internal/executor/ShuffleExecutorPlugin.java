package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.Map;

import org.apache.spark.SparkContext$;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.shuffle.hcomm.internal.bundle.LineCheck;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.slf4j.Logger;

/**
 * The executor component: starts the {@link ExecutorRuntime} at init and closes it at shutdown. In local mode
 * ({@code local}, {@code local[N]}, {@code local[*]}) the one executor runs inside the driver's JVM (its id is
 * {@code driver}) and every shuffle block is local: nothing is read one-sidedly there, so no runtime starts (no
 * library loaded, no memory registered) and Spark's sort shuffle serves every block, whatever the fallback setting.
 * Local mode also starts this component before Spark has given the block manager its id. Spark calls {@code init}
 * before the executor runs tasks, the task callbacks from task threads, and {@code shutdown} once.
 */
public final class ShuffleExecutorPlugin implements ExecutorPlugin {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    private ExecutorRuntime runtime;

    /** Whether this is local mode's executor, the one inside the driver's JVM. */
    static boolean inDriverJvm(PluginContext ctx) {
        return SparkContext$.MODULE$.DRIVER_IDENTIFIER().equals(ctx.executorID());
    }

    @Override
    public void init(PluginContext ctx, Map<String, String> extraConf) {
        LineCheck.verifyLine();
        if (inDriverJvm(ctx)) {
            LOG.info("HComm shuffle: local mode, one executor in the driver's JVM and no remote block; Spark's sort "
                    + "shuffle serves every block (HComm is not loaded)");
            return;
        }
        try {
            runtime = ExecutorRuntime.start(ctx, HcommSettings.of(SparkEnv.get().conf()), extraConf);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("HComm shuffle could not start on executor " + ctx.executorID(), e);
        }
    }

    @Override
    public void onTaskSucceeded() {
        if (runtime != null) {
            runtime.taskEnded();
        }
    }

    @Override
    public void onTaskFailed(TaskFailedReason reason) {
        if (runtime != null) {
            runtime.taskEnded();
        }
    }

    @Override
    public void shutdown() {
        if (runtime != null) {
            runtime.close();
        }
    }
}
