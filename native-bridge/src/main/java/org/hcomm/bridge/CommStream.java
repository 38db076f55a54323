package org.hcomm.bridge;

import com.sun.jna.Pointer;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.HcclLibrary;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;

/**
 * A stream of a {@link Communicator} with its communicator thread: reads from a peer's HCCL buffer into this rank's,
 * in batch mode (mandatory on Atlas A2/A3), completed by {@code aclrtSynchronizeStream}. Batch mode belongs to the
 * OS thread that opened it: fill and {@link #flush()} on one thread. The stream and thread live until the
 * communicator closes (CANN gives no thread back).
 */
public final class CommStream {
    private final Communicator comm;
    private final Pointer stream;
    private final long thread;
    /** The OS thread whose batch mode is open, or null. */
    private Thread batchOwner;

    CommStream(Communicator comm, Pointer stream, long thread) {
        this.comm = comm;
        this.stream = stream;
        this.thread = thread;
    }

    public Communicator communicator() {
        return comm;
    }

    /** Queues a read of {@code length} bytes from the peer's HCCL buffer at {@code src} into this rank's at {@code dst}. */
    public void read(long channel, long dst, long src, long length) {
        comm.checkOpen();
        open();
        int rc = HcommDataPlaneLibrary.HcommReadOnThread(thread, channel, dst, src, length);
        HcommException.check(rc, "HcommReadOnThread", comm.context() + " dst=0x" + Long.toHexString(dst) + " src=0x"
                + Long.toHexString(src) + " len=" + length);
    }

    /** Raises notify {@code idx} at the channel's other end (a task of this stream, after what is queued before it). */
    public void notifyPeer(long channel, int idx) {
        open();
        int rc = HcclLibrary.HcommChannelNotifyRecordOnThread(thread, channel, idx);
        HcommException.check(rc, "HcommChannelNotifyRecordOnThread", comm.context() + " notify " + idx);
    }

    /** Makes the stream wait for notify {@code idx} from the channel's other end, at most {@code seconds}. */
    public void waitForPeer(long channel, int idx, int seconds) {
        open();
        int rc = HcclLibrary.HcommChannelNotifyWaitOnThread(thread, channel, idx, seconds);
        HcommException.check(rc, "HcommChannelNotifyWaitOnThread", comm.context() + " notify " + idx);
    }

    private void open() {
        if (batchOwner == null) {
            Acl.useDevice(comm.device());
            int rc = HcommDataPlaneLibrary.HcommBatchModeStart(null);
            HcommException.check(rc, "HcommBatchModeStart", comm.context());
            batchOwner = Thread.currentThread();
        } else if (batchOwner != Thread.currentThread()) {
            throw new IllegalStateException("batch opened on " + batchOwner.getName() + ", used from "
                    + Thread.currentThread().getName());
        }
    }

    /** {@code HcommBatchModeEnd}: what was queued starts. */
    public void flush() {
        if (batchOwner == null) {
            return;
        }
        if (batchOwner != Thread.currentThread()) {
            throw new IllegalStateException("batch opened on " + batchOwner.getName() + ", flushed from "
                    + Thread.currentThread().getName());
        }
        batchOwner = null;
        int rc = HcommDataPlaneLibrary.HcommBatchModeEnd(null);
        HcommException.check(rc, "HcommBatchModeEnd", comm.context());
    }

    /** Flushes, then {@code aclrtSynchronizeStream}: every task queued so far has completed, or the first error. */
    public void await() {
        flush();
        Acl.useDevice(comm.device());
        int rc = AclRuntime.aclrtSynchronizeStream(stream);
        HcommException.check(rc, "aclrtSynchronizeStream", comm.context());
    }
}
