package org.hcomm.bridge.transport;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The windows of one half of an HCCL buffer ({@link WindowLayout#windows()} of them), leased first come first served
 * for the life of one window exchange. A window whose exchange failed is quarantined: it is leased again only after a
 * delay, as a late transfer into its slots or a stale notify may still arrive. Thread-safe.
 */
final class SlotPool {
    private final Deque<Integer> free = new ArrayDeque<>();
    /** {window, nanoTime when it is free again}. */
    private final List<long[]> quarantined = new ArrayList<>();
    private final int size;

    SlotPool(int windows) {
        this.size = windows;
        for (int w = 0; w < windows; w++) {
            free.add(w);
        }
    }

    /** A free window, waiting up to {@code timeoutMillis}; -1 when none became free in time. */
    synchronized int lease(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            thaw();
            Integer w = free.poll();
            if (w != null) {
                return w;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return -1;
            }
            // quarantined windows thaw without a notify: wake at least every 100 ms to look
            TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
        }
    }

    synchronized void release(int window) {
        free.add(window);
        notifyAll();
    }

    /** Leased again only {@code delayMillis} from now. */
    synchronized void quarantine(int window, long delayMillis) {
        quarantined.add(new long[] {window, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis)});
    }

    /** Windows free now (quarantined ones whose delay passed included). */
    synchronized int available() {
        thaw();
        return free.size();
    }

    int size() {
        return size;
    }

    private void thaw() {
        long now = System.nanoTime();
        quarantined.removeIf(q -> {
            if (now - q[1] >= 0) {
                free.add((int) q[0]);
                return true;
            }
            return false;
        });
    }
}
