package org.hcomm.bridge.transport;

/**
 * A batch of one-sided reads: {@link #read} any number of times, {@link #flush()} to hand them to HComm without
 * waiting, {@link #await()} to wait until every flushed read has landed. Confined to one thread at a time; reusable.
 * Several batches can be in flight at once (one flushed and awaited while the others land), which is how a reader
 * overlaps reads with deserialisation. HComm's batch mode belongs to the calling OS thread, so on one thread fill
 * and flush one batch before filling the next (interleaved {@code read}s on two batches fail with code 1).
 */
public interface ReadBatch extends AutoCloseable {

    /**
     * Queues a read of {@code length} bytes from the peer's {@code src} into local registered {@code dst}:
     * {@code src} the owner's registered address as it published it, {@code dst} a local
     * region's {@link Region#address()}.
     * A refused read ends the batch (its earlier reads are waited for) and throws.
     */
    void read(PeerChannels.PeerChannel channel, long dst, long src, long length) throws TransportException;

    /** Submits what was queued; returns at once. */
    void flush() throws TransportException;

    /** Flushes, then waits until every read of the batch has landed, or fails with the library's error. */
    void await() throws TransportException;

    @Override
    void close();
}
