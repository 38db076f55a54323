package org.apache.spark.shuffle.hcomm.internal;

import java.util.Map;

import org.apache.spark.SparkEnv;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;

/** The executor component: starts the {@link ExecutorRuntime} at init and closes it at shutdown. */
public final class ShuffleExecutorPlugin implements ExecutorPlugin {
    private ExecutorRuntime runtime;

    @Override
    public void init(PluginContext ctx, Map<String, String> extraConf) {
        LineCheck.verifyLine();
        try {
            runtime = ExecutorRuntime.start(ctx, SparkEnv.get().conf(), extraConf);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("HComm shuffle could not start on executor " + ctx.executorID(), e);
        }
        Runtimes.setExecutor(runtime);
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
            Runtimes.clearExecutor(runtime);
            runtime.close();
        }
    }
}
