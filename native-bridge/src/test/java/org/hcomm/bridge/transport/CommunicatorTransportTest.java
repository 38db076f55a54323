package org.hcomm.bridge.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.SoftCounters;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.error.HcommException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CommunicatorTransport} end to end in one process under the Atlas A2 profile: ranks on their own OS threads
 * and devices (CANN allows one thread per device), the root info carried between them as bytes, outputs staged into
 * the owner's HCCL buffer by {@link Region#commit}, read one-sidedly into the reader's and copied back to its mirror
 * by {@link ReadBatch#await()}. Every test ends with no live soft HComm object and no device memory.
 */
@Timeout(120)
class CommunicatorTransportTest {
    static final int MIB = 1 << 20;

    @BeforeAll
    static void a2() {
        assertTrue(HcommNative.isAvailable(), () -> "soft HComm unavailable: " + HcommNative.unavailabilityCause());
        SoftHcomm.configure("soc", "Ascend910B3");
        SoftHcomm.configure("if_ip", "127.0.0.1");
    }

    @AfterAll
    static void atlas350Again() {
        SoftHcomm.configure("soc", "");
    }

    @AfterEach
    void nothingLeaks() {
        SoftCounters c = SoftHcomm.counters();
        assertTrue(c.noLiveObjects(), "live HComm objects after the test: " + c);
    }

    /** Forms a communicator of {@code n} members (all on host "h") on n threads; transports in rank order. */
    static List<CommunicatorTransport> form(int n, int bufferMb) throws Exception {
        String[] hosts = new String[n];
        java.util.Arrays.fill(hosts, "h");
        return form(bufferMb, hosts);
    }

    /** As {@link #form(int, int)}, member r on {@code hosts[r]}: HCCS within a host, RoCE between hosts. */
    static List<CommunicatorTransport> form(int bufferMb, String... hosts) throws Exception {
        return form(bufferMb, null, hosts);
    }

    /** As {@link #form(int, String...)}, windowed as {@code spec} says when it is not null. */
    static List<CommunicatorTransport> form(int bufferMb, CommunicatorTransport.WindowSpec spec, String... hosts)
            throws Exception {
        int n = hosts.length;
        byte[] root = CommunicatorTransport.rootInfo(0);
        List<CommunicatorTransport.Member> members = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            members.add(new CommunicatorTransport.Member("exec-" + r, hosts[r]));
        }
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<CommunicatorTransport>> joins = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                joins.add(pool.submit(() -> spec == null
                        ? CommunicatorTransport.form(root, members, rank, rank, bufferMb, null)
                        : CommunicatorTransport.formWindowed(root, members, rank, rank, bufferMb, null, spec)));
            }
            List<CommunicatorTransport> out = new ArrayList<>();
            for (Future<CommunicatorTransport> f : joins) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdown();
        }
    }

    static List<PeerSpec> specs(int n, int self) {
        List<PeerSpec> s = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            if (r != self) {
                s.add(new PeerSpec("exec-" + r, new byte[0], 1, self < r, "stage-1"));
            }
        }
        return s;
    }

    @Test
    void threeRanksStageCommitReadAndLandInTheMirror() throws Exception {
        List<CommunicatorTransport> t = form(3, 4);
        long h2dBefore = SoftHcomm.counters().h2dBytes();
        long d2hBefore = SoftHcomm.counters().d2hBytes();
        long notifiesBefore = SoftHcomm.counters().notifies();
        try {
            assertEquals(2L * 4 * MIB, t.get(0).deviceBytes(), "HCCL buffer = 2 x hcclBufferSize");
            assertEquals(SoftHcomm.counters().notifies(), notifiesBefore, "HCCS reads record no notify");
            Random rnd = new Random(7);
            byte[][] data = new byte[3][];
            Region[] arenas = new Region[3];
            for (int r = 0; r < 3; r++) {
                data[r] = new byte[MIB + 17 * r];
                rnd.nextBytes(data[r]);
                arenas[r] = t.get(r).allocate("send", 2 * MIB);
                arenas[r].buffer().put(100, data[r]);
                arenas[r].commit(100, data[r].length);
            }
            for (int reader = 0; reader < 3; reader++) {
                Region recv = t.get(reader).allocate("recv", 4 * MIB);
                PeerChannels peers = t.get(reader).connect(specs(3, reader));
                assertTrue(peers.poll());
                try (ReadBatch b = t.get(reader).newReadBatch()) {
                    long at = 0;
                    for (int i = 0; i < peers.size(); i++) {
                        PeerChannels.PeerChannel ch = peers.channel(i);
                        assertEquals(PeerChannels.State.READY, ch.state());
                        int owner = Integer.parseInt(ch.peerId().substring(5));
                        b.read(ch, recv.address() + at, arenas[owner].readSource(100), data[owner].length);
                        at += data[owner].length;
                    }
                    b.await();
                    ByteBuffer got = recv.buffer();
                    at = 0;
                    for (int i = 0; i < peers.size(); i++) {
                        int owner = Integer.parseInt(peers.channel(i).peerId().substring(5));
                        byte[] back = new byte[data[owner].length];
                        got.get((int) at, back);
                        assertArrayEquals(data[owner], back, "reader " + reader + " from owner " + owner);
                        at += back.length;
                    }
                }
                peers.close();
            }
            long staged = data[0].length + data[1].length + data[2].length;
            assertEquals(staged, SoftHcomm.counters().h2dBytes() - h2dBefore, "staged by host-to-device copies");
            assertEquals(2 * staged, SoftHcomm.counters().d2hBytes() - d2hBefore, "each read came back to the host");
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    /**
     * aclrtGetDeviceCount answers soft HComm's device count ($HCOMM_SOFT_DEVICES, default 8), and aclrtSetDevice
     * takes exactly the ids below it (107001, ACL_ERROR_RT_INVALID_DEVICEID, at the count): the bound the plugin
     * checks a device id against before it sets the device.
     */
    @Test
    void theDeviceCountBoundsTheIdsSetDeviceTakes() throws Exception {
        String env = System.getenv("HCOMM_SOFT_DEVICES");
        int count = Acl.deviceCount();
        assertEquals(env == null ? 8 : Integer.parseInt(env), count);
        int refused = pool1(() -> {
            Acl.useDevice(count - 1);
            return assertThrows(HcommException.class, () -> Acl.useDevice(count)).code();
        });
        assertEquals(107001, refused);
    }

    /** Runs {@code call} on a thread of its own (a thread keeps the device it set). */
    private static <T> T pool1(java.util.concurrent.Callable<T> call) throws Exception {
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            return one.submit(call).get();
        } finally {
            one.shutdownNow();
        }
    }

    @Test
    void aViewOfARangeIsTheMirrorsBytesThere() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            HcommTransportTest.viewsOfRangesAreTheRegionsBytes(t.get(0).allocate("views", MIB));
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void filesCannotBeRegisteredAndTheBufferIsBounded() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            TransportException e = assertThrows(TransportException.class,
                    () -> t.get(0).mapFile("f", Path.of("/etc/hostname"), 1));
            assertEquals(5, e.code());
            t.get(0).allocate("a", MIB);
            IllegalStateException full = assertThrows(IllegalStateException.class, () -> t.get(0).allocate("b", 2 * MIB));
            assertTrue(full.getMessage().contains("spark.shuffle.hcomm.communicator.bufferMB"), full.getMessage());
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void aPeerOutsideTheCommunicatorIsAFailedChannelAndAReadOfItFails() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            PeerChannels p = t.get(0).connect(List.of(new PeerSpec("stranger", new byte[0], 1, true, "s")));
            assertEquals(PeerChannels.State.FAILED, p.channel(0).state());
            Region recv = t.get(0).allocate("recv", MIB);
            try (ReadBatch b = t.get(0).newReadBatch()) {
                TransportException e = assertThrows(TransportException.class,
                        () -> b.read(p.channel(0), recv.address(), recv.address(), 8));
                assertEquals(p.channel(0), e.channel());
            }
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void aReadOutsideThePeersBufferIsRefusedNamingThePeerBeforeAnyNativeCall() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            Region recv = t.get(0).allocate("recv", MIB);
            Region owned = t.get(1).allocate("owned", MIB);
            PeerChannels p = t.get(0).connect(specs(2, 0));
            long size = t.get(1).deviceBytes();
            long[][] refused = {{size - 4, 8}, {size, 1}, {-8, 8}, {owned.address(), 8}, {0, size + 1}};
            for (long[] r : refused) {
                try (ReadBatch b = t.get(0).newReadBatch()) {
                    TransportException e = assertThrows(TransportException.class,
                            () -> b.read(p.channel(0), recv.address(), r[0], r[1]));
                    assertEquals(1, e.code(), e.getMessage()); // HCCL_E_PARA
                    assertEquals(p.channel(0), e.channel());
                    assertTrue(e.getMessage().contains("outside the HCCL buffer of exec-1 (" + size + " bytes"),
                            e.getMessage());
                    assertEquals(null, e.getCause(), "refused by the transport, not by the library");
                }
            }
            try (ReadBatch b = t.get(0).newReadBatch()) { // the last byte is in range
                owned.buffer().put(MIB - 1, (byte) 42);
                owned.commit(MIB - 1, 1);
                b.read(p.channel(0), recv.address(), owned.readSource(MIB - 1), 1);
                b.await();
                assertEquals(42, recv.buffer().get(0));
            }
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void aRegionPublishesAnOffsetIntoTheHcclBufferThatTheReaderResolves() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            Region first = t.get(1).allocate("first", 5000);
            Region second = t.get(1).allocate("second", 8192);
            assertEquals(0, first.readSource(0));
            assertEquals(8192 + 16, second.readSource(16), "carved at the next 4 KiB after the first");
            long[] view = t.get(0).communicator().peerBuffer(
                    ((CommPeers.Peer) t.get(0).connect(specs(2, 0)).channel(0)).link().handle());
            assertEquals(t.get(1).deviceBytes(), view[1], "the channel's size is the owner's HCCL buffer");
            byte[] data = new byte[4096];
            new Random(3).nextBytes(data);
            second.buffer().put(16, data);
            second.commit(16, data.length);
            Region recv = t.get(0).allocate("recv", MIB);
            PeerChannels p = t.get(0).connect(specs(2, 0));
            try (ReadBatch b = t.get(0).newReadBatch()) {
                b.read(p.channel(0), recv.address() + 64, second.readSource(16), data.length);
                b.await();
            }
            byte[] back = new byte[data.length];
            recv.buffer().get(64, back);
            assertArrayEquals(data, back);
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void aBatchRecordsOneAckNotifyPerRoceChannelItReadOver() throws Exception {
        // exec-0 on host a, exec-1 and exec-2 on host b: exec-1 reads RoCE from exec-0 and HCCS from exec-2
        List<CommunicatorTransport> t = form(1, "a", "b", "b");
        try {
            Region[] owned = new Region[3];
            for (int r = 0; r < 3; r++) {
                owned[r] = t.get(r).allocate("owned", 4096);
                owned[r].buffer().putLong(0, 1000 + r);
                owned[r].commit(0, 8);
            }
            Region recv = t.get(1).allocate("recv", 4096);
            PeerChannels p = t.get(1).connect(specs(3, 1));
            long before = SoftHcomm.counters().notifies();
            try (ReadBatch b = t.get(1).newReadBatch()) {
                for (int round = 0; round < 2; round++) {
                    for (int i = 0; i < p.size(); i++) {
                        int owner = Integer.parseInt(p.channel(i).peerId().substring(5));
                        b.read(p.channel(i), recv.address() + 8 * (2 * owner + round), owned[owner].readSource(0), 8);
                    }
                }
                b.await();
                assertEquals(1, SoftHcomm.counters().notifies() - before, "one ACK, on the one RoCE channel");
                for (int i = 0; i < p.size(); i++) {
                    b.read(p.channel(i), recv.address() + 64 + 8 * i, owned[0].readSource(0), 8);
                }
                b.flush();
                b.await();
                assertEquals(2, SoftHcomm.counters().notifies() - before, "one more for the second batch");
            }
            assertEquals(1000, recv.buffer().getLong(0));
            assertEquals(1002, recv.buffer().getLong(8 * 4));
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void oneBatchAtATimeIssuesOnACommunicator() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            Region owned = t.get(1).allocate("owned", 4096);
            Region recv = t.get(0).allocate("recv", 4096);
            PeerChannels p = t.get(0).connect(specs(2, 0));
            try (ReadBatch a = t.get(0).newReadBatch(); ReadBatch b = t.get(0).newReadBatch()) {
                a.read(p.channel(0), recv.address(), owned.readSource(0), 8); // a holds the claim until its flush
                TransportException again = assertThrows(TransportException.class,
                        () -> b.read(p.channel(0), recv.address() + 8, owned.readSource(0), 8));
                assertTrue(again.getMessage().contains("claimed by this thread already"), again.getMessage());
                java.util.concurrent.CountDownLatch issued = new java.util.concurrent.CountDownLatch(1);
                Future<?> second = other.submit(() -> {
                    b.read(p.channel(0), recv.address() + 8, owned.readSource(0), 8);
                    issued.countDown();
                    b.await();
                    return null;
                });
                assertTrue(!issued.await(300, java.util.concurrent.TimeUnit.MILLISECONDS),
                        "another thread's batch waits for the claim");
                a.flush();
                assertTrue(issued.await(10, java.util.concurrent.TimeUnit.SECONDS), "and issues once it is free");
                second.get();
                a.await();
            }
        } finally {
            other.shutdown();
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void aClaimIsOneUserAtATimeAndReleasedOnce() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            org.hcomm.bridge.communicator.Communicator comm = t.get(0).communicator();
            assertTrue(!comm.name().isEmpty(), "HcclGetCommName");
            org.hcomm.bridge.communicator.Communicator.Claim c = comm.claim();
            assertThrows(IllegalStateException.class, comm::claim);
            c.close();
            c.close(); // once
            comm.claim().close();
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }

    @Test
    void aJoinOnADeviceWaitsForAnEarlierInitStillBlockingThere() throws Exception {
        byte[] rootA = CommunicatorTransport.rootInfo(5);
        List<CommunicatorTransport.Member> two = List.of(new CommunicatorTransport.Member("exec-0", "h"),
                new CommunicatorTransport.Member("exec-1", "h"));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<CommunicatorTransport> made = new ArrayList<>();
        try {
            // rank 0 of a 2-member communicator on device 5 blocks in its init until rank 1 joins
            Future<CommunicatorTransport> first = pool.submit(() -> CommunicatorTransport.form(rootA, two, 0, 5, 1,
                    null));
            Thread.sleep(200);
            byte[] rootB = CommunicatorTransport.rootInfo(5);
            Future<CommunicatorTransport> later = pool.submit(() -> CommunicatorTransport.form(rootB,
                    List.of(new CommunicatorTransport.Member("exec-0", "h")), 0, 5, 1, null));
            Thread.sleep(500);
            assertTrue(!later.isDone(), "a 1-member join on device 5 waits for the init blocking there");
            made.add(CommunicatorTransport.form(rootA, two, 1, 6, 1, null));
            made.add(first.get());
            made.add(later.get());
        } finally {
            pool.shutdown();
            made.forEach(CommunicatorTransport::close);
        }
    }
}
