package org.apache.spark.shuffle.hcomm.internal.conf;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The one place that decides what happens when HComm cannot do its part (no loadable library, a peer without a READY
 * channel, an output not published, no receive buffer): with {@code spark.shuffle.hcomm.fallback=auto} Spark's own
 * shuffle fetch takes over and a warning that names the key says so, once per reason; with {@code never} the work
 * fails with the caller's error, whose message names the key. One per process, held by its {@link HcommSettings}
 * (so the shuffle manager and the executor runtime warn once between them). Thread-safe.
 */
public final class Fallback {
    /** The values of {@code spark.shuffle.hcomm.fallback}. */
    public enum Mode {
        AUTO,
        NEVER
    }

    private final Mode mode;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    Fallback(Mode mode) {
        this.mode = mode;
    }

    public Mode mode() {
        return mode;
    }

    /**
     * Spark's fetch, whatever the fallback: for what is outside what one-sided reads serve by design (an executor
     * that is not a member of the communicator), not a failure; runs {@code note} once per {@code once} key.
     */
    public void outsideOneSided(String once, Runnable note) {
        if (warned.add(once)) {
            note.run();
        }
    }

    /**
     * Falls back or fails: with fallback {@code never} throws what {@code failure} makes; otherwise runs {@code warn}
     * (which logs why, naming the key) once per {@code once} key in this process, or every time when {@code once} is
     * null, and returns: the caller then lets Spark's shuffle do the work.
     */
    public void fallBackOrFail(Supplier<? extends RuntimeException> failure, String once, Runnable warn) {
        if (mode == Mode.NEVER) {
            throw failure.get();
        }
        if (once == null || warned.add(once)) {
            warn.run();
        }
    }
}
