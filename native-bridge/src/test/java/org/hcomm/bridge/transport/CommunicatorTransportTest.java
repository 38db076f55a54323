package org.hcomm.bridge.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
 * {@link CommunicatorTransport} in one process under the Atlas A2 profile: ranks on their own OS threads and devices
 * (CANN allows one thread per device), the root info carried between them as bytes. Its windows are
 * {@link WindowExchangeTest}'s. Every test ends with no live soft HComm object and no device memory.
 */
@Timeout(120)
class CommunicatorTransportTest {
    static final int MIB = 1 << 20;
    /** One slot of 64 KiB: a window fits any test buffer. */
    static final CommunicatorTransport.WindowSpec SPEC = new CommunicatorTransport.WindowSpec(1, 64 << 10, 10_000);

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
        return form(bufferMb, SPEC, hosts);
    }

    /** As {@link #form(int, String...)}, the HCCL buffer cut into windows as {@code spec} says. */
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
                joins.add(pool.submit(() -> CommunicatorTransport.formWindowed(root, members, rank, rank, bufferMb,
                        null, spec)));
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

    /**
     * The HCCL buffer is twice hcclBufferSize and only a window: nothing is carved from it, no file or memory is
     * registered, and no read batch or channel of the endpoint path's kind is made on it.
     */
    @Test
    void theBufferIsAWindowAndTheEndpointPathsCallsRefuse() throws Exception {
        List<CommunicatorTransport> t = form(3, 4);
        try {
            assertEquals(2L * 4 * MIB, t.get(0).deviceBytes(), "HCCL buffer = 2 x hcclBufferSize");
            assertEquals(0, t.get(0).listenPort());
            TransportException e = assertThrows(TransportException.class,
                    () -> t.get(0).mapFile("f", Path.of("/etc/hostname"), 1));
            assertEquals(5, e.code());
            for (org.junit.jupiter.api.function.Executable refused : List.<org.junit.jupiter.api.function.Executable>of(
                    () -> t.get(0).allocate("arena", MIB), () -> t.get(0).register("r", 4096, 8),
                    () -> t.get(0).newReadBatch(), () -> t.get(0).connect(List.of(new PeerSpec("exec-1", new byte[0],
                            1, true, "s"))))) {
                UnsupportedOperationException u = assertThrows(UnsupportedOperationException.class, refused);
                assertTrue(u.getMessage().contains("windows of the HCCL buffer"), u.getMessage());
            }
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
            Future<CommunicatorTransport> first = pool.submit(() -> CommunicatorTransport.formWindowed(rootA, two, 0, 5,
                    1, null, SPEC));
            Thread.sleep(200);
            byte[] rootB = CommunicatorTransport.rootInfo(5);
            Future<CommunicatorTransport> later = pool.submit(() -> CommunicatorTransport.formWindowed(rootB,
                    List.of(new CommunicatorTransport.Member("exec-0", "h")), 0, 5, 1, null, SPEC));
            Thread.sleep(500);
            assertTrue(!later.isDone(), "a 1-member join on device 5 waits for the init blocking there");
            made.add(CommunicatorTransport.formWindowed(rootA, two, 1, 6, 1, null, SPEC));
            made.add(first.get());
            made.add(later.get());
        } finally {
            pool.shutdown();
            made.forEach(CommunicatorTransport::close);
        }
    }
}
