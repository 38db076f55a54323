package org.hcomm.bridge.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.SoftCounters;
import org.hcomm.bridge.SoftHcomm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link HcommTransport} end to end in one process: two transports (two endpoints) on 127.0.0.1, one the SERVER and
 * one the CLIENT of channels with equal names, driven to READY by polling both. Memory is registered before the
 * channels are created; every read is checked byte for byte. Every test ends with no live soft HComm object.
 */
@Timeout(120)
class HcommTransportTest {
    static final int MIB = 1 << 20;
    static final Duration SETTLE = Duration.ofSeconds(30);
    static final AtomicInteger NAMES = new AtomicInteger();

    @BeforeAll
    static void softLibraryLoads() {
        assertTrue(HcommNative.isAvailable(), () -> "soft HComm unavailable: " + HcommNative.unavailabilityCause());
        assertTrue(SoftHcomm.isActive(), "these tests need the soft provider");
    }

    @AfterEach
    void nothingLeaks() {
        SoftHcomm.configure("force_tcp", "0");
        SoftCounters c = SoftHcomm.counters();
        assertTrue(c.noLiveObjects(), "live HComm objects after the test: " + c);
    }

    // ---- fixture ----

    static HcommTransport open() throws Exception {
        return HcommTransport.open(new TransportOptions(InetAddress.getByName("127.0.0.1"), false, null,
                Duration.ofSeconds(30), SETTLE));
    }

    static String uniqueName(String stem) {
        return stem + "-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
    }

    /** The two local ends of one batch of channels named {@code names}: server's batch, then client's. */
    record Link(PeerChannels server, PeerChannels client) {}

    /** Creates the channels on both sides (server first) and polls both until settled; all must be READY. */
    static Link connect(HcommTransport server, HcommTransport client, String... names) throws Exception {
        List<PeerSpec> serverSpecs = new ArrayList<>();
        List<PeerSpec> clientSpecs = new ArrayList<>();
        int port = server.listenPort();
        for (String name : names) {
            serverSpecs.add(new PeerSpec("client", client.endpointDescriptor(), port, true, name));
            clientSpecs.add(new PeerSpec("server", server.endpointDescriptor(), port, false, name));
        }
        PeerChannels s = server.connect(serverSpecs);
        PeerChannels c;
        try {
            c = client.connect(clientSpecs);
        } catch (Exception e) {
            s.close();
            throw e;
        }
        long deadline = System.nanoTime() + SETTLE.toNanos();
        boolean sDone = false;
        boolean cDone = false;
        while (!(sDone && cDone)) {
            sDone = s.poll(); // both ends must be driven: the handshake needs steps on each side
            cDone = c.poll();
            if (System.nanoTime() - deadline > 0) {
                fail("channels " + String.join(",", names) + " not settled within " + SETTLE);
            }
            Thread.sleep(1);
        }
        for (PeerChannels batch : List.of(s, c)) {
            assertEquals(names.length, batch.size());
            for (int i = 0; i < batch.size(); i++) {
                PeerChannels.PeerChannel ch = batch.channel(i);
                assertEquals(PeerChannels.State.READY, ch.state(), () -> ch.name() + " failed: " + ch.failure());
                assertEquals(names[i], ch.name());
                assertNotNull(ch.path());
            }
        }
        return new Link(s, c);
    }

    static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void put(Region r, int offset, byte[] data) {
        r.buffer().put(offset, data);
    }

    static byte[] get(Region r, int offset, int length) {
        byte[] out = new byte[length];
        r.buffer().get(offset, out);
        return out;
    }

    static byte[] slice(byte[] b, int from, int length) {
        byte[] out = new byte[length];
        System.arraycopy(b, from, out, 0, length);
        return out;
    }

    /**
     * {@link Region#buffer(long, int)} on a region of at least 1 MiB: a view of the region's bytes in that range
     * (written through it, read through {@link Region#buffer()}, and back), and ranges outside refused.
     */
    static void viewsOfRangesAreTheRegionsBytes(Region r) {
        byte[] data = random(7, 4096);
        put(r, 12_345, data);
        ByteBuffer view = r.buffer(12_345, 4096);
        assertEquals(4096, view.capacity());
        byte[] seen = new byte[4096];
        view.get(0, seen);
        assertArrayEquals(data, seen);
        view.put(0, (byte) ~data[0]);
        assertEquals((byte) ~data[0], get(r, 12_345, 1)[0], "written through the view, in the region");
        assertEquals(0, r.buffer(r.size(), 0).capacity(), "an empty view at the end");
        assertThrows(IndexOutOfBoundsException.class, () -> r.buffer(r.size() - 4, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> r.buffer(-1, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.buffer(0, -1));
    }

    // ---- tests ----

    @Test
    void aViewOfARangeIsTheRegionsBytesThere() throws Exception {
        try (HcommTransport t = open()) {
            viewsOfRangesAreTheRegionsBytes(t.allocate("views", MIB));
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"shm", "tcp"})
    void readBatchReadsRegisteredMemoryOfThePeer(String path) throws Exception {
        SoftHcomm.configure("force_tcp", path.equals("tcp") ? "1" : "0");
        byte[] data = random(1, 4 * MIB);
        try (HcommTransport owner = open(); HcommTransport reader = open()) {
            Region src = owner.allocate("src", data.length);
            put(src, 0, data);
            Region dst = reader.allocate("dst", 4 * MIB);
            Link link = connect(owner, reader, uniqueName("read"));
            PeerChannels.PeerChannel ch = link.client().channel(0);
            assertEquals(path, ch.path());
            assertEquals(path, link.server().channel(0).path());
            assertEquals("server", ch.peerId());

            try (ReadBatch batch = reader.newReadBatch()) {
                batch.read(ch, dst.address(), src.address() + 7, 1);
                batch.read(ch, dst.address() + 4096, src.address() + 1, 4095);
                batch.read(ch, dst.address() + MIB, src.address() + 12345, MIB);
                batch.read(ch, dst.address() + 3 * MIB, src.address() + 3 * MIB, 0); // no-op
                batch.flush();
                batch.await();
                assertEquals(data[7], get(dst, 0, 1)[0]);
                assertArrayEquals(slice(data, 1, 4095), get(dst, 4096, 4095));
                assertArrayEquals(slice(data, 12345, MIB), get(dst, MIB, MIB));

                // the batch is reusable; await() alone flushes
                batch.read(ch, dst.address(), src.address(), 4 * MIB);
                batch.await();
                assertArrayEquals(data, get(dst, 0, 4 * MIB));
                batch.await(); // nothing pending: no-op
            }
            link.client().close();
            link.server().close();
            src.close();
            dst.close();
        }
    }

    @Test
    void twoBatchesInFlightAtOnce() throws Exception {
        int half = 8 * MIB;
        byte[] data = random(2, 2 * half);
        try (HcommTransport owner = open(); HcommTransport reader = open()) {
            Region src = owner.allocate("src", data.length);
            put(src, 0, data);
            Region dst = reader.allocate("dst", 2 * half);
            Link link = connect(owner, reader, uniqueName("inflight"));
            PeerChannels.PeerChannel ch = link.client().channel(0);
            try (ReadBatch a = reader.newReadBatch(); ReadBatch b = reader.newReadBatch()) {
                for (int round = 0; round < 3; round++) {
                    dst.buffer().put(0, new byte[2 * half]);
                    // A: the second half of the source into the first half of dst, in 64 KiB reads
                    for (int off = 0; off < half; off += 64 * 1024) {
                        a.read(ch, dst.address() + off, src.address() + half + off, 64 * 1024);
                    }
                    a.flush();
                    // B filled and flushed while A is (likely) still copying
                    b.read(ch, dst.address() + half, src.address(), half);
                    b.flush();
                    a.await();
                    b.await();
                    assertArrayEquals(slice(data, half, half), get(dst, 0, half), "batch A, round " + round);
                    assertArrayEquals(slice(data, 0, half), get(dst, half, half), "batch B, round " + round);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"shm", "tcp"})
    void mappedFileRegisteredBeforeConnectIsReadByThePeer(String path, @TempDir Path dir) throws Exception {
        SoftHcomm.configure("force_tcp", path.equals("tcp") ? "1" : "0");
        int size = MIB + 12345; // not a page multiple
        byte[] data = random(3, size);
        Path file = dir.resolve("shuffle_0_0_0.data");
        Files.write(file, data);
        try (HcommTransport owner = open(); HcommTransport reader = open()) {
            Region mapped = owner.mapFile("file", file, size);
            assertEquals(size, mapped.size());
            assertEquals("file", mapped.tag());
            assertArrayEquals(data, get(mapped, 0, size), "the mapping shows the file");
            Region dst = reader.allocate("dst", 2 * MIB);
            Link link = connect(owner, reader, uniqueName("file"));
            PeerChannels.PeerChannel ch = link.client().channel(0);
            assertEquals(path, ch.path());
            try (ReadBatch batch = reader.newReadBatch()) {
                batch.read(ch, dst.address(), mapped.address(), size);
                batch.read(ch, dst.address() + size, mapped.address() + size - 100, 100); // the file's tail
                batch.await();
            }
            assertArrayEquals(data, get(dst, 0, size));
            assertArrayEquals(slice(data, size - 100, 100), get(dst, size, 100));
            link.client().close();
            link.server().close();
            mapped.close(); // unregisters and unmaps
            mapped.close(); // idempotent
            assertEquals(1, SoftHcomm.counters().regions(), "only dst is still registered");
        }
    }

    @Test
    void destroyTogetherDestroysSeveralBatchesInOneCall() throws Exception {
        try (HcommTransport owner = open(); HcommTransport reader = open()) {
            Region src = owner.allocate("src", MIB);
            put(src, 0, random(4, MIB));
            Region dst = reader.allocate("dst", MIB);
            Link first = connect(owner, reader, uniqueName("stage-a"), uniqueName("stage-b"));
            Link second = connect(owner, reader, uniqueName("stage-c"));
            assertEquals(6, SoftHcomm.counters().channels(), "3 channels on each side");
            try (ReadBatch batch = reader.newReadBatch()) {
                batch.read(first.client().channel(1), dst.address(), src.address(), 4096);
                batch.read(second.client().channel(0), dst.address() + 4096, src.address() + 4096, 4096);
                batch.await();
            }
            assertArrayEquals(get(src, 0, 8192), get(dst, 0, 8192));

            reader.destroyTogether(List.of(first.client(), second.client()));
            assertEquals(3, SoftHcomm.counters().channels(), "the reader's three channels are gone");
            owner.destroyTogether(List.of(first.server(), second.server()));
            assertEquals(0, SoftHcomm.counters().channels());

            // destroyed batches: closing again and destroying again are no-ops
            first.client().close();
            reader.destroyTogether(List.of(first.client(), second.client()));
            assertEquals(0, SoftHcomm.counters().channels());
            try (ReadBatch batch = reader.newReadBatch()) {
                assertThrows(IllegalStateException.class,
                        () -> batch.read(first.client().channel(0), dst.address(), src.address(), 16));
            }
        }
    }

    @Test
    void outOfRangeReadRaisesTransportExceptionWithCode6() throws Exception {
        try (HcommTransport owner = open(); HcommTransport reader = open()) {
            Region src = owner.allocate("src", MIB);
            byte[] data = random(5, MIB);
            put(src, 0, data);
            Region dst = reader.allocate("dst", MIB);
            Region late = owner.allocate("late", MIB); // registered before connect: exchanged
            Link link = connect(owner, reader, uniqueName("range"));
            Region after = owner.allocate("after", 4096); // registered after connect: never exchanged
            PeerChannels.PeerChannel ch = link.client().channel(0);
            try (ReadBatch batch = reader.newReadBatch()) {
                TransportException pastSrc = assertThrows(TransportException.class,
                        () -> batch.read(ch, dst.address(), src.address() + MIB - 10, 100));
                assertEquals(6, pastSrc.code(), pastSrc.getMessage());
                assertEquals("HcommReadOnThread", pastSrc.call());
                assertTrue(pastSrc.getMessage().contains("HCCL_E_NOT_FOUND"), pastSrc.getMessage());

                TransportException pastDst = assertThrows(TransportException.class,
                        () -> batch.read(ch, dst.address() + MIB - 10, src.address(), 100));
                assertEquals(6, pastDst.code(), pastDst.getMessage());

                TransportException unexchanged = assertThrows(TransportException.class,
                        () -> batch.read(ch, dst.address(), after.address(), 16));
                assertEquals(6, unexchanged.code(), unexchanged.getMessage());

                // a failed read ended the batch; the batch still works, also on a second exchanged region
                batch.read(ch, dst.address(), src.address() + MIB - 4096, 4096);
                batch.read(ch, dst.address() + 4096, late.address(), 4096);
                batch.await();
                assertArrayEquals(slice(data, MIB - 4096, 4096), get(dst, 0, 4096));
            }
        }
    }

    /** A reader reads from several owners in one batch; when one owner's read fails, the error says whose. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"shm", "tcp"})
    void aFailedReadInABatchAcrossPeersNamesThePeerWhoseReadFailed(String path) throws Exception {
        SoftHcomm.configure("force_tcp", path.equals("tcp") ? "1" : "0");
        try (HcommTransport ownerA = open(); HcommTransport ownerB = open(); HcommTransport reader = open()) {
            Region srcA = ownerA.allocate("src", MIB);
            Region srcB = ownerB.allocate("src", MIB);
            byte[] a = random(6, MIB);
            byte[] b = random(7, MIB);
            put(srcA, 0, a);
            put(srcB, 0, b);
            Region dst = reader.allocate("dst", 2 * MIB);
            PeerChannels.PeerChannel toA = connect(ownerA, reader, uniqueName("a")).client().channel(0);
            PeerChannels.PeerChannel toB = connect(ownerB, reader, uniqueName("b")).client().channel(0);
            try (ReadBatch batch = reader.newReadBatch()) {
                batch.read(toA, dst.address(), srcA.address(), 4096);
                batch.read(toB, dst.address() + 4096, srcB.address(), 4096);
                TransportException pastB = assertThrows(TransportException.class,
                        () -> batch.read(toB, dst.address() + 8192, srcB.address() + MIB - 10, 100));
                assertEquals(6, pastB.code(), pastB.getMessage());
                assertSame(toB, pastB.channel(), "the failure names the channel to owner B");
                TransportException pastA = assertThrows(TransportException.class,
                        () -> batch.read(toA, dst.address() + 8192, srcA.address() + MIB - 10, 100));
                assertSame(toA, pastA.channel(), "the failure names the channel to owner A");
                // the failed read ended the batch and waited for the reads before it: they landed
                assertArrayEquals(slice(a, 0, 4096), get(dst, 0, 4096));
                assertArrayEquals(slice(b, 0, 4096), get(dst, 4096, 4096));

                // and the batch reads from both owners again
                batch.read(toB, dst.address(), srcB.address(), MIB);
                batch.read(toA, dst.address() + MIB, srcA.address(), MIB);
                batch.await();
                assertArrayEquals(b, get(dst, 0, MIB));
                assertArrayEquals(a, get(dst, MIB, MIB));
            }
        }
    }

    @Test
    void closeOfTheTransportClosesEverythingItOwns() throws Exception {
        HcommTransport owner = open();
        HcommTransport reader = open();
        try {
            Region src = owner.allocate("src", MIB);
            owner.allocate("more", 64 * 1024);
            put(src, 0, random(6, MIB));
            Region dst = reader.allocate("dst", MIB);
            connect(owner, reader, uniqueName("close-a"));
            Link link = connect(owner, reader, uniqueName("close-b"), uniqueName("close-c"));
            ReadBatch batch = reader.newReadBatch();
            reader.newReadBatch(); // never used
            batch.read(link.client().channel(1), dst.address(), src.address(), MIB);
            batch.await();
            assertArrayEquals(get(src, 0, MIB), get(dst, 0, MIB));
            // a second read flushed but not awaited: close must wait for or cancel it, not crash
            batch.read(link.client().channel(0), dst.address(), src.address(), MIB);
            batch.flush();

            LiveObjects live = reader.liveObjects();
            assertNotNull(live);
            assertEquals(2, live.endpoints());
            assertEquals(6, live.channels());
            assertEquals(2, live.threads());
            assertEquals(3, live.regions());
        } finally {
            reader.close();
            owner.close();
        }
        SoftCounters c = SoftHcomm.counters();
        assertTrue(c.noLiveObjects(), "after close: " + c);
        assertEquals(0, c.channels());
        assertEquals(0, c.regions());
        assertEquals(0, c.threads());
        assertEquals(0, c.endpoints());

        reader.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> reader.allocate("again", 4096));
        assertThrows(IllegalStateException.class, reader::newReadBatch);
    }

    /**
     * Closing a batch that still has reads queued (read() without flush()) must not leave HComm batch mode open on
     * the calling OS thread: later reads of any batch on that thread must still work. Runs on its own thread so a
     * regression does not poison the JUnit thread.
     */
    @Test
    void closingABatchWithUnflushedReadsLeavesTheThreadUsable() throws Exception {
        try (HcommTransport owner = open(); HcommTransport reader = open()) {
            Region src = owner.allocate("src", MIB);
            byte[] data = random(7, 4096);
            put(src, 0, data);
            Region dst = reader.allocate("dst", MIB);
            Link link = connect(owner, reader, uniqueName("unflushed"));
            PeerChannels.PeerChannel ch = link.client().channel(0);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    ReadBatch abandoned = reader.newReadBatch();
                    abandoned.read(ch, dst.address(), src.address(), 4096);
                    abandoned.close(); // never flushed
                    try (ReadBatch next = reader.newReadBatch()) {
                        next.read(ch, dst.address(), src.address(), 4096);
                        next.await();
                    }
                    assertArrayEquals(data, get(dst, 0, 4096));
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "unflushed-batch");
            t.start();
            t.join();
            if (failure.get() != null) {
                throw new AssertionError("a batch on the same OS thread failed after an unflushed batch was closed",
                        failure.get());
            }
        }
    }
}
