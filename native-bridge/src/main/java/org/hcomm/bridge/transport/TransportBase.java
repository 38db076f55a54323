package org.hcomm.bridge.transport;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.error.Failures;
import org.hcomm.bridge.error.HcommException;

/**
 * What every {@link Transport} owns alike: the {@link ReadBatch}es, {@link PeerChannels} and {@link Region}s it made
 * and that are still open, and the order they are closed in. {@link #close()} closes, in this order, the batches
 * (each ends its batch mode and waits for its reads, then gives back its thread or stream), the channels, the
 * regions, and last what the transport stands on ({@link #closeCore()}: the endpoint, or the communicator): reads
 * use channels, HComm tears a channel down only when no read is in flight on it, a channel keeps the regions
 * registered when it was made, and an endpoint is destroyed only without channels (a communicator releases its
 * channels, threads and HCCL buffer with itself).
 *
 * <p>Threading: every method is thread-safe; a resource made while {@link #close()} runs is closed at once and its
 * maker fails with {@link IllegalStateException}.
 */
abstract class TransportBase implements Transport {
    private static final List<Class<?>> CLOSE_ORDER = List.of(WindowEnd.class, ReadBatch.class, PeerChannels.class,
            Region.class);

    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** {@code TransportException} (code -1, the loader's cause) unless the HComm library is available. */
    static void requireLibrary() throws TransportException {
        if (!HcommNative.isAvailable()) {
            throw new TransportException("load", -1, "HComm library unavailable: " + HcommNative.unavailabilityCause(),
                    HcommNative.unavailabilityCause());
        }
    }

    static TransportException wrap(HcommException e) {
        return new TransportException(e.call(), e.code(), e.getMessage(), e);
    }

    final void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("transport is closed");
        }
    }

    /** Owns {@code resource} until it is {@link #forget forgotten}; closes it and throws when the transport closed. */
    final <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        if (closed.get()) {
            open.remove(resource);
            try {
                resource.close();
            } catch (Exception ignored) {
                // the caller's failure is the one that matters
            }
            throw new IllegalStateException("transport is closed");
        }
        return resource;
    }

    final boolean isClosed() {
        return closed.get();
    }

    /** A tracked resource closed on its own: the transport no longer owns it. */
    final void forget(AutoCloseable resource) {
        open.remove(resource);
    }

    /** The open resource of {@code kind} that {@code test} accepts, or null. */
    final <T> T findTracked(Class<T> kind, Predicate<? super T> test) {
        for (AutoCloseable r : open) {
            if (kind.isInstance(r) && test.test(kind.cast(r))) {
                return kind.cast(r);
            }
        }
        return null;
    }

    /** The read strategy, for {@link #describe()}. */
    abstract String reads();

    /** Closes what the transport stands on, after everything it made; throws the first failure. */
    abstract void closeCore();

    @Override
    public final LiveObjects liveObjects() {
        return LiveObjects.current();
    }

    @Override
    public final String describe() {
        return "provider=" + HcommNative.provider() + " library=" + HcommNative.librarySource() + " version="
                + HcommNative.libraryVersion() + " reads=" + reads();
    }

    /**
     * Closes the open batches, channels and regions in that order, then {@link #closeCore()}; every step runs, and
     * the first failure is thrown at the end with the later ones suppressed. Idempotent.
     */
    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        for (Class<?> kind : CLOSE_ORDER) {
            for (AutoCloseable r : List.copyOf(open)) {
                if (kind.isInstance(r)) {
                    try {
                        r.close();
                    } catch (Exception e) {
                        failure = Failures.accumulate(failure, e);
                    }
                }
            }
        }
        try {
            closeCore();
        } catch (RuntimeException e) {
            failure = Failures.accumulate(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }
}
