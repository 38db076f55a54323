package org.hcomm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.read.ReadStrategy;

/**
 * One-sided reads from another JVM through the real soft library, over the shared-memory and the TCP path, with
 * every read strategy: random data of 0 B, 1 B, 4095 B, 1 MiB, 64 MiB and 1000 small reads in one batch, each
 * checked byte for byte. Also the bulk destroy of many channels. Every test ends with no live HComm object in
 * either process.
 */
class CrossProcessReadTest {
    static final int MIB = 1 << 20;
    static final int REGION = 64 * MIB + 64 * 1024;
    static final byte UNTOUCHED = 0x5A;

    /** The strategies under test, each with the HComm thread it needs. */
    enum Mode {
        ON_THREAD_DRAIN,
        ON_THREAD_STREAM_SYNC,
        NBI_FENCE;

        ReadStrategy create(CommThread thread) {
            switch (this) {
                case ON_THREAD_DRAIN:
                    return ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN);
                case ON_THREAD_STREAM_SYNC:
                    return ReadStrategy.onThread(thread, ReadStrategy.Completion.STREAM_SYNC);
                default:
                    return ReadStrategy.nbiFence();
            }
        }
    }

    @BeforeAll
    static void libraryLoads() {
        assertTrue(HcommNative.isAvailable(), () -> "soft HComm unavailable: " + HcommNative.unavailabilityCause());
    }

    @AfterEach
    void nothingLeaks() {
        SoftCounters c = SoftHcomm.counters();
        assertTrue(c.noLiveObjects(), "live HComm objects after the test: " + c);
    }

    static Stream<Arguments> pathsAndModes() {
        List<Arguments> out = new ArrayList<>();
        for (ConnectedPair.Path p : ConnectedPair.Path.values()) {
            for (Mode m : Mode.values()) {
                out.add(Arguments.of(p, m));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("pathsAndModes")
    @Timeout(300)
    void readsRandomDataFromAnotherProcess(ConnectedPair.Path path, Mode mode) throws Exception {
        try (ConnectedPair pair = ConnectedPair.open(path, REGION, REGION, 1);
                CommThread thread = CommThread.allocate(Engine.CPU, 1)) {
            assertEquals(path.wire, pair.channel().dataPath());
            ReadStrategy reads = mode.create(thread);
            ByteBuffer dst = pair.dst.buffer();
            TestPattern.paint(dst, 0, REGION, UNTOUCHED);
            long d = pair.dst.address();
            long s = pair.src.remoteAddress();
            ChannelSet.Channel ch = pair.channel();

            // one batch of odd sizes and alignments
            reads.submit(ch, d + 200, s + 100, 0);
            reads.submit(ch, d + 3, s + 7, 1);
            reads.submit(ch, d + 4097, s + 1, 4095);
            reads.submit(ch, d + 2 * MIB, s + 12345, MIB);
            reads.complete();
            TestPattern.verifyPainted(dst, 200, 1, UNTOUCHED, "0-byte read");
            TestPattern.verify(dst, 3, pair.seed, 7, 1, "1-byte read");
            TestPattern.verifyPainted(dst, 4, 1, UNTOUCHED, "byte after the 1-byte read");
            TestPattern.verify(dst, 4097, pair.seed, 1, 4095, "4095-byte read");
            TestPattern.verify(dst, 2 * MIB, pair.seed, 12345, MIB, "1 MiB read");
            TestPattern.verifyPainted(dst, 3 * MIB, 1, UNTOUCHED, "byte after the 1 MiB read");

            // 64 MiB in one read
            reads.submit(ch, d, s + 4096, 64L * MIB);
            reads.complete();
            TestPattern.verify(dst, 0, pair.seed, 4096, 64 * MIB, "64 MiB read");

            // 1000 small reads; flushed half-way, so the second half is a new batch in flight with the first
            TestPattern.paint(dst, 0, 1000 * 4096, UNTOUCHED);
            Random r = new Random(pair.seed);
            int[] len = new int[1000];
            long[] from = new long[1000];
            for (int i = 0; i < 1000; i++) {
                len[i] = 1 + r.nextInt(4096);
                from[i] = r.nextInt(REGION - len[i]);
                reads.submit(ch, d + i * 4096L, s + from[i], len[i]);
                if (i == 499) {
                    reads.flush();
                }
            }
            reads.complete();
            for (int i = 0; i < 1000; i++) {
                TestPattern.verify(dst, i * 4096, pair.seed, from[i], len[i], "small read " + i);
            }
            reads.complete(); // nothing pending: no-op
        }
    }

    @Test
    @Timeout(120)
    void manyChannelsCreatedAndDestroyedInOneCallEach() throws Exception {
        int n = 8;
        try (ConnectedPair pair = ConnectedPair.open(ConnectedPair.Path.SHM, MIB, MIB, n)) {
            assertEquals(n, pair.channels.size());
            assertEquals(n, SoftHcomm.counters().channels());
            ReadStrategy reads = ReadStrategy.nbiFence();
            for (int i = 0; i < n; i++) {
                reads.submit(pair.channels.channel(i), pair.dst.address() + i * 1024L,
                        pair.src.remoteAddress() + i * 1000L, 1024);
            }
            reads.complete();
            for (int i = 0; i < n; i++) {
                TestPattern.verify(pair.dst.buffer(), i * 1024, pair.seed, i * 1000L, 1024, "channel " + i);
            }
            pair.channels.close(); // one HcommChannelDestroy for all eight
            assertEquals(0, SoftHcomm.counters().channels());
            pair.channels.close(); // idempotent
        }
    }
}
