package org.apache.spark.shuffle.hcomm.internal.window;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.shuffle.hcomm.internal.read.ReadPlanner;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * The plan on the communicator path with windows, for the {@link ReadPlanner} of such an executor: each member
 * owner's blocks as ranges of its map outputs, read through a window when the task reads ({@link WindowBlockFetcher});
 * a non-member's blocks by Spark's fetch, by design; a poisoned channel's (a fetch failure under fallback
 * {@code never}) and blocks of other kinds as {@link Fallback} decides. One per executor; thread-safe (it keeps nothing of a task).
 */
public final class WindowReadPlanner implements ReadPlanner.RemotePlanner {
    private static final Logger LOG = LogCategory.READER.logger();

    private final String host;
    private final Fallback fallback;
    private final WindowReads windows;
    /** Names a poisoned member in a fetch failure (windows have no stage channels: no stage ever ended here). */
    private final Blame blame;

    /** A planner of an executor on {@code host} reading through {@code windows}. */
    public WindowReadPlanner(String host, Fallback fallback, WindowReads windows) {
        this.host = host;
        this.fallback = fallback;
        this.windows = windows;
        this.blame = Blame.forWindows(windows.executorId);
    }

    @Override
    public scala.collection.Iterator<Tuple2<BlockId, InputStream>> plan(int shuffleId,
            List<ReadPlanner.OwnerBlocks> remote,
            List<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> sparkBlocks, TaskContext context,
            ShuffleReadMetricsReporter readMetrics) {
        List<WindowBlockFetcher.OwnerRequest> requests = new ArrayList<>();
        for (ReadPlanner.OwnerBlocks o : remote) {
            BlockManagerId owner = o.owner();
            if (!windows.readable(owner.executorId())) {
                String why = windows.unreadable(owner.executorId());
                if (!windows.member(owner.executorId())) {
                    fallback.outsideOneSided("outside|" + owner.executorId(), () -> LOG.info("Shuffle blocks from "
                            + "executor {} are fetched by Spark's transfer: {}", owner.executorId(), why));
                    sparkBlocks.add(new Tuple2<>(owner, ScalaCollections.toSeq(o.blocks())));
                } else { // a poisoned pair: under never a fetch failure, as Spark's stage retry comes most likely
                    // after the driver formed the communicator again to heal it (a task error would abort the job)
                    StageAttempt stage = new StageAttempt(context.stageId(), context.stageAttemptNumber());
                    ReadPlanner.fallBackOrFail(fallback, owner, o.blocks(), sparkBlocks, why,
                            () -> blame.ownerFailed(stage, shuffleId, owner, o.blocks().get(0), why));
                }
                continue;
            }
            Map<Long, Map<Integer, WindowBlockFetcher.Wanted>> wanted = new LinkedHashMap<>();
            Map<Long, int[]> span = new LinkedHashMap<>();
            List<Tuple3<BlockId, Object, Object>> otherKinds = new ArrayList<>();
            for (Tuple3<BlockId, Object, Object> b : o.blocks()) {
                if (!(b._1() instanceof ShuffleBlockId id)) {
                    otherKinds.add(b);
                    continue;
                }
                wanted.computeIfAbsent(id.mapId(), k -> new HashMap<>()).put(id.reduceId(),
                        new WindowBlockFetcher.Wanted(id, (Integer) b._3()));
                int[] s = span.computeIfAbsent(id.mapId(), k -> new int[] {id.reduceId(), id.reduceId() + 1});
                s[0] = Math.min(s[0], id.reduceId());
                s[1] = Math.max(s[1], id.reduceId() + 1);
            }
            if (!otherKinds.isEmpty()) {
                ReadPlanner.fallBack(fallback, shuffleId, owner, otherKinds, sparkBlocks, "blocks of a kind HComm "
                        + "does not read (" + otherKinds.get(0)._1() + ")");
            }
            if (wanted.isEmpty()) {
                continue;
            }
            List<WindowProtocol.Range> ranges = new ArrayList<>();
            for (var e : span.entrySet()) {
                ranges.add(new WindowProtocol.Range(shuffleId, e.getKey(), e.getValue()[0], e.getValue()[1]));
            }
            requests.add(new WindowBlockFetcher.OwnerRequest(owner, !owner.host().equals(host), ranges, wanted));
        }
        WindowBlockFetcher fetcher = requests.isEmpty() ? null : new WindowBlockFetcher(windows, shuffleId, requests,
                readMetrics, SparkEnv.get().serializerManager());
        context.addTaskCompletionListener(ctx -> {
            // as in the endpoint path's plan: a task that stops reading early still merges its read metrics
            ctx.taskMetrics().mergeShuffleReadMetrics();
            if (fetcher != null) {
                fetcher.close();
            }
        });
        return fetcher;
    }
}
