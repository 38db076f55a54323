package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.junit.jupiter.api.Test;

/** How many receive-buffer chunks a reduce task borrows: alone, and while another task reads. */
class ReadResourcesTest {
    private static final int MIB = 1 << 20;

    /** A transport that only allocates {@code region} and hands out read batches that do nothing. */
    private static Transport transport(Region region) {
        return transport(region, () -> { });
    }

    /**
     * A transport that only allocates {@code region} and hands out read batches (up to 8 apart) that do nothing but
     * run {@code onClose} when closed.
     */
    private static Transport transport(Region region, Runnable onClose) {
        ReadBatch batch = (ReadBatch) Proxy.newProxyInstance(ReadBatch.class.getClassLoader(),
                new Class<?>[] {ReadBatch.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        onClose.run();
                    }
                    return null;
                });
        return (Transport) Proxy.newProxyInstance(Transport.class.getClassLoader(), new Class<?>[] {Transport.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "allocate" -> region;
                    case "newReadBatch" -> batch;
                    case "independentBatches" -> 8;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** 64 chunks of 1 MiB, 48 MiB in flight (Spark's default maxSizeInFlight). */
    private static ReadResources resources(long maxBytesInFlight, long readTimeoutMs) {
        return new ReadResources(transport(ReceiveBufferTest.region(64 * MIB)), ShuffleMetrics.forExecutor(), "7",
                64L * MIB, MIB, maxBytesInFlight, readTimeoutMs);
    }

    @Test
    void aLoneTaskNeeding33ChunksGetsThemAndEachWaveHasChunksOfItsOwn() {
        try (ReadResources resources = resources(48L * MIB, 1_000)) {
            // three outputs of 10.5 MiB: 31.5 MiB, which the plan lays over 32 chunks end to end
            List<MapRead> reads = List.of(WavePlanTest.read("a", 1, 0, 1, 0), WavePlanTest.read("b", 2, 0, 1, 0),
                    WavePlanTest.read("c", 3, 0, 1, 0));
            long each = 10L * MIB + MIB / 2;
            long[][] offsets = {{0, each}, {0, each}, {0, each}};
            ReadResources.Lease lease = resources.borrow(3 * each);
            assertNotNull(lease);
            assertEquals(33, lease.chunks().size(), "what the bytes need (it used to be capped at a quarter of what is free: 16)");
            WavePlan plan = new WavePlan(0, reads, offsets, lease.chunks(), MIB, 4);
            assertTrue(plan.fitsBorrowed);
            assertEquals(4, plan.waves.size(), "4, 8, 16 chunks (half of them), then the last 4");
            assertEquals(32, plan.pieces.stream().map(p -> p.chunk.index).distinct().count(),
                    "no chunk serves two waves");
            assertFalse(new WavePlan(0, reads, offsets, lease.chunks().subList(0, 31), MIB, 4).fitsBorrowed,
                    "with one chunk fewer waves would wait for chunks to be consumed");
            resources.giveBack(lease);
            assertEquals(0, resources.chunksNotFree());
        }
    }

    @Test
    void aLoneTaskGetsAtMostMaxBytesInFlightAndLeavesAQuarterOfTheBuffer() {
        try (ReadResources resources = resources(48L * MIB, 1_000)) {
            ReadResources.Lease lease = resources.borrow(100L * MIB);
            assertEquals(48, lease.chunks().size(), "48 MiB in flight");
            resources.giveBack(lease);
        }
        try (ReadResources resources = resources(1L << 34, 1_000)) {
            ReadResources.Lease lease = resources.borrow(100L * MIB);
            assertEquals(48, lease.chunks().size(), "a quarter of the buffer stays for the next reader");
            resources.giveBack(lease);
        }
    }

    @Test
    void aTimedOutReaderEndsAtOnceWhileItsBatchesCloseTogetherAndItsChunksAreRetiredAfterTheLast() throws Exception {
        // closing a batch waits for its reads: with an owner that does not answer, up to the read timeout each
        CountDownLatch closing = new CountDownLatch(8);
        CountDownLatch answer = new CountDownLatch(1);
        Transport silentOwner = transport(ReceiveBufferTest.region(64 * MIB), () -> {
            closing.countDown();
            try {
                answer.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
        try (ReadResources resources = new ReadResources(silentOwner, metrics, "7", 64L * MIB, MIB, 48L * MIB,
                10_000)) {
            ReadResources.Lease lease = resources.withBatches(resources.borrow(8L * MIB), 8);
            assertEquals(8, lease.batches().length);
            int chunks = lease.chunks().size();
            StageAttempt stage = new StageAttempt(3, 0);
            ExecutorService reader = Executors.newSingleThreadExecutor();
            CompletableFuture<Void> retired;
            try {
                // the reader's thread is not held by the closes (each of which would wait the read timeout)
                retired = reader.submit(() -> resources.retire(stage, lease, () -> false)).get(30, TimeUnit.SECONDS);
                assertFalse(retired.isDone(), "done before the batches closed: the stage's channels could go");
                assertTrue(closing.await(30, TimeUnit.SECONDS), "the 8 batches close together, not one after "
                        + "another: " + (8 - closing.getCount()) + " closing");
                assertEquals(chunks, resources.chunksNotFree(), "meanwhile the chunks are lent to nobody");
                assertEquals(0, metrics.chunksRetired.getCount(), "retired only once every batch is closed");
            } finally {
                answer.countDown();
                reader.shutdown();
            }
            retired.get(30, TimeUnit.SECONDS);
            assertEquals(chunks, metrics.chunksRetired.getCount(), "retired until the attempt's channels go");
            assertEquals(chunks, resources.chunksNotFree());
            resources.reclaim(stage);
            assertEquals(0, resources.chunksNotFree(), "lent again once the attempt's channels are destroyed");
        }
    }

    @Test
    void twoConcurrentTasksBothMakeProgress() throws Exception {
        try (ReadResources resources = resources(48L * MIB, 100)) {
            ReadResources.Lease first = resources.borrow(40L * MIB);
            ReadResources.Lease second = resources.borrow(40L * MIB); // within 100 ms, while the first holds 42
            assertEquals(42, first.chunks().size());
            assertNotNull(second, "the second task got chunks without waiting for the first");
            assertEquals(5, second.chunks().size(), "a quarter of the 22 chunks left");
            resources.giveBack(first);
            resources.giveBack(second);
        }
        try (ReadResources resources = resources(48L * MIB, 10_000)) {
            ExecutorService tasks = Executors.newFixedThreadPool(2);
            CyclicBarrier start = new CyclicBarrier(2);
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                done.add(tasks.submit(() -> {
                    start.await();
                    int rounds = 0;
                    for (; rounds < 500; rounds++) {
                        ReadResources.Lease lease = resources.borrow(40L * MIB);
                        assertNotNull(lease, "no chunks within the read timeout in round " + rounds);
                        assertTrue(lease.chunks().size() >= 2);
                        Thread.yield();
                        resources.giveBack(lease);
                    }
                    return rounds;
                }));
            }
            for (Future<Integer> f : done) {
                assertEquals(500, f.get(60, TimeUnit.SECONDS), "each task borrowed and gave back 500 times");
            }
            tasks.shutdown();
            assertEquals(0, resources.chunksNotFree());
        }
    }
}
