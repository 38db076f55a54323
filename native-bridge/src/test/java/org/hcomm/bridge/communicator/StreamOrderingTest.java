package org.hcomm.bridge.communicator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.SoftCounters;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;
import org.hcomm.bridge.raw.AclEventLibrary;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.HcommAbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The facade of cross-stream ordering on soft HComm under the Atlas A2 profile: two ranks of one communicator in
 * this process (devices 0 and 1, joined on two threads), one HCCS channel between them. {@link AclEvent} on a
 * {@link CommStream} after a notify wait, a {@link CopyStream} that waits for it and copies the HCCL buffer into
 * {@link PinnedHost} memory, {@link CommStream#write} into the peer's buffer, and {@link CommStream#abort()} of a
 * wait on a peer that never records. Every test ends with no live soft HComm object.
 */
@Timeout(120)
class StreamOrderingTest {
    static final int MIB = 1 << 20;

    private Communicator[] comms;
    private long[] channels;

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

    /** Two ranks on devices 0 and 1, 2 x 2 MB buffers, one HCCS channel each way (both ends acquire). */
    @BeforeEach
    void formTwoRanks() throws Exception {
        byte[] root = Communicator.rootInfo(0);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Communicator> r0 = pool.submit(() -> Communicator.join(root, 2, 0, 0, 2, "ordering"));
            Future<Communicator> r1 = pool.submit(() -> Communicator.join(root, 2, 1, 1, 2, "ordering"));
            comms = new Communicator[] {r0.get(), r1.get()};
            int[] hccs = {HcommAbi.COMM_PROTOCOL_HCCS};
            Future<long[]> c0 = pool.submit(() -> comms[0].acquireChannels(new int[] {1}, hccs,
                    Communicator.NOTIFY_NUM));
            Future<long[]> c1 = pool.submit(() -> comms[1].acquireChannels(new int[] {0}, hccs,
                    Communicator.NOTIFY_NUM));
            channels = new long[] {c0.get()[0], c1.get()[0]};
        } finally {
            pool.shutdown();
        }
    }

    @AfterEach
    void closeAndNothingLeaks() {
        for (Communicator c : comms) {
            c.close();
        }
        SoftCounters c = SoftHcomm.counters();
        assertTrue(c.noLiveObjects(), "live HComm objects after the test: " + c);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /**
     * notify wait on a CommStream, an event after it, a CopyStream that waits for the event, then device to host:
     * nothing is copied until the writer's write and notify came; then the host holds the written bytes.
     */
    @Test
    void copyStreamWaitsForAnEventAfterANotifyWait() {
        byte[] data = random(MIB, 17);
        CommStream reader = comms[1].newStream();
        try (AclEvent ev = AclEvent.create(1); CopyStream copy = CopyStream.create(1);
                PinnedHost host = PinnedHost.allocate(1, MIB)) {
            assertFalse(ev.isComplete(), "never recorded");
            ev.await(0); // nothing recorded: nothing to wait for
            ByteBuffer view = host.buffer();
            assertEquals(MIB, view.capacity());
            assertEquals(MIB, host.size());
            assertEquals(0, host.address() % 4096, "page aligned");
            assertEquals(1, SoftHcomm.counters().events());
            assertEquals(MIB, SoftHcomm.counters().hostBytes());
            for (int i = 0; i < MIB; i++) {
                view.put(i, (byte) 0x55);
            }
            reader.waitForPeer(channels[1], Communicator.Notify.ACK.index(), 30);
            ev.record(reader); // flushes the batch: after the wait
            copy.waitFor(ev);
            copy.toHost(host.address(), comms[1].bufferAddress(), MIB);
            assertFalse(ev.isComplete(), "complete before the peer's notify");
            HcommException timeout = assertThrows(HcommException.class, () -> ev.await(50));
            assertEquals(AclEventLibrary.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, timeout.code());
            assertEquals("aclrtSynchronizeEventWithTimeout", timeout.call());
            assertEquals((byte) 0x55, view.get(0), "the copy ran before the event it waits for");

            Memory src = new Memory(MIB);
            src.write(0, data, 0, MIB);
            Acl.toDevice(0, comms[0].bufferAddress(), Memory.nativeValue(src), MIB);
            CommStream writer = comms[0].newStream();
            long peer = comms[0].peerBuffer(channels[0])[0];
            writer.write(channels[0], peer, comms[0].bufferAddress(), MIB);
            writer.notifyPeer(channels[0], Communicator.Notify.ACK.index());
            writer.await();

            ev.await(30_000);
            assertTrue(ev.isComplete());
            copy.await();
            byte[] got = new byte[MIB];
            view.get(0, got);
            assertArrayEquals(data, got, "the written bytes, through the event and the copy stream");
            reader.await();

            copy.toDevice(comms[1].bufferAddress() + MIB, host.address(), MIB); // host to device on the same stream
            copy.record(ev);
            ev.await(-1);
            Memory back = new Memory(MIB);
            Acl.toHost(1, Memory.nativeValue(back), comms[1].bufferAddress() + MIB, MIB);
            assertArrayEquals(data, back.getByteArray(0, MIB), "toDevice from pinned memory");
        }
    }

    /** A write outside the peer's buffer as the channel names it: HCCL_E_PARA, nothing queued. */
    @Test
    void writeOutsideThePeersBufferIsRefused() {
        CommStream writer = comms[0].newStream();
        long[] peer = comms[0].peerBuffer(channels[0]);
        HcommException e = assertThrows(HcommException.class, () -> writer.write(channels[0], peer[0] + peer[1] - 64,
                comms[0].bufferAddress(), 128));
        assertEquals(HcommStatus.HCCL_E_PARA, e.status());
        assertEquals("HcommWriteOnThread", e.call());
        writer.await();
    }

    /**
     * A CommStream blocked in a notify wait on a peer that never records: {@code await(100)} throws
     * ACL_ERROR_RT_STREAM_SYNC_TIMEOUT at its timeout; aborted from another thread, its await throws
     * ACL_ERROR_RT_STREAM_ABORT promptly, and again later; the event recorded after the wait fails with it,
     * and so does, once, the CopyStream that waits for that event.
     */
    @Test
    void abortStopsAWaitOnAPeerThatNeverRecords() throws Exception {
        CommStream blocked = comms[1].newStream();
        try (AclEvent ev = AclEvent.create(1); CopyStream copy = CopyStream.create(1)) {
            blocked.waitForPeer(channels[1], Communicator.Notify.DATA.index(), 0); // 0: as long as the peer lives
            ev.record(blocked);
            copy.waitFor(ev);
            long w0 = System.nanoTime();
            assertEquals(AclRuntime.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                    assertThrows(HcommException.class, () -> blocked.await(100)).code(), "await(ms) times out");
            assertTrue(System.nanoTime() - w0 < 3_000_000_000L, "a 100 ms await took longer than 3 s");
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<?> abort = pool.submit(() -> {
                    Thread.sleep(300);
                    blocked.abort();
                    return null;
                });
                long t0 = System.nanoTime();
                HcommException e = assertThrows(HcommException.class, blocked::await);
                long ms = (System.nanoTime() - t0) / 1_000_000;
                abort.get();
                assertEquals(AclEventLibrary.ACL_ERROR_RT_STREAM_ABORT, e.code());
                assertTrue(ms < 5_000, "the aborted wait returned after " + ms + " ms");
            } finally {
                pool.shutdown();
            }
            assertEquals(AclEventLibrary.ACL_ERROR_RT_STREAM_ABORT,
                    assertThrows(HcommException.class, blocked::await).code(), "an aborted stream stays aborted");
            assertEquals(AclEventLibrary.ACL_ERROR_RT_STREAM_ABORT,
                    assertThrows(HcommException.class, () -> ev.await(5_000)).code());
            assertFalse(ev.isComplete());
            assertEquals(AclEventLibrary.ACL_ERROR_RT_STREAM_ABORT,
                    assertThrows(HcommException.class, copy::await).code());
            copy.await(); // reported once; the copy stream goes on

            copy.abort();
            assertEquals(AclEventLibrary.ACL_ERROR_RT_STREAM_ABORT,
                    assertThrows(HcommException.class, () -> copy.toHost(0x1000, comms[1].bufferAddress(), 64))
                            .code());
        }
    }

    /** Closed owners refuse use; a second close does nothing. */
    @Test
    void closedOwnersRefuseUse() {
        AclEvent ev = AclEvent.create(0);
        PinnedHost host = PinnedHost.allocate(0, 4096);
        CopyStream copy = CopyStream.create(0);
        ev.close();
        ev.close();
        host.close();
        host.close();
        copy.close();
        assertThrows(IllegalStateException.class, ev::isComplete);
        assertThrows(IllegalStateException.class, host::buffer);
        assertThrows(IllegalStateException.class, () -> copy.record(ev));
        assertThrows(IllegalArgumentException.class, () -> PinnedHost.allocate(0, 0));
    }
}
