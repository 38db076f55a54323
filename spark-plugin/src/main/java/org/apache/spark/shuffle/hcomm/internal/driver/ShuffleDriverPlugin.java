package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.Map;

import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.shuffle.hcomm.internal.bundle.LineCheck;
import org.apache.spark.shuffle.hcomm.internal.conf.ChannelSecret;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;

/**
 * The driver component: reads the driver's {@link HcommSettings} (validating the configuration), keeps the
 * {@link DriverState} and follows the stages. Spark calls {@code receive} on its RPC threads and the listener on its
 * listener bus; the state is thread-safe.
 */
public final class ShuffleDriverPlugin implements DriverPlugin {
    private DriverState state;

    @Override
    public Map<String, String> init(SparkContext sc, PluginContext pluginContext) {
        LineCheck.verifyLine();
        HcommSettings settings = HcommSettings.of(sc.conf());
        YarnResourceCheck.verify(sc.conf());
        state = new DriverState(new CommunicatorFormer(settings.communicatorSettle().toMillis(),
                settings.communicatorFormTimeout().toMillis()));
        state.install();
        sc.addSparkListener(new StageListener(state));
        return ChannelSecret.forExecutors(settings);
    }

    @Override
    public void registerMetrics(String appId, PluginContext pluginContext) {
        SparkEnv.get().metricsSystem().registerSource(state.metrics());
    }

    @Override
    public Object receive(Object message) {
        return state.receive(message);
    }

    @Override
    public void shutdown() {
        if (state != null) {
            state.uninstall();
        }
    }

    /** Provisions a stage attempt's channels when it is submitted (if it reads a shuffle) and ends them after. */
    private static final class StageListener extends SparkListener {
        private final DriverState state;

        StageListener(DriverState state) {
            this.state = state;
        }

        private static StageAttempt key(StageInfo info) {
            return new StageAttempt(info.stageId(), info.attemptNumber());
        }

        @Override
        public void onStageSubmitted(SparkListenerStageSubmitted event) {
            if (!event.stageInfo().parentIds().isEmpty()) {
                state.provision(key(event.stageInfo()));
            }
        }

        @Override
        public void onStageCompleted(SparkListenerStageCompleted event) {
            state.endStage(key(event.stageInfo()));
        }

        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved event) {
            state.executorRemoved(event.executorId());
        }
    }
}
