package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * The pure plan of a reduce task's one-sided reads: parts, pieces of at most a chunk, waves that grow from the
 * link's bandwidth-delay product (1, 2, 4 ... chunks, at most half of them), each on chunks of its own when the
 * bytes fit the borrowed chunks, else on two sets of chunks in turn.
 */
class WavePlanTest {
    private static final int CHUNK = 1024;

    static MapRead read(String owner, long mapId, int firstReduce, int endReduce, long dataAddress) {
        BlockManagerId id = BlockManagerId$.MODULE$.apply(owner, "host", 7337, Option.empty());
        return new MapRead(id, false, mapId, (int) mapId, firstReduce, endReduce, 0, dataAddress, null, List.of(), null);
    }

    private static List<ReceiveBuffer.Chunk> chunks(int n) {
        List<ReceiveBuffer.Chunk> c = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            c.add(new ReceiveBuffer.Chunk(i, 1_000_000L + (long) i * CHUNK, ByteBuffer.allocate(CHUNK)));
        }
        return c;
    }

    @Test
    void partitionsBecomePartsAndEmptyOnesAreSkipped() {
        MapRead a = read("a", 7, 2, 5, 50_000);
        // partitions 2, 3, 4 of map 7: 100 bytes, none, 300 bytes, from offset 40 of the output
        WavePlan plan = new WavePlan(3, List.of(a), new long[][] {{40, 140, 140, 440}}, chunks(4), CHUNK, 1);
        assertEquals(2, plan.parts.size());
        assertEquals(2, plan.parts.get(0).blockId().reduceId());
        assertEquals(4, plan.parts.get(1).blockId().reduceId());
        assertEquals(0, plan.parts.get(0).start());
        assertEquals(100, plan.parts.get(1).start());
        assertEquals(400, plan.parts.get(1).end());
        assertEquals(1, plan.pieces.size(), "one contiguous range of 400 bytes, one piece");
        assertEquals(50_040, plan.pieces.get(0).src);
        assertEquals(2, plan.firstReduceIn(plan.pieces.get(0)), "the first partition with bytes");
    }

    /** The plan of one output of owner "a" ({@code aBytes}), one of owner "b", through {@code borrowed} chunks. */
    private static WavePlan twoOwners(long aBytes, long bBytes, int borrowed, int firstWaveChunks) {
        return new WavePlan(0, List.of(read("a", 1, 0, 1, 0), read("b", 2, 0, 1, 0)),
                new long[][] {{0, aBytes}, {0, bBytes}}, chunks(borrowed), CHUNK, firstWaveChunks);
    }

    @Test
    void rangesAreCutIntoChunksAndWavesGrowUpToHalfTheChunks() {
        // 10 chunks of a, 5.5 chunks of b, 8 borrowed chunks: two sets of 4
        WavePlan plan = twoOwners(10 * CHUNK, 5 * CHUNK + 512, 8, 1);
        MapRead a = plan.pieces.get(0).read;
        MapRead b = plan.pieces.get(15).read;
        assertEquals(16, plan.pieces.size());
        assertEquals(512, plan.pieces.get(15).length);
        assertEquals(List.of(1, 2, 4, 4, 4, 1), waveSizes(plan), "waves of 1, 2, then 4 chunks (half of 8)");
        assertEquals(false, plan.fitsBorrowed);
        assertEquals(List.of(a, b), plan.readsIn(plan.waves.get(3)), "a wave spans owners");
        // alternate waves use alternate halves of the chunks
        assertSame(plan.pieces.get(0).chunk, plan.pieces.get(3).chunk, "waves 0 and 2 start in the first set");
        assertEquals(4, plan.pieces.get(1).chunk.index, "wave 1 in the second set");
        assertSame(plan.pieces.get(10), plan.pieceAt(10L * CHUNK + 5));
        assertSame(plan.pieces.get(2), plan.pieceAt(2L * CHUNK), "the cursor walks back too");
    }

    @Test
    void anIndexGoingBackwardsNamesTheOutputAndPartition() {
        MapRead a = read("a", 9, 4, 7, 0);
        WavePlan.BadIndex bad = assertThrows(WavePlan.BadIndex.class,
                () -> new WavePlan(0, List.of(a), new long[][] {{0, 10, 5, 20}}, chunks(2), CHUNK, 1));
        assertSame(a, bad.read);
        assertEquals(5, bad.reduceId);
    }

    private static List<Integer> waveSizes(WavePlan plan) {
        List<Integer> sizes = new ArrayList<>();
        for (WavePlan.Wave w : plan.waves) {
            sizes.add(w.last - w.first + 1);
        }
        return sizes;
    }

    @Test
    void bytesThatFitTheBorrowedChunksStartWithTheLinksProductOnDistinctChunks() {
        // 3 chunks of a and 2.5 of b: 6 chunks of 8 borrowed; the link's product is 2 chunks, half the chunks 4
        WavePlan plan = twoOwners(3 * CHUNK, 2 * CHUNK + 512, 8, 2);
        assertEquals(true, plan.fitsBorrowed);
        assertEquals(List.of(2, 4), waveSizes(plan), "a first wave of the link's product, then twice that");
        List<Integer> used = new ArrayList<>();
        for (WavePlan.Piece p : plan.pieces) {
            used.add(p.chunk.index);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5), used, "no chunk serves both waves: both can be in flight");
    }

    @Test
    void bytesThatFitGrowFromTheLinksProductEachWaveOnChunksOfItsOwn() {
        MapRead a = read("a", 1, 0, 1, 0);
        // 14 chunks of 16 borrowed; the link's product is one chunk: waves of 1, 2, 4, then at most half the chunks
        WavePlan plan = new WavePlan(0, List.of(a), new long[][] {{0, 14 * CHUNK}}, chunks(16), CHUNK, 1);
        assertEquals(true, plan.fitsBorrowed);
        assertEquals(List.of(1, 2, 4, 7), waveSizes(plan));
        List<Integer> used = new ArrayList<>();
        for (WavePlan.Piece p : plan.pieces) {
            used.add(p.chunk.index);
        }
        assertEquals(java.util.stream.IntStream.range(0, 14).boxed().toList(), used,
                "no chunk serves two waves: no wave waits for the one before to be consumed");
    }

    @Test
    void outputsSlightlyOverAChunkLieEndToEndNotAChunkAndAHalfEach() {
        // 4 outputs of a chunk and 100 bytes: 4.4 chunks of sequence fit 5 borrowed (a chunk each would need 8)
        List<MapRead> reads = new ArrayList<>();
        long[][] offsets = new long[4][];
        for (int i = 0; i < 4; i++) {
            reads.add(read("o" + i, i, 0, 1, 100_000L * i));
            offsets[i] = new long[] {0, CHUNK + 100};
        }
        WavePlan plan = new WavePlan(0, reads, offsets, chunks(5), CHUNK, 1);
        assertEquals(true, plan.fitsBorrowed);
        long landed = 0;
        for (WavePlan.Piece p : plan.pieces) {
            assertEquals(p.start % CHUNK, p.chunkOffset, "the sequence lies on the chunks as it is");
            assertEquals(p.start / CHUNK, p.chunk.index);
            assertEquals(true, p.chunkOffset + p.length <= CHUNK, "no piece crosses a chunk");
            landed += p.length;
        }
        assertEquals(4L * (CHUNK + 100), landed);
        assertEquals(8, plan.pieces.size(), "each output cut once, where a chunk ends");
        assertEquals(100_000L + 924, plan.pieces.get(3).src, "the second output's second piece: after its 924 bytes "
                + "that ended the first chunk");
    }

    @Test
    void aFirstWaveAsLargeAsEverythingIsOneWave() {
        MapRead a = read("a", 1, 0, 1, 0);
        WavePlan plan = new WavePlan(0, List.of(a), new long[][] {{0, 3 * CHUNK}}, chunks(8), CHUNK, 100);
        assertEquals(List.of(3), waveSizes(plan));
        assertEquals(true, plan.fitsBorrowed);
    }

    @Test
    void wavesThatDoNotFitStartAtTheLinksProduct() {
        MapRead a = read("a", 1, 0, 1, 0);
        // 20 chunks through 8 borrowed (two sets of 4); the link's product is 3 chunks
        WavePlan plan = new WavePlan(0, List.of(a), new long[][] {{0, 20 * CHUNK}}, chunks(8), CHUNK, 3);
        assertEquals(false, plan.fitsBorrowed);
        assertEquals(List.of(3, 4, 4, 4, 4, 1), waveSizes(plan));
        assertEquals(4, plan.pieces.get(3).chunk.index, "wave 1 in the second set");
    }
}
