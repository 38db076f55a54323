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

    /** Rebuilds the summary from the replayed events. Called on the replay's one thread. */
    private static final class Replay extends SparkListener {
        private final ElementTrackingStore store;
        private final Map<String, ShuffleSummary.StageRow> stages = new LinkedHashMap<>();
        private ShuffleEvents.AppShuffle app;

        Replay(ElementTrackingStore store) {
            this.store = store;
        }

        @Override
        public void onOtherEvent(SparkListenerEvent event) {
            if (event instanceof ShuffleEvents.StageShuffle s) {
                stages.put(s.stage().stageId() + "." + s.stage().attempt(), s.stage());
            } else if (event instanceof ShuffleEvents.AppShuffle a) {
                app = a;
            } else {
                return;
            }
            List<ShuffleSummary.StageRow> rows = new java.util.ArrayList<>(stages.values());
            rows.sort(java.util.Comparator.comparingInt(ShuffleSummary.StageRow::stageId)
                    .thenComparingInt(ShuffleSummary.StageRow::attempt));
            store.write(new Stored(new ShuffleSummary(rows, app == null ? List.of() : app.executors(),
                    app == null ? ShuffleSummary.CommunicatorRow.NONE : app.communicator())));
        }
    }
}
