package org.apache.spark.shuffle.hcomm.internal.channels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageEnd;
import org.hcomm.bridge.transport.HcommTransport;
import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.PeerSpec;
import org.hcomm.bridge.transport.TransportOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * When a stage attempt's channels are destroyed, against the real soft HComm library: two endpoints in this process,
 * the stage's channel from one to the other (it need not become READY to be created and destroyed).
 */
@Timeout(60)
class StageChannelsTest {
    /** Long enough that no test but the overstay one ever reaches it, however loaded the machine. */
    private static final long LONG_END_WAIT_MS = 120_000;
    private static final long SHORT_END_WAIT_MS = 300;

    private HcommTransport local;
    private HcommTransport peer;
    private ShuffleMetrics metrics;
    private Roster roster;
    private StageChannels channels;

    /** The reports an end made, with the thread that made each. */
    private record Report(StageEnd ended, Thread thread) {
    }

    private final BlockingQueue<Report> reports = new ArrayBlockingQueue<>(16);
    private final Consumer<StageEnd> report = e -> reports.add(new Report(e, Thread.currentThread()));
    /** The stage attempts whose channels the destroy listener heard of, in order. */
    private final List<StageAttempt> destroyed = new CopyOnWriteArrayList<>();

    @BeforeEach
    void open() throws Exception {
        TransportOptions options = new TransportOptions(InetAddress.getByName("127.0.0.1"), false, null,
                Duration.ofSeconds(10), Duration.ofSeconds(10));
        local = HcommTransport.open(options);
        peer = HcommTransport.open(options);
        metrics = ShuffleMetrics.forExecutor();
        roster = new Roster("1");
        roster.apply(new Messages.Peers("t" + ProcessHandle.current().pid(),
                List.of(new Messages.Peer("2", peer.endpointDescriptor(), peer.listenPort())), List.of()));
        channels = new StageChannels(local, metrics, roster, destroyed::add, LONG_END_WAIT_MS);
    }

    @AfterEach
    void close() {
        channels.close();
        local.close();
        peer.close();
        assertTrue(local.liveObjects().isEmpty(), () -> "native objects left: " + local.liveObjects());
    }

    private static StageAttempt stage(int id) {
        return new StageAttempt(id, 0);
    }

    /**
     * Creates this executor's end of the stage's channel to the one peer it knows; the peer's end is not created, so
     * it stays CONNECTING.
     */
    private void provision(StageAttempt key) {
        provision(channels, key);
    }

    /** The peer's end of {@code key}'s channel, as the peer's own roster names it: it must meet ours. */
    private PeerSpec peerEnd(StageAttempt key) {
        Roster peerRoster = new Roster("2");
        peerRoster.apply(new Messages.Peers("t" + ProcessHandle.current().pid(),
                List.of(new Messages.Peer("1", local.endpointDescriptor(), local.listenPort())), List.of()));
        return peerRoster.spec(key, peerRoster.peers().get(0), peer.listenPort());
    }

    private void provision(StageChannels target, StageAttempt key) {
        target.provision(key);
        assertTrue(target.isKnown(key, "2"), "the stage's channel was created");
    }

    @Test
    void endWithoutReadersDestroysAtOnceOnTheEndingThread() {
        provision(stage(1));
        channels.end(stage(1), report);
        Report r = reports.poll();
        assertNotNull(r, "reported before end returned");
        assertEquals(new StageEnd(1, 1), r.ended());
        assertSame(Thread.currentThread(), r.thread());
        assertEquals(0, local.liveObjects().channels());
        assertFalse(channels.isKnown(stage(1), "2"));
    }

    @Test
    void theLastReaderToLetGoDestroysAndNoReaderJoinsAfterTheEnd() {
        provision(stage(1));
        assertTrue(channels.acquire(stage(1)));
        assertTrue(channels.acquire(stage(1)));
        channels.end(stage(1), report);
        assertFalse(channels.acquire(stage(1)), "an ended stage attempt takes no new reader");
        assertNull(reports.poll(), "not destroyed while readers hold the channels");
        assertEquals(1, local.liveObjects().channels());

        channels.release(stage(1));
        assertNull(reports.poll(), "one reader still holds the channels");
        channels.release(stage(1));
        Report r = reports.poll();
        assertNotNull(r, "the last release destroyed and reported");
        assertEquals(new StageEnd(1, 1), r.ended());
        assertSame(Thread.currentThread(), r.thread());
        assertEquals(0, local.liveObjects().channels());
    }

    @Test
    void aReaderOfAnAttemptLearnsOfItsEndWhileHoldingTheChannels() throws Exception {
        provision(stage(1));
        assertTrue(channels.acquire(stage(1)));
        assertFalse(channels.awaitEnd(stage(1), 50), "not ended yet");
        assertFalse(channels.awaitEnd(stage(2), 0), "an attempt never provisioned has not ended either");
        Thread ender = new Thread(() -> {
            sleep(200);
            channels.end(stage(1), report);
        });
        ender.start();
        long t0 = System.nanoTime();
        assertTrue(channels.awaitEnd(stage(1), 30_000), "the end wakes the waiting reader");
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "woken by the end, not by the timeout");
        ender.join();
        assertFalse(channels.awaitEnd(stage(2), 0), "another attempt's end is not this one's");
        channels.release(stage(1));
        assertNotNull(reports.poll(), "the reader's release destroyed the ended attempt's channels");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void readersThatOverstayTheEndWaitLoseTheChannelsOnce() throws Exception {
        StageChannels shortWait = new StageChannels(local, metrics, roster, destroyed::add, SHORT_END_WAIT_MS);
        PeerChannels peerEnd = null;
        try {
            // a READY channel, so the poller has nothing to poll and sleeps until the end's deadline
            provision(shortWait, stage(1));
            peerEnd = peer.connect(List.of(peerEnd(stage(1))));
            while (!peerEnd.poll()) {
                Thread.sleep(1);
            }
            assertNotNull(shortWait.await(stage(1), "2", 10_000), "the stage's channel became READY");

            assertTrue(shortWait.acquire(stage(1)));
            long start = System.nanoTime();
            shortWait.end(stage(1), report);
            Report r = reports.poll(10, TimeUnit.SECONDS);
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertNotNull(r, "destroyed after the end wait although a reader holds the channels");
            assertTrue(waitedMs >= SHORT_END_WAIT_MS, "destroyed after " + waitedMs + " ms, before the end wait");
            assertEquals("hcomm-channel-poller", r.thread().getName());
            assertEquals(new StageEnd(1, 1), r.ended());

            shortWait.release(stage(1));
            assertNull(reports.poll(), "the overstaying reader's release destroys nothing more");
            assertEquals(1, metrics.destroyCalls.getCount());
        } finally {
            if (peerEnd != null) {
                peerEnd.close();
            }
            shortWait.close();
        }
        assertEquals(0, local.liveObjects().channels());
    }

    @Test
    void aHeldStageDoesNotDelayAnotherStagesEnd() {
        provision(stage(1));
        provision(stage(2));
        assertTrue(channels.acquire(stage(1)));
        channels.end(stage(1), report);

        channels.end(stage(2), report);
        Report r = reports.poll();
        assertNotNull(r, "stage 2 ended at once while stage 1 waits for its reader");
        assertEquals(new StageEnd(1, 1), r.ended());
        assertEquals(1, local.liveObjects().channels(), "stage 1's channel is still there for its reader");

        channels.release(stage(1));
        assertNotNull(reports.poll(), "stage 1 destroyed on its reader's release");
        assertEquals(2, metrics.destroyCalls.getCount());
        assertEquals(2, metrics.channelsDestroyed.getCount());
    }

    @Test
    void theDestroyListenerHearsOfEachAttemptOnceItsChannelsAreGone() {
        provision(stage(1));
        provision(stage(2));
        assertTrue(channels.acquire(stage(1)));
        channels.end(stage(1), report);
        assertFalse(channels.channelsDestroyed(stage(1)), "ended, but its reader still holds the channels");
        assertEquals(List.of(), destroyed);

        channels.end(stage(2), report);
        assertTrue(channels.channelsDestroyed(stage(2)));
        assertEquals(List.of(stage(2)), destroyed, "told at once, only of stage 2");

        channels.release(stage(1));
        assertTrue(channels.channelsDestroyed(stage(1)));
        assertEquals(List.of(stage(2), stage(1)), destroyed, "told when the last reader let go");
        assertFalse(channels.channelsDestroyed(stage(3)), "an attempt that never had channels");
    }

    @Test
    void closeDestroysAStageStillWaitingForReaders() {
        provision(stage(1));
        assertTrue(channels.acquire(stage(1)));
        channels.end(stage(1), report);
        channels.close();
        assertEquals(0, local.liveObjects().channels());
        channels.release(stage(1));
        assertNull(reports.poll(), "nothing reported after close");
    }

    @Test
    void aPeerThatJoinsGetsChannelsInTheAttemptsGoingAndNotInEndedOnes() throws Exception {
        provision(stage(1));
        provision(stage(2));
        channels.end(stage(2), report);
        assertNotNull(reports.poll(), "stage 2 ended and destroyed");
        try (HcommTransport third = HcommTransport.open(new TransportOptions(InetAddress.getByName("127.0.0.1"),
                false, null, Duration.ofSeconds(10), Duration.ofSeconds(10)))) {
            List<Messages.Peer> joined = roster.apply(new Messages.Peers("t" + ProcessHandle.current().pid(),
                    List.of(new Messages.Peer("3", third.endpointDescriptor(), third.listenPort())), List.of()));
            assertEquals(1, joined.size());
            assertTrue(roster.apply(new Messages.Peers("t", joined, List.of())).isEmpty(), "told twice: joins once");
            channels.peersJoined(joined);
            assertTrue(channels.isKnown(stage(1), "3"), "the attempt going got a channel to the newcomer");
            assertFalse(channels.isKnown(stage(2), "3"), "the ended attempt did not");
            assertEquals(3, metrics.channelsCreated.getCount(), "two to peer 2, one to peer 3");
            channels.end(stage(1), report);
            assertNotNull(reports.poll());
        }
        assertEquals(0, local.liveObjects().channels());
    }
}
