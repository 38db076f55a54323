package org.hcomm.bridge.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Window exchanges on soft HComm under the Atlas A2 profile, members on threads of one process (as
 * {@link CommunicatorTransportTest}): a stream ten times the HCCL buffer passes through a window intact over HCCS and
 * over RoCE, several owners serve one reader at once, over HCCS with two slots the reader reads one slice ahead (with
 * one slot or over RoCE it does not), two readers of one owner on one executor use two lanes of the channel at once
 * while the owner's next end in a lane waits for its previous one, a cancelled exchange still ends balanced (also with
 * a read ahead its owner had not begun), and an owner or a reader that dies mid-stream fails the other end's next slice
 * within the read timeout and poisons that channel. Nothing is left live.
 */
@Timeout(120)
class WindowExchangeTest {
    static final int MIB = 1 << 20;
    static final long SLICE = 256 << 10;

    @BeforeAll
    static void a2() {
        CommunicatorTransportTest.a2();
    }

    @AfterAll
    static void atlas350Again() {
        CommunicatorTransportTest.atlas350Again();
    }

    @AfterEach
    void nothingLeaks() {
        new CommunicatorTransportTest().nothingLeaks();
    }

    /** hcclBufferSize 1 MB: a 2 MiB HCCL buffer, two windows of 2 x 256 KiB per half. */
    static List<CommunicatorTransport> form(long timeoutMillis, String... hosts) throws Exception {
        return CommunicatorTransportTest.form(1, new CommunicatorTransport.WindowSpec(2, SLICE, timeoutMillis), hosts);
    }

    /** Owner {@code owner} streams {@code data} to reader {@code reader}; returns what the reader took. */
    static byte[] exchange(CommunicatorTransport owner, String ownerId, CommunicatorTransport reader, String readerId,
            byte[] data, ExecutorService pool) throws Exception {
        WindowLayout l = reader.windows().layout();
        ReaderEnd r = reader.windows().openReader(ownerId, 5_000);
        assertNotNull(r);
        Future<Long> served = pool.submit(() -> {
            try (OwnerEnd o = owner.windows().openOwner(readerId, r.lane(), r.slotOffsets(), 5_000)) {
                assertNotNull(o);
                r.attach(o.slotOffsets(), data.length);
                serve(o, data);
                return o.slicesPut();
            }
        });
        byte[] got = new byte[data.length];
        try (r) {
            long deadline = System.currentTimeMillis() + 10_000;
            while (r.slicesTaken() == 0 && !attached(r) && System.currentTimeMillis() < deadline) {
                Thread.sleep(1);
            }
            for (long j = 0; j < l.sliceCount(data.length); j++) {
                int len = l.sliceLength(data.length, j);
                r.take(len).get(got, (int) (j * l.sliceBytes()), len);
            }
        }
        assertEquals(l.sliceCount(data.length), served.get());
        return got;
    }

    /** exec-1's reader end and exec-0's owner end of one window. */
    record Ends(ReaderEnd reader, OwnerEnd owner) {}

    /** Opens a window from exec-0 to exec-1, attached with {@code totalBytes} (-1: the one-argument attach). */
    static Ends open(List<CommunicatorTransport> t, long totalBytes) throws TransportException {
        ReaderEnd r = t.get(1).windows().openReader("exec-0", 5_000);
        OwnerEnd o = t.get(0).windows().openOwner("exec-1", r.lane(), r.slotOffsets(), 5_000);
        if (totalBytes < 0) {
            r.attach(o.slotOffsets());
        } else {
            r.attach(o.slotOffsets(), totalBytes);
        }
        return new Ends(r, o);
    }

    /** Both ends close balanced: windows back, nothing poisoned, and the channel carries the next exchange intact. */
    static void closedBalancedTheChannelServesAgain(List<CommunicatorTransport> t, Ends e) throws Exception {
        assertTrue(e.reader().balanced(), "the reader ended balanced");
        assertTrue(e.owner().balanced(), "the owner ended balanced");
        e.owner().close();
        e.reader().close();
        assertFalse(t.get(1).windows().poisoned("exec-0"));
        assertFalse(t.get(0).windows().poisoned("exec-1"));
        assertEquals(t.get(1).windows().layout().windows(), t.get(1).windows().freeReceiveWindows());
        byte[] data = new byte[3 * MIB + 5];
        new Random(5).nextBytes(data);
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            assertArrayEquals(data, exchange(t.get(0), "exec-0", t.get(1), "exec-1", data, pool),
                    "the same channel after the exchange");
        } finally {
            pool.shutdownNow();
        }
    }

    private static boolean attached(ReaderEnd r) {
        try {
            java.lang.reflect.Field f = ReaderEnd.class.getDeclaredField("ownerSlots");
            f.setAccessible(true);
            return f.get(r) != null;
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static void closeAll(List<CommunicatorTransport> ts) {
        for (CommunicatorTransport t : ts) {
            t.close();
        }
    }

    @Test
    void tenTimesTheBufferPassesIntactOverHccsAndRoce() throws Exception {
        for (String[] hosts : new String[][] {{"h", "h"}, {"h0", "h1"}}) {
            List<CommunicatorTransport> t = form(10_000, hosts);
            ExecutorService pool = Executors.newCachedThreadPool();
            try {
                assertEquals(2, t.get(0).windows().layout().windows());
                assertEquals(2, t.get(0).windows().layout().lanes(), "no more lanes than windows");
                assertEquals(11, t.get(0).windows().layout().notifyNum());
                byte[] data = new byte[(int) (10 * t.get(0).deviceBytes()) + 12345];
                new Random(hosts[0].length()).nextBytes(data);
                byte[] got = exchange(t.get(0), "exec-0", t.get(1), "exec-1", data, pool);
                assertArrayEquals(data, got, "bytes through the window, hosts " + String.join(",", hosts));
                assertEquals(2, t.get(0).windows().freeSendWindows(), "send window back after a balanced end");
                assertEquals(2, t.get(1).windows().freeReceiveWindows(), "receive window back");
                assertFalse(t.get(1).windows().poisoned("exec-0"));
                assertThrows(UnsupportedOperationException.class, () -> t.get(0).allocate("arena", MIB),
                        "a windowed HCCL buffer carves no region");
            } finally {
                pool.shutdownNow();
                closeAll(t);
            }
        }
    }

    /** libc's setenv: soft HComm reads its RoCE switches when a channel is acquired. */
    interface Env extends com.sun.jna.Library {
        Env C = com.sun.jna.Native.load("c", Env.class);

        int setenv(String name, String value, int overwrite);

        int unsetenv(String name);
    }

    /**
     * Over RoCE as CANN behaves, not as soft HComm's fence would let a reader assume: transfers land 30 ms after they
     * complete on their stream, a notify after a read is not held back for it, notifies are flags. The owner's
     * writes, each followed by DATA on the same channel, still bring every byte intact.
     */
    @Test
    void overRoceWithLateLandingAndNoReadFenceTheOwnersWritesBringEveryByte() throws Exception {
        Env.C.setenv("HCOMM_SOFT_ROCE_LAND_DELAY_MS", "30", 1);
        Env.C.setenv("HCOMM_SOFT_ROCE_READ_FENCE", "0", 1);
        Env.C.setenv("HCOMM_SOFT_NOTIFY_FLAG", "1", 1);
        List<CommunicatorTransport> t;
        try {
            t = form(10_000, "h0", "h1");
        } finally {
            Env.C.unsetenv("HCOMM_SOFT_ROCE_LAND_DELAY_MS");
            Env.C.unsetenv("HCOMM_SOFT_ROCE_READ_FENCE");
            Env.C.unsetenv("HCOMM_SOFT_NOTIFY_FLAG");
        }
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            byte[] data = new byte[3 * MIB + 99];
            new Random(11).nextBytes(data);
            assertArrayEquals(data, exchange(t.get(0), "exec-0", t.get(1), "exec-1", data, pool));
        } finally {
            pool.shutdownNow();
            closeAll(t);
        }
    }

    @Test
    void twoOwnersServeOneReaderAtOnce() throws Exception {
        List<CommunicatorTransport> t = form(10_000, "h", "h", "h1");
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            byte[] a = new byte[5 * MIB + 1];
            byte[] b = new byte[3 * MIB + 7];
            new Random(1).nextBytes(a);
            new Random(2).nextBytes(b);
            Future<byte[]> fromA = pool.submit(() -> exchange(t.get(1), "exec-1", t.get(0), "exec-0", a, pool));
            Future<byte[]> fromB = pool.submit(() -> exchange(t.get(2), "exec-2", t.get(0), "exec-0", b, pool));
            assertArrayEquals(a, fromA.get());
            assertArrayEquals(b, fromB.get());
            assertEquals(2, t.get(0).windows().freeReceiveWindows());
        } finally {
            pool.shutdownNow();
            closeAll(t);
        }
    }

    /**
     * Two tasks of one reader executor read one owner at once: each reader end takes a lane of its own, the slices of
     * both streams interleave, and both end balanced. The owner's next end in a busy lane waits for the previous one
     * to close, even with send windows free (a notify is a flag: its last ACKs would merge with the next window's
     * first); a lane the channel does not have is refused with CANN's code.
     */
    @Test
    void twoReadersOfOneOwnerUseTwoLanesAtOnceAndAnOwnersLaneWaitsForItsPreviousEnd() throws Exception {
        // hcclBufferSize 2 MB: four windows of 2 x 256 KiB per half, so four lanes
        List<CommunicatorTransport> t = CommunicatorTransportTest.form(2,
                new CommunicatorTransport.WindowSpec(2, SLICE, 10_000), "h", "h");
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            WindowLayout l = t.get(1).windows().layout();
            assertEquals(4, l.windows());
            assertEquals(4, l.lanes());
            byte[][] data = {new byte[3 * MIB + 7], new byte[2 * MIB + 3]};
            new Random(3).nextBytes(data[0]);
            new Random(4).nextBytes(data[1]);
            ReaderEnd[] r = {t.get(1).windows().openReader("exec-0", 5_000),
                t.get(1).windows().openReader("exec-0", 5_000)};
            assertEquals(0, r[0].lane());
            assertEquals(1, r[1].lane(), "the second reader end of the same owner takes the next lane");
            OwnerEnd[] o = new OwnerEnd[2];
            for (int i = 0; i < 2; i++) {
                o[i] = t.get(0).windows().openOwner("exec-1", r[i].lane(), r[i].slotOffsets(), 5_000);
                r[i].attach(o[i].slotOffsets(), data[i].length);
            }
            long start = System.nanoTime();
            assertNull(t.get(0).windows().openOwner("exec-1", r[0].lane(), r[0].slotOffsets(), 300),
                    "lane 0's owner end is open: the next one there waits, two send windows free or not");
            assertTrue(System.nanoTime() - start >= 250_000_000L, "it waited for the lane");
            assertEquals(l.windows() - 2, t.get(0).windows().freeSendWindows());
            TransportException bad = assertThrows(TransportException.class,
                    () -> t.get(0).windows().openOwner("exec-1", l.lanes(), r[0].slotOffsets(), 100));
            assertEquals(org.hcomm.bridge.error.HcommStatus.HCCL_E_PARA.code(), bad.code(), bad.getMessage());
            List<Future<Void>> owners = List.of(pool.submit(() -> serve(o[0], data[0])),
                    pool.submit(() -> serve(o[1], data[1])));
            byte[][] got = {new byte[data[0].length], new byte[data[1].length]};
            long[] taken = new long[2];
            while (taken[0] < l.sliceCount(data[0].length) || taken[1] < l.sliceCount(data[1].length)) {
                for (int i = 0; i < 2; i++) { // one slice of each stream in turn: both windows carry at once
                    if (taken[i] < l.sliceCount(data[i].length)) {
                        int len = l.sliceLength(data[i].length, taken[i]);
                        r[i].take(len).get(got[i], (int) (taken[i] * l.sliceBytes()), len);
                        taken[i]++;
                    }
                }
            }
            for (Future<Void> f : owners) {
                f.get();
            }
            for (int i = 0; i < 2; i++) {
                assertArrayEquals(data[i], got[i], "stream " + i);
                assertTrue(r[i].balanced() && o[i].balanced(), "stream " + i + " ended balanced");
                o[i].close();
                r[i].close();
            }
            assertFalse(t.get(1).windows().poisoned("exec-0"));
            assertEquals(l.windows(), t.get(1).windows().freeReceiveWindows());
            try (ReaderEnd again = t.get(1).windows().openReader("exec-0", 5_000)) {
                assertEquals(0, again.lane(), "lanes given back");
            }
        } finally {
            pool.shutdownNow();
            closeAll(t);
        }
    }

    @Test
    void aReaderThatSkipsSlicesStillEndsBalancedAndTheNextExchangeWorks() throws Exception {
        List<CommunicatorTransport> t = form(10_000, "h", "h");
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            WindowLayout l = t.get(1).windows().layout();
            Ends ends = open(t, 5 * l.sliceBytes());
            ReaderEnd r = ends.reader();
            OwnerEnd o = ends.owner();
            Future<?> owner = pool.submit(() -> {
                for (int j = 0; j < 5; j++) {
                    o.staging().put(new byte[(int) l.sliceBytes()]);
                    o.put((int) l.sliceBytes());
                }
                o.finish();
                return null;
            });
            r.take((int) l.sliceBytes());
            assertEquals(2, r.slicesIssued(), "slice 1 read ahead");
            for (int j = 1; j < 5; j++) {
                r.skip(); // slice 1 only awaited, not issued twice
            }
            assertTrue(r.balanced());
            owner.get();
            closedBalancedTheChannelServesAgain(t, ends);
        } finally {
            pool.shutdownNow();
            closeAll(t);
        }
    }

    @Test
    void anOwnerThatDiesMidStreamFailsTheReaderAndPoisonsTheChannel() throws Exception {
        List<CommunicatorTransport> t = form(3_000, "h", "h");
        try {
            WindowLayout l = t.get(1).windows().layout();
            Ends ends = open(t, 2 * l.sliceBytes());
            ReaderEnd r = ends.reader();
            OwnerEnd o = ends.owner();
            o.staging().put(new byte[(int) l.sliceBytes()]);
            o.put((int) l.sliceBytes());
            r.take((int) l.sliceBytes()); // slice 1's wait queued ahead
            t.get(0).close(); // the owner's communicator ends with a slice still due
            long start = System.nanoTime();
            TransportException e = assertThrows(TransportException.class, () -> r.take((int) l.sliceBytes()));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 10_000, "failed after " + ms + " ms: " + e);
            r.close();
            assertTrue(t.get(1).windows().poisoned("exec-0"), "the channel to the dead owner is poisoned");
            assertThrows(TransportException.class, () -> t.get(1).windows().openReader("exec-0", 100));
            assertEquals(1, t.get(1).windows().freeReceiveWindows(), "the failed window is quarantined");
        } finally {
            closeAll(t);
        }
    }

    @Test
    void aReaderThatDiesMidStreamFailsTheOwnersNextSliceAndPoisonsTheChannel() throws Exception {
        List<CommunicatorTransport> t = form(3_000, "h", "h");
        try {
            WindowLayout l = t.get(1).windows().layout();
            Ends ends = open(t, -1); // no length: no read ahead, so slot 1 is never read nor acknowledged
            ReaderEnd r = ends.reader();
            OwnerEnd o = ends.owner();
            for (int j = 0; j < l.slots(); j++) { // both slots signalled; the reader takes one, then dies
                o.staging().put(new byte[(int) l.sliceBytes()]);
                o.put((int) l.sliceBytes());
            }
            r.take((int) l.sliceBytes());
            t.get(1).close();
            long start = System.nanoTime();
            o.staging().put(new byte[(int) l.sliceBytes()]);
            o.put((int) l.sliceBytes()); // slot 0's ACK came: this one goes out
            o.staging().put(new byte[(int) l.sliceBytes()]);
            TransportException e = assertThrows(TransportException.class, () -> o.put((int) l.sliceBytes()),
                    "slot 1's ACK never comes");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 10_000, "failed after " + ms + " ms: " + e);
            o.close();
            assertTrue(t.get(0).windows().poisoned("exec-1"), "the channel to the dead reader is poisoned");
            assertEquals(l.windows() - 1, t.get(0).windows().freeSendWindows(), "the failed window is quarantined");
        } finally {
            closeAll(t);
        }
    }

    /**
     * Over HCCS with two slots the reader issues slice j + 1's read before it copies slice j to the host: one
     * slice ahead, never more; the end is unbalanced while that read is in flight and balanced after the last.
     */
    @Test
    void overHccsWithTwoSlotsTheReaderReadsOneSliceAheadAndEndsBalanced() throws Exception {
        takeEverySlice(2, true, "h", "h");
    }

    /** With one slot, or over RoCE, nothing is read ahead: each take ends balanced with nothing queued. */
    @Test
    void withOneSlotOrOverRoceEachSliceIsReadThenCopiedAsBefore() throws Exception {
        takeEverySlice(1, false, "h", "h");
        takeEverySlice(2, false, "h0", "h1");
    }

    /** Streams 7.x slices through a window of {@code slots}, checking after each take what is queued ahead. */
    private static void takeEverySlice(int slots, boolean ahead, String... hosts) throws Exception {
        List<CommunicatorTransport> t = CommunicatorTransportTest.form(1,
                new CommunicatorTransport.WindowSpec(slots, SLICE, 10_000), hosts);
        ExecutorService pool = Executors.newCachedThreadPool();
        String where = slots + " slots, hosts " + String.join(",", hosts);
        try {
            WindowLayout l = t.get(1).windows().layout();
            assertEquals(slots, l.slots());
            byte[] data = new byte[(int) (7 * l.sliceBytes()) + 321];
            new Random(slots).nextBytes(data);
            Ends e = open(t, data.length);
            Future<?> owner = pool.submit(() -> serve(e.owner(), data));
            byte[] got = new byte[data.length];
            long n = l.sliceCount(data.length);
            for (long j = 0; j < n; j++) {
                int len = l.sliceLength(data.length, j);
                e.reader().take(len).get(got, (int) (j * l.sliceBytes()), len);
                assertEquals(ahead ? Math.min(j + 2, n) : j + 1, e.reader().slicesIssued(), "issued after taking "
                        + "slice " + j + ", " + where);
                assertEquals(!ahead || j + 1 == n, e.reader().balanced(), "balanced only with no read in flight, "
                        + "slice " + j + ", " + where);
            }
            owner.get();
            e.owner().close();
            e.reader().close();
            assertArrayEquals(data, got, where);
            assertFalse(t.get(1).windows().poisoned("exec-0"), where);
            assertFalse(t.get(0).windows().poisoned("exec-1"), where);
            try (ReaderEnd again = t.get(1).windows().openReader("exec-0", 5_000)) {
                assertThrows(IllegalArgumentException.class, () -> again.attach(new long[l.slots()], -1));
                assertThrows(IllegalStateException.class, () -> again.take(1), "nothing attached");
            }
        } finally {
            pool.shutdownNow();
            closeAll(t);
        }
    }

    private static Void serve(OwnerEnd o, byte[] data) throws TransportException {
        WindowLayout l = o.layout;
        for (long j = 0; j < l.sliceCount(data.length); j++) {
            int len = l.sliceLength(data.length, j);
            o.staging().put(data, (int) (j * l.sliceBytes()), len);
            o.put(len);
        }
        o.finish();
        return null;
    }

    /**
     * A reader cancels with slice 1's wait queued ahead of anything its owner began: the owner, told how many the
     * reader issued, signals slice 1 without bytes; the reader skips it (awaiting what it queued), both ends end
     * balanced, nothing is poisoned and the channel serves the next exchange.
     */
    @Test
    void aCancelAfterAReadAheadEndsBalancedWhenTheOwnerSignalsTheReadersHorizon() throws Exception {
        List<CommunicatorTransport> t = form(3_000, "h", "h");
        try {
            int slice = (int) SLICE;
            Ends e = open(t, 6L * slice);
            e.owner().staging().put(new byte[slice]);
            e.owner().put(slice); // the owner begins slice 0 only, then the reader cancels
            e.reader().take(slice);
            assertEquals(2, e.reader().slicesIssued());
            assertFalse(e.reader().balanced(), "slice 1's wait is queued");
            // what the owner answers the reader's Cancel: the slices it began, or those the reader issued if more
            long horizon = Math.max(e.owner().slicesPut(), e.reader().slicesIssued());
            long start = System.nanoTime();
            while (e.owner().slicesPut() < horizon) {
                e.owner().signal();
            }
            while (e.reader().slicesTaken() < horizon) {
                e.reader().skip();
            }
            e.owner().finish();
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 2_000, "no wait ran into the timeout: " + ms + " ms");
            closedBalancedTheChannelServesAgain(t, e);
        } finally {
            closeAll(t);
        }
    }

    @Test
    void aWindowSpecTheBufferCannotHoldFailsTheFormingSayingWhy() throws Exception {
        byte[] root = CommunicatorTransport.rootInfo(0);
        List<CommunicatorTransport.Member> one = List.of(new CommunicatorTransport.Member("exec-0", "h"));
        TransportException e = assertThrows(TransportException.class, () -> CommunicatorTransport.formWindowed(root,
                one, 0, 0, 1, null, new CommunicatorTransport.WindowSpec(2, 4L * MIB, 1000)));
        assertTrue(e.getMessage().contains("must hold one window per half"), e.getMessage());
    }
}
