package org.hcomm.bridge.communicator;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclEventLibrary;
import org.hcomm.bridge.raw.AclRuntime;

/**
 * A plain ACL stream ({@code aclrtCreateStream}) for copies between host memory and device memory (HCCL buffers):
 * {@link #toDevice} and {@link #toHost} queue {@code aclrtMemcpyAsync} tasks, run in order; {@link #waitFor} holds
 * the later tasks until an {@link AclEvent}'s record (say, on a {@link CommStream} after a notify wait) completed;
 * {@link #record} marks a point for others; {@link #await()} is {@code aclrtSynchronizeStream}. Host memory of a
 * copy must stay valid until the copy completed ({@link PinnedHost} on CANN, where pageable memory is staged).
 * After {@link #abort()} every task and sync fails with {@code ACL_ERROR_RT_STREAM_ABORT} and the stream can only be
 * closed ({@code aclrtDestroyStream}).
 *
 * <p>Threading: queueing and {@link #await()} from one thread at a time (tasks run in the order queued);
 * {@link #abort()} and {@link #close()} from any thread, close after the last use.
 */
public final class CopyStream extends NativeOwner {
    private final Pointer stream;
    private final int device;

    private CopyStream(Pointer stream, int device) {
        super("ACL copy stream on device " + device);
        this.stream = stream;
        this.device = device;
    }

    /** {@code aclrtCreateStream} on {@code device}. */
    public static CopyStream create(int device) {
        HcommNative.ensureAclEvents();
        Acl.useDevice(device);
        PointerByReference s = new PointerByReference();
        int rc = AclRuntime.aclrtCreateStream(s);
        HcommException.check(rc, "aclrtCreateStream", "device " + device);
        return new CopyStream(s.getValue(), device);
    }

    public int device() {
        return device;
    }

    /** Queues a copy of {@code length} bytes from host memory at {@code hostSrc} into device memory at {@code deviceDst}. */
    public void toDevice(long deviceDst, long hostSrc, long length) {
        copy(deviceDst, hostSrc, length, AclRuntime.ACL_MEMCPY_HOST_TO_DEVICE, "host to device");
    }

    /** Queues a copy of {@code length} bytes from device memory at {@code deviceSrc} into host memory at {@code hostDst}. */
    public void toHost(long hostDst, long deviceSrc, long length) {
        copy(hostDst, deviceSrc, length, AclRuntime.ACL_MEMCPY_DEVICE_TO_HOST, "device to host");
    }

    private void copy(long dst, long src, long length, int kind, String what) {
        checkOpen();
        if (length <= 0) {
            return;
        }
        Acl.useDevice(device);
        int rc = AclEventLibrary.aclrtMemcpyAsync(dst, length, src, length, kind, stream);
        HcommException.check(rc, "aclrtMemcpyAsync", context() + " " + what + " of " + length + " bytes dst=0x"
                + Long.toHexString(dst) + " src=0x" + Long.toHexString(src));
    }

    /** Records {@code event} here, after the tasks queued so far ({@code aclrtRecordEvent}). */
    public void record(AclEvent event) {
        checkOpen();
        event.record(stream, device, context());
    }

    /** Holds this stream's later tasks until {@code event}'s latest record so far completed ({@code aclrtStreamWaitEvent}). */
    public void waitFor(AclEvent event) {
        checkOpen();
        Acl.useDevice(device);
        int rc = AclEventLibrary.aclrtStreamWaitEvent(stream, event.handle());
        HcommException.check(rc, "aclrtStreamWaitEvent", context());
    }

    /** {@code aclrtSynchronizeStream}: every task queued so far has completed, or the first failure. */
    public void await() {
        checkOpen();
        Acl.useDevice(device);
        int rc = AclRuntime.aclrtSynchronizeStream(stream);
        HcommException.check(rc, "aclrtSynchronizeStream", context());
    }

    /** {@code aclrtStreamAbort}: queued tasks fail, the running one stops; the stream can then only be closed. */
    public void abort() {
        checkOpen();
        Acl.useDevice(device);
        int rc = AclEventLibrary.aclrtStreamAbort(stream);
        HcommException.check(rc, "aclrtStreamAbort", context());
    }

    private String context() {
        return "copy stream 0x" + Long.toHexString(Pointer.nativeValue(stream)) + " device " + device;
    }

    @Override
    protected void release() {
        Acl.useDevice(device);
        int rc = AclRuntime.aclrtDestroyStream(stream);
        HcommException.check(rc, "aclrtDestroyStream", context());
    }
}
