package org.apache.spark.shuffle.hcomm.internal.conf;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.apache.spark.SparkConf;

/**
 * The one place that decides what happens when HComm cannot do its part (no loadable library, a peer without a READY
 * channel, an output not published, no receive buffer): with {@code spark.shuffle.hcomm.fallback=auto} Spark's own
 * shuffle fetch takes over and a warning that names the key says so, once per reason; with {@code never} the work
 * fails with the caller's error, whose message names the key. Thread-safe.
 */
public final class Fallback {
    private final boolean never;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    private Fallback(boolean never) {
        this.never = never;
    }

    public static Fallback of(SparkConf conf) {
        return new Fallback("never".equals(HcommConf.FALLBACK.get(conf)));
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
     * (which logs why, naming the key) once per {@code once} key in this JVM's component, or every time when
     * {@code once} is null, and returns: the caller then lets Spark's shuffle do the work.
     */
    public void fallBackOrFail(Supplier<? extends RuntimeException> failure, String once, Runnable warn) {
        if (never) {
            throw failure.get();
        }
        if (once == null || warned.add(once)) {
            warn.run();
        }
    }
}
