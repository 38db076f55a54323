package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.storage.ShuffleBlockId;

/**
 * What a reduce task's one-sided reads are, once the offsets of its partitions are known: the partitions to hand
 * out ({@link Part}, positions in the task's byte sequence), the sequence laid over the borrowed chunks end to end and
 * cut where a map output or a chunk ends ({@link Piece}: one read each), and the pieces grouped into waves
 * ({@link Wave}) that land while the task deserialises the ones before. Pure: no I/O, confined to the task's thread.
 */
final class WavePlan {
    /** A reduce partition to hand out: its bytes are [start, end) of the task's sequence. */
    record Part(ShuffleBlockId blockId, MapRead read, long start, long end) {
    }

    /** At most one chunk of one map output's range. */
    static final class Piece {
        final MapRead read;
        final long src;
        final int length;
        final long start; // position in the task's sequence
        int wave;
        ReceiveBuffer.Chunk chunk;
        int chunkOffset;

        Piece(MapRead read, long src, int length, long start) {
            this.read = read;
            this.src = src;
            this.length = length;
            this.start = start;
        }
    }

    static final class Wave {
        final int first;
        int last; // inclusive
        boolean landed;
        long issuedAt;
        int depth; // the round trip it lands in (FetchWaits)

        Wave(int first) {
            this.first = first;
        }
    }

    /** A published index whose offsets go backwards: the output of {@code read} cannot be read. */
    static final class BadIndex extends RuntimeException {
        final MapRead read;
        final int reduceId;

        BadIndex(MapRead read, int reduceId) {
            super("published index is not monotonic", null, false, false);
            this.read = read;
            this.reduceId = reduceId;
        }
    }

    final List<Part> parts = new ArrayList<>();
    final List<Piece> pieces = new ArrayList<>();
    final List<Wave> waves = new ArrayList<>();
    /** The task's bytes fit the chunks it borrowed: every wave on chunks of its own. */
    final boolean fitsBorrowed;
    private int cursor; // piece the consumer is in

    /**
     * Plans the reads of {@code reads}, whose offsets ({@code offsets[i]} for {@code reads.get(i)}: its partitions'
     * start offsets and the end of the last) travelled with the publications or were read from the owners' indexes;
     * the first wave fills {@code firstWaveChunks} chunks (the link's bandwidth-delay product, at least one).
     */
    WavePlan(int shuffleId, List<MapRead> reads, long[][] offsets, List<ReceiveBuffer.Chunk> chunks, int chunkSize,
            int firstWaveChunks) {
        long position = 0;
        for (int i = 0; i < reads.size(); i++) {
            MapRead r = reads.get(i);
            long[] off = offsets[i];
            long base = off[0];
            for (int k = 0; k + 1 < off.length; k++) {
                long len = off[k + 1] - off[k];
                if (len < 0) {
                    throw new BadIndex(r, r.firstReduce() + k);
                }
                if (len > 0) {
                    parts.add(new Part(new ShuffleBlockId(shuffleId, r.mapId(), r.firstReduce() + k), r,
                            position + off[k] - base, position + off[k + 1] - base));
                }
            }
            // the task's sequence lies over its chunks end to end: a piece ends where the output or a chunk ends
            long total = off[off.length - 1] - base;
            for (long done = 0; done < total;) {
                long at = position + done;
                int len = (int) Math.min(total - done, chunkSize - at % chunkSize);
                pieces.add(new Piece(r, r.dataAddress() + base + done, len, at));
                done += len;
            }
            position += total;
        }
        int spanned = (int) ((position + chunkSize - 1) / chunkSize);
        fitsBorrowed = spanned <= chunks.size();
        int first = Math.max(1, firstWaveChunks);
        // wave w spans min(first * 2^w, half the chunks) of the sequence's chunks: the first fills the link's
        // bandwidth-delay product, and each later one lands while the task deserialises the ones before. When the
        // sequence fits the borrowed chunks, it lies on them as it is, so each wave has chunks of its own and all can
        // be in flight at once; else waves take two sets of chunks in turn. Waves grow gradually rather than one big
        // second wave: nothing of a wave can be deserialised before all of it landed.
        int perSet = Math.max(1, chunks.size() / 2);
        int firstCap = Math.min(first, perSet);
        int waveStart = 0; // the wave's first chunk of the sequence
        int waveEnd = 0;
        int base = 0; // the borrowed chunk its first chunk of the sequence lies on
        for (int j = 0; j < pieces.size(); j++) {
            Piece p = pieces.get(j);
            int k = (int) (p.start / chunkSize);
            if (k >= waveEnd) {
                int w = waves.size();
                waves.add(new Wave(j));
                waveStart = waveEnd;
                waveEnd = waveStart + (int) Math.min(perSet, (long) firstCap << Math.min(w, 30));
                base = fitsBorrowed ? waveStart : (w % 2) * perSet;
            }
            p.wave = waves.size() - 1;
            p.chunk = chunks.get(base + k - waveStart);
            p.chunkOffset = (int) (p.start - (long) k * chunkSize);
            waves.get(p.wave).last = j;
        }
    }

    /** The piece holding sequence position {@code pos} (the consumer moves forward, so this walks from the last). */
    Piece pieceAt(long pos) {
        while (cursor + 1 < pieces.size() && pieces.get(cursor + 1).start <= pos) {
            cursor++;
        }
        while (cursor > 0 && pieces.get(cursor).start > pos) {
            cursor--;
        }
        return pieces.get(cursor);
    }

    /** The piece where {@code part} begins. */
    Piece firstPieceOf(Part part) {
        Piece first = pieces.get(0);
        for (Piece p : pieces) {
            if (p.start <= part.start() && part.start() < p.start + p.length) {
                first = p;
            }
        }
        return first;
    }

    /** The first reduce partition with bytes in piece {@code p}. */
    int firstReduceIn(Piece p) {
        for (Part part : parts) {
            if (part.read() == p.read && part.end() > p.start) {
                return part.blockId().reduceId();
            }
        }
        return p.read.firstReduce();
    }

    /** The map outputs wave {@code w} reads from, in order. */
    List<MapRead> readsIn(Wave w) {
        List<MapRead> in = new ArrayList<>();
        for (int j = w.first; j <= w.last; j++) {
            if (!in.contains(pieces.get(j).read)) {
                in.add(pieces.get(j).read);
            }
        }
        return in;
    }
}
