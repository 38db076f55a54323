package org.apache.spark.shuffle.hcomm.internal.ui;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections;
import org.apache.spark.status.AppHistoryServerPlugin;
import org.apache.spark.status.ElementTrackingStore;
import org.apache.spark.ui.SparkUI;
import org.apache.spark.util.kvstore.KVIndex;
import org.apache.spark.util.kvstore.KVStore;

/**
 * The history server's side of the HComm tab (registered in {@code META-INF/services}): while an event log is
 * replayed, a listener keeps the latest {@link ShuffleEvents} and stores the {@link ShuffleSummary} they make in the
 * application's store; the application's UI gets the tab when the store has one (so applications run without the
 * plugin show none). Spark makes a new instance for each use.
 */
public final class HistoryPlugin implements AppHistoryServerPlugin {
    @Override
    public scala.collection.immutable.List<SparkListener> createListeners(SparkConf conf, ElementTrackingStore store) {
        return ScalaCollections.toList(List.of(new Replay(store)));
    }

    @Override
    public void setupUI(SparkUI ui) {
        KVStore store = ui.store().store();
        if (Stored.read(store) != null) {
            ui.attachTab(new ShuffleTab(ui, () -> {
                Stored s = Stored.read(store);
                return s == null ? ShuffleSummary.EMPTY : s.summary();
            }));
        }
    }

    /** The summary in the application's store: one entry, rewritten on every event of the plugin. */
    public record Stored(ShuffleSummary summary) {
        static final String KEY = "hcomm-shuffle";

        @KVIndex
        public String id() {
            return KEY;
        }

        static Stored read(KVStore store) {
            try {
                return store.read(Stored.class, KEY);
            } catch (NoSuchElementException e) {
                return null;
            } catch (Exception e) {
                throw new IllegalStateException("could not read the HComm shuffle summary from the store", e);
            }
        }
    }

    /**
     * Rebuilds the summary from the replayed events (the latest row of each stage attempt and executor, the latest
     * communicator state) and writes it to the store once, when the replay flushes it. Events arrive on the replay's
     * one thread.
     */
    private static final class Replay extends SparkListener {
        private final Map<String, ShuffleSummary.StageRow> stages = new LinkedHashMap<>();
        private final Map<String, ShuffleSummary.ExecutorRow> executors = new java.util.TreeMap<>();
        private ShuffleSummary.CommunicatorRow communicator = ShuffleSummary.CommunicatorRow.NONE;
        private boolean seen;

        Replay(ElementTrackingStore store) {
            store.onFlush(() -> {
                write(store);
                return scala.runtime.BoxedUnit.UNIT;
            });
        }

        @Override
        public void onOtherEvent(SparkListenerEvent event) {
            if (event instanceof ShuffleEvents.StageShuffle s) {
                stages.put(s.stage().stageId() + "." + s.stage().attempt(), s.stage());
            } else if (event instanceof ShuffleEvents.ExecutorShuffle e) {
                executors.put(e.executor().executorId(), e.executor());
            } else if (event instanceof ShuffleEvents.CommunicatorShuffle c) {
                communicator = c.communicator();
            } else {
                return;
            }
            seen = true;
        }

        private void write(ElementTrackingStore store) {
            if (seen) {
                List<ShuffleSummary.StageRow> rows = new java.util.ArrayList<>(stages.values());
                rows.sort(ShuffleSummary.StageRow.ORDER);
                store.write(new Stored(new ShuffleSummary(rows, List.copyOf(executors.values()), communicator)));
            }
        }
    }
}
