package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The bandwidth-delay product of each owner's link, from the waves the readers waited for. */
class LinkEstimatesTest {
    private static final int MIB = 1 << 20;
    private static final long WAITED = 1_000_000; // the reader waited for each wave

    @Test
    void aHostNotMeasuredGetsOneChunk() {
        LinkEstimates links = new LinkEstimates();
        assertEquals(0, links.bdp("h1"));
        assertEquals(1, links.firstWaveChunks(List.of("h1"), MIB));
    }

    @Test
    void theProductIsTheShortestTimeTimesTheHighestRate() {
        LinkEstimates links = new LinkEstimates();
        // a 2 ms round trip (a 64 KiB wave) and 1.25 GB/s (10 Gbit/s: 8 MiB in 6.7 ms + the round trip)
        links.landed("h1", 64 << 10, 2_000_000, WAITED);
        links.landed("h1", 8L * MIB, 8_711_000, WAITED);
        long bdp = links.bdp("h1");
        // 8 MiB / 8.711 ms = 0.963 bytes/ns, times 2 ms: about 1.9 MB
        assertEquals(1_926_000, bdp, 5_000);
        assertEquals(2, links.firstWaveChunks(List.of("h1"), MIB));
        assertEquals(1, links.firstWaveChunks(List.of("h2"), MIB), "another host is not measured");
        assertEquals(2, links.firstWaveChunks(List.of("h2", "h1"), MIB), "the slowest link of the task's owners");
    }

    @Test
    void oldSamplesLeaveTheWindow() {
        LinkEstimates links = new LinkEstimates();
        links.landed("h1", MIB, 100_000_000, WAITED); // a slow wave long ago
        for (int i = 0; i < LinkEstimates.WINDOW; i++) {
            links.landed("h1", MIB, 1_000_000, WAITED);
        }
        assertEquals(MIB, links.bdp("h1"), 1, "only the last waves: 1 MiB in 1 ms, so the round trip is at most 1 ms");
    }

    @Test
    void emptyOrUntimedWavesAreIgnored() {
        LinkEstimates links = new LinkEstimates();
        links.landed("h1", MIB, 1_000_000, 1_000); // landed before the reader looked: its time is unknown
        links.landed("h1", 0, 1_000, WAITED);
        links.landed("h1", MIB, 0, WAITED);
        assertEquals(0, links.bdp("h1"));
    }
}
