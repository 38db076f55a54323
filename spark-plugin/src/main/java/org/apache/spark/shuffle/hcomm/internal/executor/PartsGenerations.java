package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;

/**
 * Which one-sided parts an executor reads with: the current ones (built at start on the endpoint path, or for the
 * communicator the driver said is ready), those built for a communicator not yet ready (pending: every member must
 * have built its own first), and those of earlier communicators until their retirement closed them; and the
 * endpoint path's publisher, for Spark's block reads (a communicator's parts publish nothing: their HCCL buffer is a
 * window). Also why the executor has no communicator, when one failed.
 * Thread-safe: {@link #current} is read by every task without a lock; every change is under this object's monitor,
 * which nothing holds while it blocks.
 */
final class PartsGenerations {
    private volatile OneSidedParts current;
    private OneSidedParts pending; // guarded by this
    /** Closes of retiring parts not yet run ({@link #retiring}). */
    private final List<Runnable> retiring = new CopyOnWriteArrayList<>();
    /** The endpoint path's publisher, or none. */
    private final List<MapOutputPublisher> publishers;
    /** Why the executor's communicator failed while it has none, or null. */
    private volatile String failure;
    private boolean closed; // guarded by this

    PartsGenerations(OneSidedParts atStart) {
        current = atStart;
        publishers = atStart != null && atStart.publisher != null ? List.of(atStart.publisher) : List.of();
    }

    /** The parts reduce tasks plan with, or null before any. */
    OneSidedParts current() {
        return current;
    }

    /** The newest parts built: pending ones when there are, else the current ones (or null). */
    synchronized OneSidedParts newest() {
        return pending != null ? pending : current;
    }

    /** Every publisher whose arena may hold outputs (the endpoint path's, or none). */
    List<MapOutputPublisher> publishers() {
        return publishers;
    }

    String failure() {
        return failure;
    }

    /** The executor could not take part in a communicator: why, while it has no parts. */
    void failed(String why) {
        failure = why;
    }

    /**
     * Keeps {@code fresh} as pending until {@link #promote}; returns the pending parts it replaces (a forming the
     * driver never concluded), for the caller to retire, or {@code fresh} itself when closed (for the caller to close).
     */
    synchronized OneSidedParts offer(OneSidedParts fresh) {
        if (closed) {
            return fresh;
        }
        OneSidedParts dropped = pending;
        pending = fresh;
        return dropped;
    }

    /**
     * The pending parts of communicator {@code epoch} become the current ones; returns the parts they replace (for the
     * caller to retire; null at the first communicator). Throws when no parts of that epoch are pending.
     */
    synchronized OneSidedParts promote(long epoch) {
        if (pending == null || pending.epoch != epoch) {
            throw new IllegalStateException("no parts built for communicator " + epoch);
        }
        OneSidedParts old = current;
        current = pending;
        pending = null;
        failure = null;
        return old;
    }

    /**
     * Communicator {@code epoch} did not form: returns its pending parts (for the caller to retire), or null; while
     * there are no current parts, {@code why} is the executor's failure.
     */
    synchronized OneSidedParts drop(long epoch, String why) {
        OneSidedParts dropped = null;
        if (pending != null && pending.epoch == epoch) {
            dropped = pending;
            pending = null;
        }
        if (current == null) {
            failure = why;
        }
        return dropped;
    }

    /**
     * Registers the close of an earlier communicator's retiring parts and returns it: it runs once, when the caller
     * runs it after the parts' last use or at the executor's close ({@link #retiringCloses}), whichever is first.
     */
    Runnable retiring(Runnable close) {
        AtomicBoolean done = new AtomicBoolean();
        Runnable[] once = new Runnable[1];
        once[0] = () -> {
            if (done.compareAndSet(false, true)) {
                retiring.remove(once[0]);
                close.run();
            }
        };
        retiring.add(once[0]);
        return once[0];
    }

    /** The closes of parts still retiring: the executor's close runs them instead of their wait. */
    List<Runnable> retiringCloses() {
        return List.copyOf(retiring);
    }

    /** Stops taking parts; returns the pending ones (null when none), for the caller to close. */
    synchronized OneSidedParts close() {
        closed = true;
        OneSidedParts built = pending;
        pending = null;
        return built;
    }
}
