package org.hcomm.bridge;

import java.util.Objects;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;
import org.hcomm.bridge.raw.HcommOnThreadLibrary;

/** {@link ReadStrategy.Kind#ON_THREAD}: batch mode + HcommReadOnThread, completed by drain or stream sync. */
final class OnThreadReads extends ChannelReads {
    private final CommThread thread;
    private final Completion completion;
    private final BatchMode batch;
    /** The thread's handle, read by {@link #open} before each post. */
    private long th;
    /** One drain per channel read (made once: {@link #complete} runs once per batch of reads). */
    private final ChannelWait drain;

    OnThreadReads(CommThread thread, Completion completion) {
        this.thread = Objects.requireNonNull(thread, "thread");
        this.completion = Objects.requireNonNull(completion, "completion");
        this.batch = new BatchMode(null, thread::context);
        this.drain = ch -> HcommOnThreadLibrary.HcommChannelDrainOnThread(thread.handle(), ch);
    }

    @Override
    public Kind kind() {
        return Kind.ON_THREAD;
    }

    @Override
    void open() {
        th = thread.handle();
        batch.enter("submit");
    }

    @Override
    int post(long ch, long dstAddress, long srcAddress, long length) {
        return HcommDataPlaneLibrary.HcommReadOnThread(th, ch, dstAddress, srcAddress, length);
    }

    @Override
    String postCall() {
        return "HcommReadOnThread";
    }

    @Override
    String context() {
        return " " + thread.context();
    }

    @Override
    public void flush() {
        try {
            batch.end("flush");
        } catch (HcommException e) {
            try {
                awaitTouched();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    @Override
    public void complete() {
        flush(); // when it fails it has already waited for what was submitted
        awaitTouched();
    }

    /** Waits for every read since the last completion, then forgets them. */
    private void awaitTouched() {
        if (nothingTouched()) {
            return;
        }
        if (completion == Completion.STREAM_SYNC) {
            try {
                thread.synchronizeStream();
            } finally {
                forgetTouched();
            }
        } else {
            awaitEach("HcommChannelDrainOnThread", drain, true); // a drain waits for the whole thread
        }
    }
}
