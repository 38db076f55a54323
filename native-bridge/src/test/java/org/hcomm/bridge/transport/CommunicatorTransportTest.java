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
        byte[] root = CommunicatorTransport.rootInfo(0);
        List<CommunicatorTransport.Member> members = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            members.add(new CommunicatorTransport.Member("exec-" + r, "h"));
        }
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<CommunicatorTransport>> joins = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                joins.add(pool.submit(() -> CommunicatorTransport.form(root, members, rank, rank, bufferMb, null)));
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
        try {
            assertEquals(2L * 4 * MIB, t.get(0).deviceBytes(), "HCCL buffer = 2 x hcclBufferSize");
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
                        b.read(ch, recv.address() + at, arenas[owner].address() + 100, data[owner].length);
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
    void aReadOutsideThePeersBufferIsRefusedWithHcclEPara() throws Exception {
        List<CommunicatorTransport> t = form(2, 1);
        try {
            Region recv = t.get(0).allocate("recv", MIB);
            PeerChannels p = t.get(0).connect(specs(2, 0));
            try (ReadBatch b = t.get(0).newReadBatch()) {
                TransportException e = assertThrows(TransportException.class,
                        () -> b.read(p.channel(0), recv.address(), 4096, 8)); // not the peer's HCCL buffer
                assertEquals(1, e.code(), e.getMessage());
            }
        } finally {
            t.forEach(CommunicatorTransport::close);
        }
    }
}
