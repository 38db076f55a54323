package org.hcomm.bridge;

import org.hcomm.bridge.error.HcommException;

/**
 * The close-once discipline of every facade object that owns a native handle: {@link #close()} gives the resource
 * back exactly once ({@link #release()}; later calls do nothing), marks the owner closed before the native call so a
 * concurrent second close cannot release twice, and stops the {@link LeakWatch} whatever the native call returned.
 * Methods of a closed owner throw {@link IllegalStateException} through {@link #checkOpen()}.
 *
 * <p>Threading: {@code close()} and {@link #isClosed()} are thread-safe; the rest is each subclass's to say.
 */
public abstract class NativeOwner implements AutoCloseable {
    private final String name;
    private final LeakWatch leakWatch;
    private volatile boolean closed;

    /** {@code name} says what this is in messages and leak warnings; it must not reference the owner. */
    protected NativeOwner(String name) {
        this.name = name;
        this.leakWatch = LeakWatch.watch(this, name);
    }

    public boolean isClosed() {
        return closed;
    }

    /** Releases the native resource; idempotent. A failed release still counts as closed (the handle is gone). */
    @Override
    public final void close() {
        if (!claimClose()) {
            return;
        }
        try {
            release();
        } finally {
            released();
        }
    }

    /** The native call(s) that give the resource back; runs at most once, throws {@link HcommException}. */
    protected abstract void release();

    /** Bookkeeping after the release, successful or not; overrides call this too. */
    protected void released() {
        leakWatch.closed();
    }

    /**
     * Marks the owner closed and returns true, or returns false when it already was: for a native call that
     * releases several owners at once ({@code ChannelSet.closeTogether}), which then calls {@link #released()}.
     */
    protected final boolean claimClose() {
        synchronized (this) {
            if (closed) {
                return false;
            }
            closed = true;
            return true;
        }
    }

    public final void checkOpen() {
        if (closed) {
            throw new IllegalStateException(name + " is closed");
        }
    }
}
