package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.TransportException;

/**
 * A reduce task's index rounds: the offsets of its partitions read from the owners' indexes, for the map outputs
 * whose offsets did not travel with their publication (an index over {@code publishedIndexMaxBytes}). One batch for
 * all owners per round, as many rounds as it takes to fit the borrowed chunks (usually one). Confined to the task's
 * thread; failures leave as {@link Refused} or {@link Failed}, for the fetcher to blame.
 */
final class IndexRounds {
    /** HComm refused to queue the index read of {@code read}. */
    static final class Refused extends Exception {
        final transient MapRead read;
        final transient TransportException cause;

        Refused(MapRead read, TransportException cause) {
            super(cause.getMessage(), cause, false, false);
            this.read = read;
            this.cause = cause;
        }
    }

    /** A round of index reads failed: one of {@code round} is to blame. */
    static final class Failed extends Exception {
        final transient List<MapRead> round;
        final transient TransportException cause;

        Failed(List<MapRead> round, TransportException cause) {
            super(cause.getMessage(), cause, false, false);
            this.round = round;
            this.cause = cause;
        }
    }

    private IndexRounds() {
    }

    /**
     * The offsets of {@code reads} (each output's partitions' start offsets and the end of the last, in {@code reads}
     * order), read into {@code chunks} on {@code batch}.
     */
    static long[][] read(List<MapRead> reads, ReadBatch batch, List<ReceiveBuffer.Chunk> chunks, int chunkSize,
            FetchWaits waits, ShuffleMetrics metrics) throws Refused, Failed {
        long[][] offsets = new long[reads.size()][];
        int i = 0;
        while (i < reads.size()) {
            // one round: the next reads whose offsets fit in the borrowed chunks
            int roundStart = i;
            int chunk = 0;
            int at = 0;
            List<int[]> places = new ArrayList<>();
            try {
                while (i < reads.size()) {
                    MapRead r = reads.get(i);
                    int bytes = 8 * (r.endReduce() - r.firstReduce() + 1);
                    if (bytes > chunkSize) {
                        throw new IllegalStateException("the index of map output " + r.mapId() + " (map index "
                                + r.mapIndex() + ") on executor " + r.owner().executorId() + " for partitions "
                                + r.firstReduce() + ".." + (r.endReduce() - 1) + ": " + (bytes / 8)
                                + " offsets do not fit a chunk of " + chunkSize
                                + " bytes (raise spark.shuffle.hcomm.readChunkSize)");
                    }
                    if (at + bytes > chunkSize) {
                        if (chunk + 1 == chunks.size()) {
                            break;
                        }
                        chunk++;
                        at = 0;
                    }
                    try {
                        batch.read(r.channel(), chunks.get(chunk).address + at,
                                r.indexAddress() + 8L * r.firstReduce(), bytes);
                    } catch (TransportException e) {
                        throw new Refused(r, e);
                    }
                    places.add(new int[] {chunk, at, bytes});
                    at += bytes;
                    i++;
                }
                waits.await(batch, ShuffleMetrics.FetchWait.INDEX, waits.issueDepth());
                metrics.indexRounds.inc();
            } catch (TransportException e) {
                throw new Failed(reads.subList(roundStart, i), e);
            }
            for (int k = roundStart; k < i; k++) {
                int[] p = places.get(k - roundStart);
                ByteBuffer v = chunks.get(p[0]).view.duplicate().order(ByteOrder.BIG_ENDIAN); // Spark's layout
                long[] off = new long[p[2] / 8];
                for (int j = 0; j < off.length; j++) {
                    off[j] = v.getLong(p[1] + 8 * j);
                }
                offsets[k] = off;
            }
        }
        return offsets;
    }
}
