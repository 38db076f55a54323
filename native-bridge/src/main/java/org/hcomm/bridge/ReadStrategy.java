package org.hcomm.bridge;

/**
 * How one-sided reads are issued and completed; the plugin uses one interface whatever the product:
 * <ul>
 *   <li>{@link Kind#ON_THREAD} (A2/A3, and the default): {@code HcommBatchModeStart}; {@code HcommReadOnThread} per
 *       read; {@code HcommBatchModeEnd}; then {@code HcommChannelDrainOnThread} per channel touched
 *       ({@link Completion#DRAIN}) or {@code aclrtSynchronizeStream} on the thread's stream
 *       ({@link Completion#STREAM_SYNC}).</li>
 *   <li>{@link Kind#NBI_FENCE} (Atlas 350 / 950 host RoCE): {@code HcommReadNbi} per read, then
 *       {@code HcommChannelFence} per channel touched.</li>
 * </ul>
 * Use: {@link #submit} any number of reads, optionally {@link #flush()} to hand them to HComm without waiting, then
 * {@link #complete()}; when {@code complete()} returns normally every submitted byte has landed in its destination. Addresses are raw: {@code dst} inside a {@link RegisteredMemory} of
 * the channel's endpoint registered before the channel was created, {@code src} inside an {@link ImportedMemory}
 * from the peer; the library checks both ranges ({@link HcommStatus#HCCL_E_NOT_FOUND} when outside).
 *
 * <p>When {@code submit} or {@code complete} throws, the strategy has already ended the batch and waited for what
 * was submitted, so it can be reused for a new batch.
 *
 * <p>Threading: an instance is confined to one OS thread at a time (HComm's batch mode is per OS thread); it is
 * reusable for any number of batches. It does not own the thread or the channels.
 */
public interface ReadStrategy {

    /** Which HComm calls issue and complete the reads. */
    enum Kind {
        ON_THREAD,
        NBI_FENCE
    }

    /** How an {@link Kind#ON_THREAD} batch is completed. */
    enum Completion {
        /** {@code HcommChannelDrainOnThread} per channel touched. */
        DRAIN,
        /** {@code aclrtSynchronizeStream} on the thread's stream. */
        STREAM_SYNC
    }

    Kind kind();

    /**
     * Issues a read of {@code length} bytes from the peer's {@code srcAddress} into local {@code dstAddress}.
     * Asynchronous: the bytes are only guaranteed to be there after {@link #complete()}. A length of 0 is a no-op.
     *
     * @throws IllegalStateException if the channel's set (or the thread) is closed
     * @throws HcommException if HComm rejects the read (the batch was ended and waited for)
     */
    void submit(ChannelSet.Channel channel, long dstAddress, long srcAddress, long length);

    /**
     * Hands every read submitted so far to HComm and returns without waiting: ends the batch for
     * {@link Kind#ON_THREAD} ({@code HcommBatchModeEnd}); a no-op for {@link Kind#NBI_FENCE}, whose reads are posted
     * by {@link #submit}. Reads submitted afterwards start a new batch; {@link #complete()} waits for all of them.
     */
    void flush();

    /**
     * Flushes, then waits until every read submitted since the last completion has landed. No-op when nothing was
     * submitted.
     */
    void complete();

    /** {@link Kind#ON_THREAD} on {@code thread}. */
    static ReadStrategy onThread(CommThread thread, Completion completion) {
        return new OnThreadReads(thread, completion);
    }

    /** {@link Kind#NBI_FENCE}. */
    static ReadStrategy nbiFence() {
        HcommNative.ensureStrategy(Kind.NBI_FENCE);
        return new NbiFenceReads();
    }
}
