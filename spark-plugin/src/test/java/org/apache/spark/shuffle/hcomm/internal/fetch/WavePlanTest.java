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

/** The pure plan of a reduce task's one-sided reads: parts, pieces of at most a chunk, waves that grow 1, 2, 4 ... */
class WavePlanTest {
    private static final int CHUNK = 1024;

    private static MapRead read(String owner, long mapId, int firstReduce, int endReduce, long dataAddress) {
        BlockManagerId id = BlockManagerId$.MODULE$.apply(owner, "host", 7337, Option.empty());
        return new MapRead(id, false, mapId, (int) mapId, firstReduce, endReduce, 0, dataAddress, null, List.of());
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
        WavePlan plan = new WavePlan(3, List.of(a), new long[][] {{40, 140, 140, 440}}, chunks(4), CHUNK);
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

    @Test
    void rangesAreCutIntoChunksAndWavesGrowUpToHalfTheChunks() {
        MapRead a = read("a", 1, 0, 1, 0);
        MapRead b = read("b", 2, 0, 1, 0);
        // 10 chunks of a, 5.5 chunks of b, 8 borrowed chunks: two sets of 4
        WavePlan plan = new WavePlan(0, List.of(a, b), new long[][] {{0, 10 * CHUNK}, {0, 5 * CHUNK + 512}},
                chunks(8), CHUNK);
        assertEquals(16, plan.pieces.size());
        assertEquals(512, plan.pieces.get(15).length);
        List<Integer> sizes = new ArrayList<>();
        for (WavePlan.Wave w : plan.waves) {
            sizes.add(w.last - w.first + 1);
        }
        assertEquals(List.of(1, 2, 4, 4, 4, 1), sizes, "waves of 1, 2, then 4 chunks (half of 8)");
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
                () -> new WavePlan(0, List.of(a), new long[][] {{0, 10, 5, 20}}, chunks(2), CHUNK));
        assertSame(a, bad.read);
        assertEquals(5, bad.reduceId);
    }
}
