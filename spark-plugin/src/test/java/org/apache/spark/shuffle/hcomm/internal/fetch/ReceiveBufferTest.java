package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.Region;
import org.junit.jupiter.api.Test;

class ReceiveBufferTest {

    /** A region over plain direct memory: the receive buffer only needs an address-like number and a view. */
    static Region region(int bytes) {
        ByteBuffer memory = ByteBuffer.allocateDirect(bytes);
        return new Region() {
            @Override
            public String tag() {
                return "test";
            }

            @Override
            public long address() {
                return 1L << 20;
            }

            @Override
            public long size() {
                return bytes;
            }

            @Override
            public ByteBuffer buffer() {
                return memory.duplicate();
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void readersThatOverlapAllGetChunks() throws InterruptedException {
        ReceiveBuffer buffer = new ReceiveBuffer(region(64 << 10), 1 << 10); // 64 chunks
        List<List<ReceiveBuffer.Chunk>> readers = new ArrayList<>();
        for (int i = 0; i < 7; i++) { // e.g. one SQL task with several shuffle readers open at once
            List<ReceiveBuffer.Chunk> got = buffer.borrow(2, 40, 0);
            assertTrue(got.size() >= 2, "reader " + i + " got " + got.size() + " chunks");
            readers.add(got);
        }
        assertEquals(40, readers.get(0).size(), "a lone reader takes what it asks for, up to three quarters");
        assertEquals(6, readers.get(1).size(), "with a reader holding chunks, a quarter of the 24 free");
        int lent = readers.stream().mapToInt(List::size).sum();
        assertEquals(lent, buffer.onLoan());
        readers.forEach(buffer::giveBack);
        assertEquals(0, buffer.onLoan());
    }

    @Test
    void aLoneReaderLeavesAQuarterOfTheFreeChunks() throws InterruptedException {
        ReceiveBuffer buffer = new ReceiveBuffer(region(64 << 10), 1 << 10); // 64 chunks
        List<ReceiveBuffer.Chunk> lone = buffer.borrow(2, 64, 0);
        assertEquals(48, lone.size(), "the lone reader leaves 16 of 64");
        assertEquals(4, buffer.borrow(2, 64, 0).size(), "the next reader gets a quarter of those 16 at once");
        ReceiveBuffer small = new ReceiveBuffer(region(6 << 10), 1 << 10); // 6 chunks: a quarter is less than two
        assertEquals(4, small.borrow(2, 6, 0).size(), "a lone reader leaves at least two chunks");
        assertEquals(2, small.borrow(2, 6, 0).size());
    }

    @Test
    void readersThatWaitTogetherEachGetAQuarter() throws Exception {
        ReceiveBuffer buffer = new ReceiveBuffer(region(64 << 10), 1 << 10); // 64 chunks
        List<ReceiveBuffer.Chunk> all = drain(buffer);
        List<List<ReceiveBuffer.Chunk>> got = Collections.synchronizedList(new ArrayList<>());
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> {
                try {
                    got.add(buffer.borrow(2, 64, 10_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            waiters.add(t);
        }
        for (Thread t : waiters) {
            while (t.isAlive() && t.getState() != Thread.State.TIMED_WAITING) {
                Thread.sleep(1);
            }
        }
        buffer.giveBack(all); // the first to wake sees the other waiting, the second sees the first holding chunks
        for (Thread t : waiters) {
            t.join(10_000);
        }
        List<Integer> sizes = got.stream().map(List::size).sorted().toList();
        assertEquals(List.of(12, 16), sizes, "a quarter of 64, then a quarter of the 48 left; not the lone share");
    }

    @Test
    void chunksAreDisjointViewsAtTheirAddresses() throws InterruptedException {
        ReceiveBuffer buffer = new ReceiveBuffer(region(8 << 10), 1 << 10);
        List<ReceiveBuffer.Chunk> all = buffer.borrow(8, 8, 0);
        assertEquals(8, all.size());
        for (ReceiveBuffer.Chunk c : all) {
            assertEquals(1 << 10, c.view.capacity());
            assertEquals((1L << 20) + (long) c.index * (1 << 10), c.address);
            c.view.put(0, (byte) c.index);
        }
        for (ReceiveBuffer.Chunk c : all) {
            assertEquals((byte) c.index, c.view.get(0));
        }
        assertTrue(buffer.borrow(2, 2, 0).isEmpty(), "nothing left to lend");
    }

    @Test
    void retiredChunksServeNoOtherReaderUntilTheirStageIsReclaimed() throws InterruptedException {
        ReceiveBuffer buffer = new ReceiveBuffer(region(8 << 10), 1 << 10); // 8 chunks
        StageAttempt stage1 = new StageAttempt(1, 0);
        StageAttempt stage1Retry = new StageAttempt(1, 1);
        List<ReceiveBuffer.Chunk> timedOut = buffer.borrow(2, 2, 0);
        buffer.retire(stage1, timedOut);
        assertEquals(2, buffer.retired());
        assertEquals(0, buffer.onLoan());
        List<ReceiveBuffer.Chunk> rest = drain(buffer);
        assertEquals(6, rest.size(), "only the six chunks not retired are lent out");
        assertTrue(rest.stream().noneMatch(timedOut::contains), "a retired chunk was lent again");

        assertEquals(0, buffer.reclaim(stage1Retry), "another attempt's end reclaims nothing");
        assertEquals(2, buffer.reclaim(stage1));
        assertEquals(0, buffer.reclaim(stage1), "reclaimed once");
        assertEquals(0, buffer.retired());
        List<ReceiveBuffer.Chunk> back = drain(buffer);
        assertEquals(Set.copyOf(timedOut), Set.copyOf(back), "the reclaimed chunks are lent again");
        buffer.giveBack(rest);
        buffer.giveBack(back);
        assertEquals(0, buffer.onLoan());

        List<ReceiveBuffer.Chunk> unfreed = buffer.borrow(2, 2, 0); // their read batch could not be freed
        buffer.retire(null, unfreed);
        assertEquals(0, buffer.reclaim(stage1), "chunks retired for good come back with no stage");
        assertEquals(2, buffer.retired());
        assertTrue(drain(buffer).stream().noneMatch(unfreed::contains), "a chunk retired for good was lent again");
    }

    /** Borrows chunk by chunk until none is free. */
    private static List<ReceiveBuffer.Chunk> drain(ReceiveBuffer buffer) throws InterruptedException {
        List<ReceiveBuffer.Chunk> all = new ArrayList<>();
        for (List<ReceiveBuffer.Chunk> got = buffer.borrow(1, 1, 0); !got.isEmpty(); got = buffer.borrow(1, 1, 0)) {
            all.addAll(got);
        }
        return all;
    }
}
