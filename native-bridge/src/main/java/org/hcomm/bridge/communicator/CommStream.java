package org.hcomm.bridge.communicator;

import com.sun.jna.Pointer;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.HcclLibrary;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;
import org.hcomm.bridge.read.BatchMode;

/**
 * A stream of a {@link Communicator} with its communicator thread: reads from a peer's HCCL buffer into this rank's
 * and channel notifies, queued in batch mode ({@link BatchMode}) and completed by {@code aclrtSynchronizeStream}
 * ({@link #await()}). The stream and thread live until the communicator closes (CANN gives no thread back).
 *
 * <p>Threading: confined; queue and {@link #flush()} on one OS thread (the batch is that thread's), then any thread
 * may queue the next batch.
 */
public final class CommStream {
    private final Communicator comm;
    private final Pointer stream;
    private final long thread;
    private final BatchMode batch;

    CommStream(Communicator comm, Pointer stream, long thread) {
        this.comm = comm;
        this.stream = stream;
        this.thread = thread;
        this.batch = new BatchMode(() -> Acl.useDevice(comm.device()), comm::context);
    }

    public Communicator communicator() {
        return comm;
    }

    /**
     * Queues a read of {@code length} bytes from the peer's HCCL buffer at {@code src} into this rank's at
     * {@code dst}.
     */
    public void read(long channel, long dst, long src, long length) {
        comm.checkOpen();
        batch.enter("used");
        int rc = HcommDataPlaneLibrary.HcommReadOnThread(thread, channel, dst, src, length);
        HcommException.check(rc, "HcommReadOnThread", comm.context() + " dst=0x" + Long.toHexString(dst) + " src=0x"
                + Long.toHexString(src) + " len=" + length);
    }

    /** Raises notify {@code idx} at the channel's other end (a task of this stream, after what is queued before it). */
    public void notifyPeer(long channel, int idx) {
        batch.enter("used");
        int rc = HcclLibrary.HcommChannelNotifyRecordOnThread(thread, channel, idx);
        HcommException.check(rc, "HcommChannelNotifyRecordOnThread", comm.context() + " notify " + idx);
    }

    /** Makes the stream wait for notify {@code idx} from the channel's other end, at most {@code seconds}. */
    public void waitForPeer(long channel, int idx, int seconds) {
        batch.enter("used");
        int rc = HcclLibrary.HcommChannelNotifyWaitOnThread(thread, channel, idx, seconds);
        HcommException.check(rc, "HcommChannelNotifyWaitOnThread", comm.context() + " notify " + idx);
    }

    /** {@code HcommBatchModeEnd}: what was queued starts. */
    public void flush() {
        batch.end("flushed");
    }

    /**
     * Flushes, then {@code aclrtSynchronizeStreamWithTimeout}: every task queued so far has completed, or the first
     * error, or the ACL timeout code once {@code timeoutMillis} passed (the stream may still run: then it is not
     * reused).
     */
    public void await(long timeoutMillis) {
        flush();
        Acl.useDevice(comm.device());
        int rc = AclRuntime.aclrtSynchronizeStreamWithTimeout(stream, (int) Math.min(Integer.MAX_VALUE,
                Math.max(1, timeoutMillis)));
        HcommException.check(rc, "aclrtSynchronizeStreamWithTimeout", comm.context());
    }

    /** Flushes, then {@code aclrtSynchronizeStream}: every task queued so far has completed, or the first error. */
    public void await() {
        flush();
        Acl.useDevice(comm.device());
        int rc = AclRuntime.aclrtSynchronizeStream(stream);
        HcommException.check(rc, "aclrtSynchronizeStream", comm.context());
    }
}
