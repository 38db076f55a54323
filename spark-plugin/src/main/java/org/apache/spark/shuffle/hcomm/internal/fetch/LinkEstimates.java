package org.apache.spark.shuffle.hcomm.internal.fetch;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this executor has measured of the link to each owner's host, from its reduce tasks' waves of one-sided
 * reads: the round trip (the shortest wave, issue to landing) and the rate (the fastest wave, bytes over time),
 * over the last {@link #WINDOW} waves the reader waited for. Their product, the bandwidth-delay product, is how many
 * bytes the first wave of a task must ask for to keep the link busy until the second is on its way. Passive: no
 * probe read, no configuration; a host not measured yet gets one chunk (the first wave then measures it).
 * Thread-safe.
 */
final class LinkEstimates {
    /** Waves remembered per host: old enough samples leave, so a link that changes is followed. */
    static final int WINDOW = 32;

    /** The last {@link #WINDOW} waves from one host: their sizes and times. */
    private static final class Samples {
        final long[] bytes = new long[WINDOW];
        final long[] nanos = new long[WINDOW];
        int count;
        int next;

        synchronized void add(long b, long ns) {
            bytes[next] = b;
            nanos[next] = ns;
            next = (next + 1) % WINDOW;
            count = Math.min(WINDOW, count + 1);
        }

        /** Shortest time × highest rate over the window, in bytes. */
        synchronized long bdp() {
            long minNanos = Long.MAX_VALUE;
            double bestRate = 0; // bytes per ns
            for (int i = 0; i < count; i++) {
                minNanos = Math.min(minNanos, nanos[i]);
                bestRate = Math.max(bestRate, (double) bytes[i] / nanos[i]);
            }
            return count == 0 ? 0 : (long) (bestRate * minNanos);
        }
    }

    private final Map<String, Samples> byHost = new ConcurrentHashMap<>();

    /**
     * A reader waited more than this for its wave: it was waiting when the wave landed, so issue-to-wait-end is the
     * wave's time (a shorter wait: the wave had landed already, and its time is unknown).
     */
    static final long LANDED_WHILE_WAITING_NANOS = 20_000;

    /**
     * A wave of {@code bytes} from {@code host} was issued {@code nanos} before its reader, waiting {@code waited} ns
     * for it, saw it land; counted only when the reader waited for it.
     */
    void landed(String host, long bytes, long nanos, long waited) {
        if (bytes > 0 && nanos > 0 && waited > LANDED_WHILE_WAITING_NANOS) {
            byHost.computeIfAbsent(host, h -> new Samples()).add(bytes, nanos);
        }
    }

    /** The bandwidth-delay product measured to {@code host} in bytes, 0 when not measured yet. */
    long bdp(String host) {
        Samples s = byHost.get(host);
        return s == null ? 0 : s.bdp();
    }

    /** Chunks of {@code chunkSize} a first wave needs to fill the link to the slowest-answering of {@code hosts}. */
    int firstWaveChunks(Iterable<String> hosts, int chunkSize) {
        long bytes = 0;
        for (String h : hosts) {
            bytes = Math.max(bytes, bdp(h));
        }
        return (int) Math.max(1, Math.min(1 << 20, (bytes + chunkSize - 1) / chunkSize));
    }
}
