package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.Map;

import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.shuffle.hcomm.internal.bundle.LineCheck;
import org.apache.spark.shuffle.hcomm.internal.conf.ChannelSecret;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleEvents;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleTab;
import org.apache.spark.ui.SparkUI;

/**
 * The driver component: reads the driver's {@link HcommSettings} (validating the configuration), keeps the
 * {@link DriverState}, follows the stages, adds the HComm tab to the live UI and posts the tab's content as events
 * (for the event log, whence the history server shows it). Spark calls {@code receive} on its RPC threads and the
 * listener on its listener bus; the state is thread-safe.
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
        java.util.function.Consumer<SparkListenerEvent> events = e -> sc.listenerBus().post(e);
        StageListener listener = new StageListener(state, events);
        state.tab().onLateRow(listener::post);
        sc.addSparkListener(listener);
        if (sc.ui().isDefined()) { // spark.ui.enabled=false: no tab; the events still go to the event log
            SparkUI ui = sc.ui().get();
            ui.attachTab(new ShuffleTab(ui, state::summary));
        }
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

    /**
     * Provisions a stage attempt's channels when it is submitted (if it reads a shuffle) and ends them after; at the
     * end posts the attempt's row so far and the changed executors' totals (each later report of the attempt posts
     * them again: the executors report after the end). Posts come from the listener bus and from RPC threads.
     */
    private static final class StageListener extends SparkListener {
        private final DriverState state;
        private final java.util.function.Consumer<SparkListenerEvent> events;
        private ShuffleSummary.CommunicatorRow communicatorPosted = ShuffleSummary.CommunicatorRow.NONE;

        StageListener(DriverState state, java.util.function.Consumer<SparkListenerEvent> events) {
            this.state = state;
            this.events = events;
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
            StageAttempt stage = key(event.stageInfo());
            state.endStage(stage);
            post(state.tab().stageRow(stage));
        }

        /**
         * Posts a stage attempt's row (if any report named it), the rows of the executors that reported since the
         * last post, and the communicator's state when it changed.
         */
        void post(ShuffleSummary.StageRow row) {
            if (row != null) {
                events.accept(new ShuffleEvents.StageShuffle(row));
            }
            state.tab().changedExecutors().forEach(e -> events.accept(new ShuffleEvents.ExecutorShuffle(e)));
            ShuffleSummary.CommunicatorRow now = state.tab().communicatorRow();
            synchronized (this) {
                if (now.equals(communicatorPosted)) {
                    return;
                }
                communicatorPosted = now;
            }
            events.accept(new ShuffleEvents.CommunicatorShuffle(now));
        }

        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved event) {
            state.executorRemoved(event.executorId());
        }
    }
}
