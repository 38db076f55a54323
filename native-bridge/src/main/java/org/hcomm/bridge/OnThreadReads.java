package org.hcomm.bridge;

import java.util.Objects;
import org.hcomm.bridge.raw.HcommLibrary;

/** {@link ReadStrategy.Kind#ON_THREAD}: batch mode + HcommReadOnThread, completed by drain or stream sync. */
final class OnThreadReads implements ReadStrategy {
    private final CommThread thread;
    private final Completion completion;
    /** Channels read since the last completion (flushed or not). */
    private final TouchedChannels touched = new TouchedChannels();
    /** The OS thread whose batch mode is open, or null when no batch is open. */
    private Thread batchOwner;

    OnThreadReads(CommThread thread, Completion completion) {
        this.thread = Objects.requireNonNull(thread, "thread");
        this.completion = Objects.requireNonNull(completion, "completion");
    }

    @Override
    public Kind kind() {
        return Kind.ON_THREAD;
    }

    @Override
    public void submit(ChannelSet.Channel channel, long dstAddress, long srcAddress, long length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        long ch = channel.handle();
        long th = thread.handle();
        if (batchOwner == null) {
            int rc = HcommLibrary.HcommBatchModeStart(null);
            HcommException.check(rc, "HcommBatchModeStart", thread.context());
            batchOwner = Thread.currentThread();
        } else {
            checkOwner("submit");
        }
        touched.add(channel);
        int rc = HcommLibrary.HcommReadOnThread(th, ch, dstAddress, srcAddress, length);
        if (rc != 0) {
            HcommException e = new HcommException("HcommReadOnThread", rc, channel.context() + " "
                    + thread.context() + " dst=0x" + Long.toHexString(dstAddress) + " src=0x"
                    + Long.toHexString(srcAddress) + " len=" + length);
            try {
                complete();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    @Override
    public void flush() {
        if (batchOwner == null) {
            return;
        }
        checkOwner("flush");
        batchOwner = null;
        int rc = HcommLibrary.HcommBatchModeEnd(null);
        if (rc != 0) {
            HcommException e = new HcommException("HcommBatchModeEnd", rc, thread.context());
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
        if (touched.isEmpty()) {
            return;
        }
        RuntimeException failure = null;
        try {
            if (completion == Completion.STREAM_SYNC) {
                thread.synchronizeStream();
            } else {
                long th = thread.handle();
                for (ChannelSet.Channel c : touched.list()) {
                    try {
                        int rc = HcommLibrary.HcommChannelDrainOnThread(th, c.handle());
                        HcommException.check(rc, "HcommChannelDrainOnThread", c.context() + " " + thread.context());
                    } catch (RuntimeException e) {
                        failure = first(failure, e);
                    }
                }
            }
        } catch (RuntimeException e) {
            failure = first(failure, e);
        } finally {
            touched.clear();
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void checkOwner(String what) {
        if (batchOwner != Thread.currentThread()) {
            throw new IllegalStateException("batch opened on " + batchOwner.getName() + ", " + what + " from "
                    + Thread.currentThread().getName());
        }
    }

    static RuntimeException first(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
