package org.hcomm.bridge;

/**
 * What both read strategies share: the channels read since the last completion, how a read HComm rejects leaves the
 * strategy (completed, so it is reusable, and the error names the read), and waiting on each channel read. A failure
 * of one channel's read is a {@link ChannelReadException} naming that channel; a timeout of a wait that covers the
 * whole thread is not (it cannot say which channel did not answer).
 * Subclasses say how a read is posted and how a batch is opened.
 */
abstract class ChannelReads implements ReadStrategy {
    /** One HComm wait on one channel, by handle: its status code. */
    @FunctionalInterface
    interface ChannelWait {
        int await(long channel);
    }

    /** Channels read since the last completion (flushed or not). */
    private final TouchedChannels touched = new TouchedChannels();

    @Override
    public final void submit(ChannelSet.Channel channel, long dstAddress, long srcAddress, long length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        long ch = channel.handle();
        open();
        touched.add(channel);
        int rc = post(ch, dstAddress, srcAddress, length);
        if (rc != 0) {
            HcommException e = new ChannelReadException(postCall(), rc, channel, channel.context() + context()
                    + " dst=0x" + Long.toHexString(dstAddress) + " src=0x" + Long.toHexString(srcAddress) + " len="
                    + length);
            try {
                complete();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** Prepares to post a read (opens the batch when it has one); throws when the strategy cannot read. */
    abstract void open();

    /** Posts one read on channel handle {@code ch}; the HComm status code. */
    abstract int post(long ch, long dstAddress, long srcAddress, long length);

    /** The HComm call {@link #post} makes, for errors. */
    abstract String postCall();

    /** What else an error names besides the channel (with a leading space), or "". */
    abstract String context();

    final boolean nothingTouched() {
        return touched.isEmpty();
    }

    /** Forgets the channels read so far (their reads have been waited for). */
    final void forgetTouched() {
        touched.clear();
    }

    /**
     * Calls {@code wait} on every channel read since the last completion, then forgets them; throws the first
     * failure with the later ones suppressed. When {@code wholeThread} (each wait covers every read of the thread,
     * as a drain does), a timeout names no channel — any of them may be the one that did not answer — and ends the
     * waiting: each further wait would last as long again.
     */
    final void awaitEach(String call, ChannelWait wait, boolean wholeThread) {
        RuntimeException failure = null;
        try {
            for (ChannelSet.Channel c : touched.list()) {
                try {
                    int rc = wait.await(c.handle());
                    if (rc == HcommStatus.HCCL_E_TIMEOUT.code() && wholeThread) {
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
}
