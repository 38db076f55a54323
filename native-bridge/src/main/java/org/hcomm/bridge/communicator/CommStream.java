package org.hcomm.bridge.communicator;

import com.sun.jna.Pointer;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclEventLibrary;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.HcclWriteLibrary;
import org.hcomm.bridge.raw.HcclLibrary;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;
import org.hcomm.bridge.read.BatchMode;

/**
 * A stream of a {@link Communicator} with its communicator thread: reads from a peer's HCCL buffer into this rank's,
 * writes from this rank's into a peer's, and channel notifies, queued in batch mode ({@link BatchMode}) and
 * completed by {@code aclrtSynchronizeStream} ({@link #await()}). {@link AclEvent}s order it with other streams
 * ({@link AclEvent#record(CommStream)}, {@link #waitFor}); {@link #abort()} stops it for good. The stream and thread
 * live until the communicator closes (CANN gives no thread back).
 *
 * <p>Threading: confined; queue and {@link #flush()} on one OS thread (the batch is that thread's), then any thread
 * may queue the next batch. {@link #abort()} may come from any thread (it does not touch the batch).
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

    /**
     * Queues a one-sided write of {@code length} bytes from this rank's HCCL buffer at {@code src} into the peer's
     * at {@code dst}, an address in the range {@link Communicator#peerBuffer(long)} gave for the channel
     * ({@code HcommWriteOnThread}); outside it {@code HCCL_E_PARA}. A notify recorded after it on the same channel
     * reaches the peer after its bytes.
     */
    public void write(long channel, long dst, long src, long length) {
        comm.checkOpen();
        HcommNative.ensureOneSidedWrite();
        batch.enter("used");
        int rc = HcclWriteLibrary.HcommWriteOnThread(thread, channel, dst, src, length);
        HcommException.check(rc, "HcommWriteOnThread", comm.context() + " dst=0x" + Long.toHexString(dst) + " src=0x"
                + Long.toHexString(src) + " len=" + length);
    }

    /**
     * Holds this stream's later tasks until {@code event}'s latest record so far completed: flushes the batch
     * first (what was queued before stays before the wait), then {@code aclrtStreamWaitEvent}.
     */
    public void waitFor(AclEvent event) {
        flush();
        Acl.useDevice(comm.device());
        int rc = AclEventLibrary.aclrtStreamWaitEvent(stream, event.handle());
        HcommException.check(rc, "aclrtStreamWaitEvent", comm.context());
    }

    /**
     * {@code aclrtStreamAbort}: the queued tasks fail and the running one (a notify wait blocked on a peer) stops;
     * every later {@link #await()} throws {@code ACL_ERROR_RT_STREAM_ABORT} (107023). The stream is then of no more
     * use; it ends with its communicator. From any thread; a batch still open stays the opener's to end.
     */
    public void abort() {
        comm.checkOpen();
        HcommNative.ensureAclEvents();
        Acl.useDevice(comm.device());
        int rc = AclEventLibrary.aclrtStreamAbort(stream);
        HcommException.check(rc, "aclrtStreamAbort", comm.context());
    }

    Pointer aclStream() {
        return stream;
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
