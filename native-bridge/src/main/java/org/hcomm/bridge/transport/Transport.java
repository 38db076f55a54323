package org.hcomm.bridge.transport;

import java.util.List;

/**
 * One process's access to one-sided reads: an endpoint, its registered memory, channels to peers and batches of
 * reads.
 *
 * <p>Threading: every method is thread-safe except where a returned object says otherwise ({@link ReadBatch} is
 * confined to one thread at a time).
 *
 * <p>Ordering: memory must be registered before the channels that expose it are created; a channel exchanges the
 * regions registered at that moment and no later ones (HComm's rule).
 */
public interface Transport extends AutoCloseable {

    /** The local endpoint as a peer passes it to {@link PeerSpec}: opaque bytes. */
    byte[] endpointDescriptor();

    /** The port this endpoint accepts channel handshakes on. */
    int listenPort();

    /** Allocates and registers {@code bytes} of memory that peers can read once a channel exists. */
    Region allocate(String tag, long bytes);

    /** Registers existing memory (for example a mapped file) at {@code address}; the caller keeps it mapped. */
    Region register(String tag, long address, long bytes);

    /**
     * Maps the first {@code bytes} of {@code file} read-only and registers the mapping; closing the region
     * unregisters and unmaps it.
     */
    Region mapFile(String tag, java.nio.file.Path file, long bytes) throws TransportException;

    /**
     * Creates the local ends of channels to {@code peers} in one batch. The channels are not ready yet: drive them
     * with {@link PeerChannels#poll()}.
     *
     * @throws TransportException when HComm refuses the batch (nothing is created then)
     */
    PeerChannels connect(List<PeerSpec> peers) throws TransportException;

    /**
     * Destroys every channel of {@code batches} in one HComm call (the per-stage bulk destroy). Closing a batch on
     * its own does the same for one batch.
     */
    void destroyTogether(List<PeerChannels> batches);

    /** A new batch context for reads; owns an HComm thread when the read strategy needs one. */
    ReadBatch newReadBatch();

    /**
     * How many read batches one reader may keep in flight so that each completes on its own. By default two: where
     * completion is per channel (a fence), waiting for one waits for all.
     */
    default int independentBatches() {
        return 2;
    }

    /** What is live in the native library, when it can tell ({@code null} otherwise). */
    LiveObjects liveObjects();

    /** Provider, library and read strategy, for logs. */
    String describe();

    /** Closes everything this transport still owns (batches, channels, regions), then its endpoint. Idempotent. */
    @Override
    void close();
}
