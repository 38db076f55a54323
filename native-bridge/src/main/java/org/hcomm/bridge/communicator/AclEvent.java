package org.hcomm.bridge.communicator;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclEventLibrary;

/**
 * An ACL event ({@code aclrtCreateEvent}): a point of a stream that other streams and the host wait for. A record
 * ({@link #record(CommStream)}, {@link CopyStream#record(AclEvent)}) is a task that completes once the tasks queued
 * on that stream before it completed; a stream that waits ({@link CommStream#waitFor}, {@link CopyStream#waitFor})
 * holds its later tasks until the latest record so far completed; the host asks without blocking
 * ({@link #isComplete()}) or waits ({@link #await(long)}). A record whose stream is aborted fails: waits for it fail
 * with {@code ACL_ERROR_RT_STREAM_ABORT}. {@link #close()} is {@code aclrtDestroyEvent}.
 *
 * <p>Threading: thread-safe (each call sets the event's device on the calling OS thread first).
 */
public final class AclEvent extends NativeOwner {
    private final Pointer handle;
    private final int device;

    private AclEvent(Pointer handle, int device) {
        super("ACL event on device " + device);
        this.handle = handle;
        this.device = device;
    }

    /** {@code aclrtCreateEvent} on {@code device}. */
    public static AclEvent create(int device) {
        HcommNative.ensureAclEvents();
        Acl.useDevice(device);
        PointerByReference ev = new PointerByReference();
        int rc = AclEventLibrary.aclrtCreateEvent(ev);
        HcommException.check(rc, "aclrtCreateEvent", "device " + device);
        return new AclEvent(ev.getValue(), device);
    }

    public int device() {
        return device;
    }

    /**
     * Records the event on {@code stream} after everything queued there so far: flushes the stream's batch first
     * ({@link CommStream#flush()}, so on the calling OS thread when a batch is open), then {@code aclrtRecordEvent}.
     */
    public void record(CommStream stream) {
        stream.flush();
        record(stream.aclStream(), stream.communicator().device(), stream.communicator().context());
    }

    void record(Pointer stream, int streamDevice, String where) {
        checkOpen();
        Acl.useDevice(streamDevice);
        int rc = AclEventLibrary.aclrtRecordEvent(handle, stream);
        HcommException.check(rc, "aclrtRecordEvent", context() + " on " + where);
    }

    /** Whether the latest record completed ({@code aclrtQueryEventStatus}, non-blocking); false before any record. */
    public boolean isComplete() {
        checkOpen();
        Acl.useDevice(device);
        IntByReference status = new IntByReference(-1);
        int rc = AclEventLibrary.aclrtQueryEventStatus(handle, status);
        HcommException.check(rc, "aclrtQueryEventStatus", context());
        return status.getValue() == AclEventLibrary.ACL_EVENT_RECORDED_STATUS_COMPLETE;
    }

    /**
     * Waits until the latest record so far completed ({@code aclrtSynchronizeEventWithTimeout}): at most
     * {@code timeoutMillis} ms (-1: as long as it takes; 0: looks once; values above {@code Integer.MAX_VALUE} wait
     * that long). Returns at once when never recorded.
     *
     * @throws HcommException with {@code ACL_ERROR_RT_EVENT_SYNC_TIMEOUT} (507047) when it timed out, or the
     *     record's failure ({@code ACL_ERROR_RT_STREAM_ABORT} when its stream was aborted)
     */
    public void await(long timeoutMillis) {
        if (timeoutMillis < -1) {
            throw new IllegalArgumentException("timeoutMillis must be >= -1, got " + timeoutMillis);
        }
        checkOpen();
        Acl.useDevice(device);
        int rc = AclEventLibrary.aclrtSynchronizeEventWithTimeout(handle, (int) Math.min(timeoutMillis,
                Integer.MAX_VALUE));
        HcommException.check(rc, "aclrtSynchronizeEventWithTimeout", context() + " timeout " + timeoutMillis
                + " ms");
    }

    Pointer handle() {
        checkOpen();
        return handle;
    }

    private String context() {
        return "event 0x" + Long.toHexString(Pointer.nativeValue(handle)) + " device " + device;
    }

    @Override
    protected void release() {
        Acl.useDevice(device);
        int rc = AclEventLibrary.aclrtDestroyEvent(handle);
        HcommException.check(rc, "aclrtDestroyEvent", context());
    }
}
