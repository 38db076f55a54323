package org.apache.spark.shuffle.hcomm.internal.write;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.hcomm.bridge.transport.HcommTransport;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.TransportOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Committed Spark files placed into a real send arena (soft HComm's registered memory), or their files registered
 * when the arena has no room or {@code writeTarget=arena} says not to copy.
 */
class FilePlacementTest {
    private static final long[] LENGTHS = {300, 0, 700};

    private final ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
    private final byte[] bytes = new byte[1000];
    private HcommTransport transport;
    private SendArena arena;
    private Publication placed;
    @TempDir
    Path dir;

    private FilePlacement open(long arenaSize, boolean writesOnce) throws Exception {
        transport = HcommTransport.open(new TransportOptions(InetAddress.getByName("127.0.0.1"), false, null,
                Duration.ofSeconds(10), Duration.ofSeconds(10)));
        arena = new SendArena(transport, arenaSize, "1");
        return new FilePlacement(transport, arena, metrics, writesOnce);
    }

    @AfterEach
    void close() {
        if (placed != null) {
            for (Region r : new Region[] {placed.mappedIndex, placed.mappedData}) {
                if (r != null) {
                    r.close();
                }
            }
        }
        if (arena != null) {
            arena.close();
        }
        if (transport != null) {
            transport.close();
            assertTrue(transport.liveObjects().isEmpty(), () -> "native objects left: " + transport.liveObjects());
        }
    }

    /** Places an output of {@link #LENGTHS} from Spark's data and index files. */
    private FilePlacement.Addresses place(FilePlacement placement, long[] lengths) throws Exception {
        new Random(7).nextBytes(bytes);
        File data = Files.write(dir.resolve("shuffle_0_5_0.data"), bytes).toFile();
        ByteBuffer index = ByteBuffer.allocate(8 * (lengths.length + 1)).order(ByteOrder.BIG_ENDIAN);
        long at = 0;
        index.putLong(at);
        for (long len : lengths) {
            index.putLong(at += len);
        }
        File indexFile = Files.write(dir.resolve("shuffle_0_5_0.index"), index.array()).toFile();
        placed = new Publication(5, 8L * (lengths.length + 1), at);
        return placement.place(0, placed, lengths, data, indexFile);
    }

    private static byte[] read(ByteBuffer view) {
        byte[] out = new byte[view.remaining()];
        view.get(out);
        return out;
    }

    private static long[] offsets(ByteBuffer index) {
        index.order(ByteOrder.BIG_ENDIAN);
        long[] out = new long[index.remaining() / 8];
        for (int i = 0; i < out.length; i++) {
            out[i] = index.getLong();
        }
        return out;
    }

    @Test
    void whatFitsIsCopiedIntoTheArenaWithSparksIndexLayout() throws Exception {
        FilePlacement.Addresses at = place(open(1 << 20, false), LENGTHS);
        assertEquals(arena.address(placed.indexOffset), at.index());
        assertEquals(arena.address(placed.dataOffset), at.data());
        assertArrayEquals(new long[] {0, 300, 300, 1000}, offsets(arena.view(placed.indexOffset, placed.indexBytes)));
        assertArrayEquals(bytes, read(arena.view(placed.dataOffset, placed.dataBytes)));
        assertNull(placed.mappedIndex);
        assertNull(placed.mappedData);
        assertEquals(1, metrics.outputsCopied.getCount());
    }

    @Test
    void aFullArenaRegistersSparksFiles() throws Exception {
        FilePlacement placement = open(4096, false);
        assertEquals(0, arena.allocate(4096));
        FilePlacement.Addresses at = place(placement, LENGTHS);
        assertEquals(-1, placed.indexOffset);
        assertEquals(-1, placed.dataOffset);
        assertEquals(placed.mappedIndex.address(), at.index());
        assertEquals(placed.mappedData.address(), at.data());
        assertArrayEquals(new long[] {0, 300, 300, 1000}, offsets(placed.mappedIndex.buffer()));
        assertArrayEquals(bytes, read(placed.mappedData.buffer()));
        assertEquals(1, metrics.indexesMapped.getCount());
        assertEquals(1, metrics.outputsMapped.getCount());
    }

    @Test
    void writesOnceRegistersTheDataFileInsteadOfCopying() throws Exception {
        FilePlacement.Addresses at = place(open(1 << 20, true), LENGTHS);
        assertEquals(arena.address(placed.indexOffset), at.index());
        assertEquals(-1, placed.dataOffset);
        assertEquals(placed.mappedData.address(), at.data());
        assertEquals(0, metrics.outputsCopied.getCount());
        assertEquals(1, metrics.outputsMapped.getCount());
    }

    @Test
    void anEmptyOutputHasOnlyAnIndex() throws Exception {
        FilePlacement.Addresses at = place(open(1 << 20, false), new long[] {0, 0});
        assertEquals(at.index(), at.data());
        assertEquals(-1, placed.dataOffset);
        assertNull(placed.mappedData);
    }
}
