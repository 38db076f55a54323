package org.hcomm.bridge;

import java.lang.ref.Cleaner;

/**
 * Backstop for a forgotten {@code close()}: when an owner becomes unreachable while still open, logs a warning
 * naming it. It frees nothing (a view such as a {@code ByteBuffer} may still point into the memory); the native
 * resource stays allocated until the process exits, and the soft library's counters show it.
 */
final class LeakWatch implements Runnable {
    private static final BridgeLog LOG = BridgeLog.of(LeakWatch.class);
    private static final Cleaner CLEANER = Cleaner.create();

    private final String what;
    private volatile boolean closed;
    private Cleaner.Cleanable cleanable;

    private LeakWatch(String what) {
        this.what = what;
    }

    /** Starts watching {@code owner}; {@code what} must not reference it. */
    static LeakWatch watch(Object owner, String what) {
        LeakWatch w = new LeakWatch(what);
        w.cleanable = CLEANER.register(owner, w);
        return w;
    }

    /** The owner was closed: stop watching. */
    void closed() {
        closed = true;
        cleanable.clean();
    }

    @Override
    public void run() {
        if (!closed) {
            LOG.warn("{} was garbage-collected without close(); its native resources stay allocated", what);
        }
    }
}
