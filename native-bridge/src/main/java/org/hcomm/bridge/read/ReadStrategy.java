package org.hcomm.bridge.read;

import java.util.Objects;
import org.hcomm.bridge.CommThread;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ImportedMemory;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.error.Failures;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;
import org.hcomm.bridge.raw.HcommAbi;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;
import org.hcomm.bridge.raw.HcommNbiLibrary;
import org.hcomm.bridge.raw.HcommOnThreadLibrary;

/**
 * One-sided reads on the channels of an endpoint, issued and completed in one of two ways ({@link Kind}):
 * <ul>
 *   <li>{@link Kind#ON_THREAD} (A2/A3, and the default): {@code HcommReadOnThread} per read inside batch mode
 *       ({@link BatchMode}), then {@code HcommChannelDrainOnThread} per channel read ({@link Completion#DRAIN}) or
 *       {@code aclrtSynchronizeStream} on the thread's stream ({@link Completion#STREAM_SYNC}).</li>
 *   <li>{@link Kind#NBI_FENCE} (Atlas 350 / 950 host RoCE): {@code HcommReadNbi} per read, then
 *       {@code HcommChannelFence} per channel read.</li>
 * </ul>
 * Use: {@link #submit} any number of reads, optionally {@link #flush()}, then {@link #complete()}; when it returns
 * normally every submitted byte has landed. {@code dst} lies in a {@link RegisteredMemory} of the channel's endpoint
 * registered before the channel was created, {@code src} in an {@link ImportedMemory} from the peer; HComm checks
 * both ({@link HcommStatus#HCCL_E_NOT_FOUND} when outside). A failed read of one channel is a
 * {@link ChannelReadException} naming it; a timeout of a drain, which waits for the whole thread, names none.
 * When {@code submit}, {@code flush} or {@code complete} throws, the batch is already ended and waited for, so the
 * strategy is reusable.
 *
 * <p>Threading: confined to one OS thread at a time (batch mode belongs to the OS thread); reusable for any number
 * of batches. It owns neither the HComm thread nor the channels.
 */
public final class ReadStrategy {

    /** Which HComm calls issue and complete the reads. */
    public enum Kind {
        ON_THREAD,
        NBI_FENCE
    }

    /** How an {@link Kind#ON_THREAD} batch is completed. */
    public enum Completion {
        /** {@code HcommChannelDrainOnThread} per channel read. */
        DRAIN,
        /** {@code aclrtSynchronizeStream} on the thread's stream. */
        STREAM_SYNC
    }

    private final Kind kind;
    /** {@link Kind#ON_THREAD} only (else null): the HComm thread, its completion and its batch mode. */
    private final CommThread thread;
    private final Completion completion;
    private final BatchMode batch;
    /** Channels read since the last completion (flushed or not). */
    private final TouchedChannels touched = new TouchedChannels();

    private ReadStrategy(Kind kind, CommThread thread, Completion completion) {
        this.kind = kind;
        this.thread = thread;
        this.completion = completion;
        this.batch = thread == null ? null : new BatchMode(null, thread::context);
    }

    /** {@link Kind#ON_THREAD} on {@code thread}. */
    public static ReadStrategy onThread(CommThread thread, Completion completion) {
        Objects.requireNonNull(thread, "thread");
        Objects.requireNonNull(completion, "completion");
        return new ReadStrategy(Kind.ON_THREAD, thread, completion);
    }

    /** {@link Kind#NBI_FENCE}. */
    public static ReadStrategy nbiFence() {
        HcommNative.ensureStrategy(Kind.NBI_FENCE);
        return new ReadStrategy(Kind.NBI_FENCE, null, null);
    }

    public Kind kind() {
        return kind;
    }

    /**
     * Issues a read of {@code length} bytes from the peer's {@code srcAddress} into local {@code dstAddress}.
     * Asynchronous: the bytes are only guaranteed to be there after {@link #complete()}.
     *
     * @throws IllegalStateException if the channel's set (or the thread) is closed
     * @throws HcommException if HComm refuses the read, a {@link ChannelReadException} naming the channel (the
     *     batch was ended and waited for), or refuses to open the batch
     */
    public void submit(ChannelSet.Channel channel, long dstAddress, long srcAddress, long length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        long ch = channel.handle();
        int rc;
        if (kind == Kind.ON_THREAD) {
            long th = thread.handle();
            batch.enter("submit");
            touched.add(channel);
            rc = HcommDataPlaneLibrary.HcommReadOnThread(th, ch, dstAddress, srcAddress, length);
        } else {
            touched.add(channel);
            rc = HcommNbiLibrary.HcommReadNbi(ch, dstAddress, srcAddress, length);
            if (rc == HcommAbi.HCCL_E_AGAIN) { // send queue full: wait for this channel's reads, then post again
                int frc = HcommNbiLibrary.HcommChannelFence(ch);
                rc = frc != 0 ? frc : HcommNbiLibrary.HcommReadNbi(ch, dstAddress, srcAddress, length);
            }
        }
        if (rc != 0) {
            HcommException e = new ChannelReadException(kind == Kind.ON_THREAD ? "HcommReadOnThread" : "HcommReadNbi",
                    rc, channel, channel.context() + context() + " dst=0x" + Long.toHexString(dstAddress) + " src=0x"
                    + Long.toHexString(srcAddress) + " len=" + length);
            throw withCleanup(e, this::complete);
        }
    }

    /**
     * Hands every read submitted so far to HComm without waiting: ends the batch for {@link Kind#ON_THREAD}
     * ({@code HcommBatchModeEnd}); nothing for {@link Kind#NBI_FENCE}, whose reads {@link #submit} posted. Reads
     * submitted afterwards start a new batch; {@link #complete()} waits for all of them.
     */
    public void flush() {
        if (batch == null) {
            return;
        }
        try {
            batch.end("flush");
        } catch (HcommException e) {
            throw withCleanup(e, this::awaitTouched);
        }
    }

    /** Flushes, then waits until every read submitted since the last completion has landed; no-op when none was. */
    public void complete() {
        flush(); // when it fails it has already waited for what was submitted
        awaitTouched();
    }

    /** Waits for every read since the last completion, then forgets them. */
    private void awaitTouched() {
        if (touched.isEmpty()) {
            return;
        }
        if (completion == Completion.STREAM_SYNC) {
            try {
                thread.synchronizeStream();
            } finally {
                touched.clear();
            }
            return;
        }
        RuntimeException failure = null;
        String call = kind == Kind.ON_THREAD ? "HcommChannelDrainOnThread" : "HcommChannelFence";
        try {
            for (ChannelSet.Channel c : touched.list()) {
                try {
                    long ch = c.handle();
                    int rc = kind == Kind.ON_THREAD
                            ? HcommOnThreadLibrary.HcommChannelDrainOnThread(thread.handle(), ch)
                            : HcommNbiLibrary.HcommChannelFence(ch);
                    if (rc == HcommStatus.HCCL_E_TIMEOUT.code() && kind == Kind.ON_THREAD) {
                        // a drain waits for the whole thread: the timeout names no channel, and each further wait
                        // would last as long again
                        failure = Failures.accumulate(failure, new HcommException(call, rc,
                                "reads on " + touched.list().size() + " channels" + context()));
                        break;
                    }
                    if (rc != 0) {
                        failure = Failures.accumulate(failure,
                                new ChannelReadException(call, rc, c, c.context() + context()));
                    }
                } catch (RuntimeException e) {
                    failure = Failures.accumulate(failure, e);
                }
            }
        } finally {
            touched.clear();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** {@code failure} after running {@code cleanup}, whose own failure rides along suppressed. */
    private static HcommException withCleanup(HcommException failure, Runnable cleanup) {
        try {
            cleanup.run();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
        return failure;
    }

    /** What an error names besides the channel (with a leading space), or "". */
    private String context() {
        return thread == null ? "" : " " + thread.context();
    }
}
