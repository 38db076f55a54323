package org.hcomm.bridge;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSetupException;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.endpoint.ChannelStatus;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;
import org.hcomm.bridge.raw.CommMem;
import org.hcomm.bridge.raw.EndpointDesc;
import org.hcomm.bridge.raw.HcommAbi;
import org.hcomm.bridge.raw.HcommAllocLibrary;
import org.hcomm.bridge.raw.HcommChannelDesc;
import org.hcomm.bridge.raw.HcommDescInit;
import org.hcomm.bridge.raw.HcommLibrary;
import org.hcomm.bridge.raw.HcommOnThreadLibrary;
import org.hcomm.bridge.read.ChannelReadException;
import org.hcomm.bridge.read.ReadStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Failure behaviour against the real soft library: bad arguments (through the raw mapping, where the facade would
 * reject them first), a bad handle inside a destroy batch, out-of-range reads, a peer killed mid-read, a wrong
 * secret, and use after close. Every test ends with no live HComm object.
 */
class SoftHcommFailureTest {
    private static final int MIB = 1 << 20;

    @BeforeAll
    static void libraryLoads() {
        assertTrue(HcommNative.isAvailable(), () -> "soft HComm unavailable: " + HcommNative.unavailabilityCause());
    }

    @AfterEach
    void nothingLeaksAndConfigIsDefault() {
        SoftHcomm.configure("force_tcp", "0");
        SoftHcomm.configure("secret", "");
        SoftHcomm.configure("exec_timeout_ms", "60000");
        SoftCounters c = SoftHcomm.counters();
        assertTrue(c.noLiveObjects(), "live HComm objects after the test: " + c);
    }

    private static Endpoint loopbackEndpoint() throws Exception {
        return Endpoint.create(InetAddress.getByName("127.0.0.1"));
    }

    /** A loopback endpoint made through the raw mapping, for calls the facade would reject first. */
    private static Pointer rawLoopbackEndpoint() {
        PointerByReference out = new PointerByReference();
        assertEquals(0, HcommLibrary.HcommEndpointCreate(loopbackDesc(), out));
        return out.getValue();
    }

    private static EndpointDesc loopbackDesc() {
        EndpointDesc desc = new EndpointDesc();
        HcommDescInit.endpointDescInit(desc);
        desc.protocol = HcommAbi.COMM_PROTOCOL_ROCE;
        desc.commAddr.type = HcommAbi.COMM_ADDR_TYPE_IP_V4;
        desc.commAddr.raws[0] = 127;
        desc.commAddr.raws[1] = 0;
        desc.commAddr.raws[2] = 0;
        desc.commAddr.raws[3] = 1;
        desc.loc.locType = HcommAbi.ENDPOINT_LOC_TYPE_HOST;
        return desc;
    }

    private static int unusedPort() throws Exception {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    @Test
    void channelCountOutsideOneToMaxIsParameterError() {
        Pointer ep = rawLoopbackEndpoint();
        try {
            HcommChannelDesc desc = new HcommChannelDesc();
            HcommDescInit.hcommChannelDescInit(desc);
            long[] out = new long[1];
            assertEquals(HcommAbi.HCCL_E_PARA, HcommLibrary.HcommChannelCreate(ep,
                    HcommAbi.COMM_ENGINE_CPU, desc.getPointer(), 0, out));
            assertEquals(HcommAbi.HCCL_E_PARA, HcommLibrary.HcommChannelCreate(ep,
                    HcommAbi.COMM_ENGINE_CPU, desc.getPointer(), HcommAbi.HCOMM_CHANNEL_NUM_MAX + 1, out));
            assertEquals(0, out[0], "nothing may be written on a rejected create");
        } finally {
            assertEquals(0, HcommLibrary.HcommEndpointDestroy(ep));
        }
    }

    @Test
    void nullPointersArePointerErrors() {
        EndpointDesc desc = loopbackDesc();
        assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommEndpointCreate(null, new PointerByReference()));
        assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommEndpointCreate(desc, null));
        assertEquals(HcommAbi.HCCL_E_PTR, HcommAllocLibrary.HcommMemAlloc(null, 4096));
        assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommChannelGetStatus(null, 1, new int[1]));
        assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommChannelDestroy(null, 1));
        assertEquals(HcommAbi.HCCL_E_PTR, HcommOnThreadLibrary.HcommThreadAlloc(HcommAbi.COMM_ENGINE_CPU, 1,
                new int[] {0}, null));
        Pointer ep = rawLoopbackEndpoint();
        try {
            assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommChannelCreate(ep,
                    HcommAbi.COMM_ENGINE_CPU, null, 1, new long[1]));
            assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommMemReg(ep, "t", null,
                    new PointerByReference()));
            CommMem nullAddr = new CommMem();
            nullAddr.type = HcommAbi.COMM_MEM_TYPE_HOST;
            nullAddr.size = 4096;
            assertEquals(HcommAbi.HCCL_E_PTR, HcommLibrary.HcommMemReg(ep, "t", nullAddr,
                    new PointerByReference()));
        } finally {
            assertEquals(0, HcommLibrary.HcommEndpointDestroy(ep));
        }
    }

    @Test
    void unsupportedEngineIsRejected() throws Exception {
        try (Endpoint ep = loopbackEndpoint()) {
            ChannelSpec spec = ChannelSpec.client(ep.descriptor(), "engine-test", unusedPort());
            HcommException e = assertThrows(HcommException.class,
                    () -> ep.createChannels(Engine.AIV, List.of(spec)));
            assertSame(HcommStatus.HCCL_E_NOT_SUPPORT, e.status());
            assertEquals("HcommChannelCreate", e.call());
        }
    }

    @Test
    void invalidHandleInADestroyBatchFailsAndLeavesTheValidOnesAlive() throws Exception {
        try (Endpoint ep = loopbackEndpoint()) {
            int port = unusedPort();
            ChannelSet set = ep.createChannels(List.of(ChannelSpec.client(ep.descriptor(), "bad-destroy-0", port),
                    ChannelSpec.client(ep.descriptor(), "bad-destroy-1", port)));
            long h0 = set.channel(0).handle();
            long h1 = set.channel(1).handle();
            long bogus = 0x7ead_beef_0000_1000L;
            int rc = HcommLibrary.HcommChannelDestroy(new long[] {h0, bogus, h1}, 3);
            assertEquals(HcommAbi.HCCL_E_NOT_FOUND, rc);
            int[] status = new int[2];
            assertEquals(0, HcommLibrary.HcommChannelGetStatus(new long[] {h0, h1}, 2, status),
                    "GetStatus on the valid handles after the failed destroy");
            assertEquals(2, SoftHcomm.counters().channels());
            set.close(); // both still alive: a normal destroy works
            assertEquals(0, SoftHcomm.counters().channels());
        }
    }

    @Test
    @Timeout(120)
    void outOfRangeReadsAreNotFoundAndLeaveTheDestinationUntouched() throws Exception {
        try (ConnectedPair pair = ConnectedPair.open(ConnectedPair.Path.SHM, MIB, MIB, 1);
                CommThread thread = CommThread.allocate(Engine.CPU, 0);
                Memory unregistered = new Memory(4096)) {
            ByteBuffer dst = pair.dst.buffer();
            TestPattern.paint(dst, 0, MIB, (byte) 0x5A);
            long d = pair.dst.address();
            long s = pair.src.remoteAddress();
            for (ReadStrategy reads : List.of(ReadStrategy.nbiFence(),
                    ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN))) {
                HcommException pastRemoteEnd = assertThrows(HcommException.class, () -> {
                    reads.submit(pair.channel(), d, s + MIB - 10, 100);
                    reads.complete();
                });
                assertSame(HcommStatus.HCCL_E_NOT_FOUND, pastRemoteEnd.status(), pastRemoteEnd.getMessage());
                HcommException pastLocalEnd = assertThrows(HcommException.class, () -> {
                    reads.submit(pair.channel(), d + MIB - 10, s, 100);
                    reads.complete();
                });
                assertSame(HcommStatus.HCCL_E_NOT_FOUND, pastLocalEnd.status(), pastLocalEnd.getMessage());
                HcommException notRegistered = assertThrows(HcommException.class, () -> {
                    reads.submit(pair.channel(), com.sun.jna.Pointer.nativeValue(unregistered), s, 100);
                    reads.complete();
                });
                assertSame(HcommStatus.HCCL_E_NOT_FOUND, notRegistered.status(), notRegistered.getMessage());
                TestPattern.verifyPainted(dst, 0, MIB, (byte) 0x5A, reads.kind() + ": destination");
                // the strategy is usable again after the failure
                reads.submit(pair.channel(), d, s, 4096);
                reads.complete();
                TestPattern.verify(dst, 0, pair.seed, 0, 4096, reads.kind() + ": read after failure");
                TestPattern.paint(dst, 0, 4096, (byte) 0x5A);
            }
        }
    }

    @Test
    @Timeout(120)
    void killedPeerFailsReadsWithinTheExecTimeout() throws Exception {
        int timeoutMs = 5000;
        SoftHcomm.configure("exec_timeout_ms", Integer.toString(timeoutMs));
        ConnectedPair pair = ConnectedPair.prepare(ConnectedPair.Path.TCP, 64L * MIB, 64L * MIB, 1,
                Map.of("HCOMM_SOFT_EXEC_TIMEOUT_MS", Integer.toString(timeoutMs)), Map.of());
        try {
            pair.awaitReady();
            ReadStrategy reads = ReadStrategy.nbiFence();
            long d = pair.dst.address();
            long s = pair.src.remoteAddress();
            // the peer is stopped before the reads go out and killed stopped: it answers none of them, so the kill
            // lands with every one in flight
            signal(pair.peer.pid(), "STOP");
            for (int i = 0; i < 16; i++) {
                reads.submit(pair.channel(), d, s, 64L * MIB);
            }
            pair.killPeer();
            long start = System.nanoTime();
            HcommException failure = assertThrows(HcommException.class, reads::complete);
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertNotEquals(HcommStatus.HCCL_SUCCESS, failure.status());
            ChannelReadException onChannel = assertInstanceOf(ChannelReadException.class, failure,
                    "a failed read names its channel");
            assertSame(pair.channel(), onChannel.channel());
            assertTrue(elapsedMs < timeoutMs + 10_000, "the failure took " + elapsedMs + " ms");
        } finally {
            pair.close();
        }
    }

    /**
     * A stalled peer (SIGSTOP: its connections stay open, nothing answers) read on three channels of one thread: a
     * drain waits for everything on the thread, so its timeout names no channel, and it is the only wait — one per
     * channel would take three timeouts. Afterwards the strategy has ended its batch and forgotten the timed-out reads
     * (their chunks are the caller's to retire), so what a transport's batch does on close — complete again, free the
     * thread — returns at once with the peer still stalled, rather than waiting out a second timeout.
     */
    @Test
    @Timeout(120)
    void aStalledPeerTimesOutOnceAndTheTimeoutNamesNoChannel() throws Exception {
        // long enough that a loaded host's scheduling delays stay well inside one timeout
        int timeoutMs = 5000;
        SoftHcomm.configure("exec_timeout_ms", Integer.toString(timeoutMs));
        ConnectedPair pair = ConnectedPair.prepare(ConnectedPair.Path.TCP, MIB, MIB, 3, Map.of(), Map.of());
        try (CommThread thread = CommThread.allocate(Engine.CPU, 0)) {
            pair.awaitReady();
            ReadStrategy reads = ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN);
            signal(pair.peer.pid(), "STOP");
            try {
                for (int i = 0; i < 3; i++) {
                    reads.submit(pair.channels.channel(i), pair.dst.address() + 4096L * i, pair.src.remoteAddress(),
                            4096);
                }
                long start = System.nanoTime();
                HcommException failure = assertThrows(HcommException.class, reads::complete);
                long elapsedMs = (System.nanoTime() - start) / 1_000_000;
                assertEquals(HcommStatus.HCCL_E_TIMEOUT, failure.status(), failure.getMessage());
                assertFalse(failure instanceof ChannelReadException, "a thread-wide timeout named a channel");
                assertTrue(elapsedMs < 2L * timeoutMs, "waited " + elapsedMs + " ms: more than one timeout");

                long closing = System.nanoTime();
                reads.complete();
                thread.close();
                long closeMs = (System.nanoTime() - closing) / 1_000_000;
                assertTrue(closeMs < timeoutMs, "completing again and freeing the thread took " + closeMs
                        + " ms with the peer still stalled: it waited out another timeout");
            } finally {
                signal(pair.peer.pid(), "CONT");
            }
        } finally {
            pair.close();
        }
    }

    private static void signal(long pid, String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + name + " " + pid);
    }

    /**
     * The connecting side sees FAILED at once. The listening side never becomes READY: it refuses the stranger and
     * keeps waiting for the right peer until its connect timeout (3 s here), then reports a failure status.
     */
    @Test
    @Timeout(120)
    void wrongSecretFailsTheChannel() throws Exception {
        SoftHcomm.configure("secret", "alpha-secret");
        ConnectedPair pair = ConnectedPair.prepare(ConnectedPair.Path.SHM, MIB, MIB, 1,
                Map.of("HCOMM_SOFT_SECRET", "beta-secret"), Map.of("connect_timeout_ms", "3000"));
        try {
            long start = System.nanoTime();
            ChannelSetupException e = assertThrows(ChannelSetupException.class,
                    () -> pair.channels.awaitReady(Duration.ofSeconds(30)));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(0, e.channelIndex());
            assertSame(ChannelStatus.FAILED, e.channelStatus(), e.getMessage());
            assertTrue(ms < 10_000, "FAILED only after " + ms + " ms");
            String peerLine = pair.peer.awaitChannels();
            assertTrue(peerLine.matches("CHANNELS FAILED 0 (FAILED|TIMEOUT) after \\d+ ms"), peerLine);
        } finally {
            pair.close();
        }
    }

    @Test
    void useAfterCloseThrowsIllegalStateAndCloseIsIdempotent() throws Exception {
        Endpoint ep = loopbackEndpoint();
        RegisteredMemory mem = ep.allocate("uac", 4096);
        byte[] exported = mem.export();
        ChannelSet set = ep.createChannels(List.of(ChannelSpec.client(ep.descriptor(), "uac", unusedPort())));
        ChannelSet.Channel ch = set.channel(0);
        CommThread thread = CommThread.allocate(Engine.CPU, 0);
        ReadStrategy onThread = ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN);
        ReadStrategy nbi = ReadStrategy.nbiFence();

        set.close();
        assertDoesNotThrow(set::close);
        assertThrows(IllegalStateException.class, () -> set.channel(0));
        assertThrows(IllegalStateException.class, set::statuses);
        assertThrows(IllegalStateException.class, () -> set.awaitReady(Duration.ofSeconds(1)));
        assertThrows(IllegalStateException.class, () -> nbi.submit(ch, mem.address(), 1, 1));
        assertThrows(IllegalStateException.class, () -> onThread.submit(ch, mem.address(), 1, 1));
        assertThrows(IllegalStateException.class, ch::dataPath);

        thread.close();
        assertDoesNotThrow(thread::close);
        assertThrows(IllegalStateException.class, thread::stream);
        assertThrows(IllegalStateException.class, thread::synchronizeStream);

        mem.close();
        assertDoesNotThrow(mem::close);
        assertThrows(IllegalStateException.class, mem::address);
        assertThrows(IllegalStateException.class, mem::export);
        assertThrows(IllegalStateException.class, mem::buffer);
        assertTrue(exported.length > 0);

        ep.close();
        assertDoesNotThrow(ep::close);
        assertThrows(IllegalStateException.class, ep::listenPort);
        assertThrows(IllegalStateException.class, ep::descriptor);
        assertThrows(IllegalStateException.class, () -> ep.allocate("x", 4096));
        assertThrows(IllegalStateException.class, () -> ep.importMemory(exported));
        assertThrows(IllegalStateException.class, () -> ep.createChannels(
                List.of(ChannelSpec.client(new byte[EndpointDesc.SIZE], "x", 1))));
    }

    @Test
    void closingAnEndpointClosesWhatItStillOwns() throws Exception {
        Endpoint ep = loopbackEndpoint();
        RegisteredMemory mem = ep.allocate("owned", 4096);
        ChannelSet set = ep.createChannels(List.of(ChannelSpec.client(ep.descriptor(), "owned", unusedPort())));
        ep.close();
        assertTrue(mem.isClosed());
        assertTrue(set.isClosed());
    }

    @Test
    void badArgumentsAreRejectedBeforeTheLibrary() throws Exception {
        try (Endpoint ep = loopbackEndpoint()) {
            assertThrows(IllegalArgumentException.class, () -> ep.allocate("x", 0));
            assertThrows(IllegalArgumentException.class, () -> ep.register("x", 0, 16));
            assertThrows(IllegalArgumentException.class, () -> ep.createChannels(List.of()));
            assertThrows(IllegalArgumentException.class, () -> ChannelSpec.client(new byte[10], "x", 1));
            assertThrows(IllegalArgumentException.class,
                    () -> ChannelSpec.client(new byte[EndpointDesc.SIZE], "x".repeat(192), 1));
            assertThrows(IllegalArgumentException.class,
                    () -> ChannelSpec.client(new byte[EndpointDesc.SIZE], "x", 70000));
            assertThrows(IllegalArgumentException.class, () -> Endpoint.create(InetAddress.getByName("::1")));
        }
    }
}
