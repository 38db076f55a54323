package org.hcomm.bridge.transport;

/**
 * Channels created in one batch. Confined: {@link #poll()} and {@link #close()} must not run concurrently with each
 * other (HComm serialises status, data and destroy per channel); reads on READY channels may run from any thread.
 */
public interface PeerChannels extends AutoCloseable {

    /** Where a channel stands. */
    enum State {
        CONNECTING,
        READY,
        FAILED
    }

    int size();

    PeerChannel channel(int index);

    /** One status step for the channels still connecting; true when none is connecting any more. */
    boolean poll();

    /** Destroys every channel of the batch in one call. Idempotent. */
    @Override
    void close();

    /** One channel to one peer. */
    interface PeerChannel {
        String peerId();

        String name();

        State state();

        /** Why it failed (status name), or null. */
        String failure();

        /** "shm" or "tcp" on soft HComm, "hcomm" otherwise; null until READY. */
        String path();
    }
}
