package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.apache.spark.TaskKilledException;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.hcomm.internal.channels.StageChannels;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;
import scala.Tuple3;

/**
 * How a failed one-sided read leaves a reduce task, decided in this one class: which owner it names (the channel that
 * failed, or among several owners of a batch the first whose probe fails), and whether it is Spark's
 * {@link FetchFailedException} naming that owner (Spark recomputes its map outputs) or, when the task's stage attempt
 * ended while it read, a {@link TaskKilledException} that blames no one. One per executor; thread-safe.
 */
public final class Blame {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    /**
     * How long a reader whose read failed waits for the driver's end of its stage attempt before it blames the
     * owner: the end reaches the executors at about the same time, and an owner that hears it first destroys its
     * ends of the attempt's channels under the reads of tasks still running in it.
     */
    private static final long STAGE_END_GRACE_MS = 2_000;

    /** Whether a stage attempt ended, waiting up to the given milliseconds for the driver's word. */
    @FunctionalInterface
    interface StageEnds {
        boolean awaitEnd(StageAttempt stage, long millis) throws InterruptedException;
    }

    private final String executorId;
    private final StageEnds stageEnds;
    private final StageChannels channels;
    private final ReadResources resources;

    /** For reads over a stage attempt's channels: the attempt ends when its channels' end arrives. */
    public Blame(String executorId, StageChannels channels, ReadResources resources) {
        this(executorId, channels::awaitEnd, channels, resources);
    }

    private Blame(String executorId, StageEnds stageEnds, StageChannels channels, ReadResources resources) {
        this.executorId = executorId;
        this.stageEnds = stageEnds;
        this.channels = channels;
        this.resources = resources;
    }

    /**
     * For reads through windows ({@link #ownerFailed} only): they use no stage channels, so no stage attempt's end
     * is ever what failed them.
     */
    public static Blame forWindows(String executorId) {
        return new Blame(executorId, (stage, millis) -> false, null, null);
    }

    /**
     * The read to name for a failed batch over {@code candidates}: the first on the channel that failed. When the
     * failure names no channel (a wait covering the whole batch timed out) and the batch read from several owners,
     * the first owner whose probe fails (see {@link #probe}); the first candidate when every owner answers.
     */
    static MapRead blame(TransportException e, List<MapRead> candidates, Predicate<MapRead> answers) {
        List<MapRead> owners = new ArrayList<>();
        for (MapRead r : candidates) {
            if (r.channel() == e.channel()) {
                return r;
            }
            if (owners.stream().noneMatch(o -> o.channel() == r.channel())) {
                owners.add(r);
            }
        }
        if (owners.size() > 1) {
            for (MapRead r : owners) {
                if (!answers.test(r)) {
                    return r;
                }
            }
        }
        return candidates.get(0);
    }

    /**
     * Whether {@code read}'s owner answers a read of its own (8 bytes of its index into {@code scratch}, bounded by
     * the read timeout) on a fresh batch: on the failed batch it would queue behind the reads that did not finish.
     * A probe's failure rides along in {@code failure}; {@code timedOut} hears of a probe that timed out (its read
     * may still land in {@code scratch}).
     */
    boolean probe(long scratch, MapRead read, TransportException failure, Runnable timedOut) {
        try (ReadBatch alone = resources.newProbeBatch()) {
            alone.read(read.channel(), scratch, read.indexAddress() + 8L * read.firstReduce(), 8);
            alone.await();
            return true;
        } catch (TransportException e) {
            if (e.isTimeout()) {
                timedOut.run();
            }
            failure.addSuppressed(e);
            return false;
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            return false;
        }
    }

    /**
     * Whether a read of {@code stage} failed because the stage attempt ended (waiting up to a short grace for the
     * driver's word): then the task is a zombie of a failed attempt, and the owner it read from is not to blame.
     */
    boolean stageEnded(StageAttempt stage) {
        try {
            return stageEnds.awaitEnd(stage, STAGE_END_GRACE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Whether the channels of {@code stage} are destroyed: nothing read over them writes any more. */
    boolean channelsDestroyed(StageAttempt stage) {
        return channels.channelsDestroyed(stage);
    }

    /**
     * How a task fails whose stage attempt ended while it read: killed, blaming no executor. A fetch failure would
     * name an owner that only destroyed its ends of the ended attempt's channels, and while the attempt is still
     * Spark's latest (before the stage is resubmitted) Spark unregisters the named executor's map outputs for it.
     */
    private TaskKilledException endedWhileReading(StageAttempt stage, String what, Throwable cause) {
        LOG.info("Executor {}: {} ended while a task read ({}): the task stops without blaming an owner", executorId,
                stage, what, cause);
        return new TaskKilledException(stage + " ended while this task read its shuffle blocks (" + what + ")");
    }

    /**
     * The one way a read failure leaves the fetcher: a transport failure in a stage attempt that ended meanwhile
     * kills the task instead of naming the owner; anything else is a fetch failure of block
     * {@code (shuffleId, read's map, reduceId)} naming the owner.
     */
    RuntimeException readFailed(StageAttempt stage, int shuffleId, MapRead read, int reduceId, String why,
            Throwable cause) {
        ShuffleBlockId id = new ShuffleBlockId(shuffleId, read.mapId(), reduceId);
        String what = why + ": " + id + " from executor " + read.owner().executorId()
                + (cause == null ? "" : " (" + cause.getMessage() + ")");
        if (cause instanceof TransportException && stageEnded(stage)) {
            return endedWhileReading(stage, what, cause);
        }
        return sneaky(new FetchFailedException(read.owner(), shuffleId, read.mapId(), read.mapIndex(),
                reduceId, what, cause));
    }

    /**
     * An owner that did not answer the stage's channel setup, or whose map outputs are not in the directory (it was
     * lost, and the driver forgot its outputs before Spark's map output tracker did), cannot serve its blocks
     * one-sidedly; with fallback `never` that is a fetch failure naming it (as Spark's own fetch from a lost executor
     * is), so Spark recomputes its map outputs instead of failing the task, with the same stale map statuses, until
     * the job aborts. A task of a stage attempt that has ended is killed instead: it must not blame a healthy owner.
     */
    public RuntimeException ownerFailed(StageAttempt stage, int shuffleId, BlockManagerId owner,
            Tuple3<BlockId, Object, Object> first, String why) {
        if (stageEnded(stage)) {
            return endedWhileReading(stage, why, null);
        }
        BlockId block = first._1();
        long mapId = -1;
        int reduceId = -1;
        if (block instanceof ShuffleBlockId id) {
            mapId = id.mapId();
            reduceId = id.reduceId();
        } else if (block instanceof ShuffleBlockBatchId id) {
            mapId = id.mapId();
            reduceId = id.startReduceId();
        }
        int mapIndex = (Integer) first._3();
        return sneaky(new FetchFailedException(owner, shuffleId, mapId, mapIndex, reduceId,
                "HComm cannot read shuffle " + shuffleId + " from executor " + owner.executorId() + ": "
                        + why + ", and " + HcommConf.FALLBACK.key() + "=never forbids Spark's fetch", null));
    }

    /**
     * Throws {@code t} as it is (Spark's {@code FetchFailedException}, which a read must raise unwrapped so that Spark
     * recomputes the owner's map outputs) through signatures that declare none: Scala iterators, streams, lambdas.
     * Declared to return so that a caller can write {@code throw Blame.sneaky(t)}. The window reads use it too.
     */
    @SuppressWarnings("unchecked")
    public static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
