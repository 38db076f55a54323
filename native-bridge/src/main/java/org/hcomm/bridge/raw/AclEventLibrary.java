package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The ACL calls of cross-stream ordering and host staging ({@code acl_rt.h}): events, stream abort, asynchronous
 * copies and pinned host memory. JNA direct mapping, bound apart from {@link AclRuntime} and optional: the read path
 * never calls them, so an ACL without one (an old CANN lacks {@code aclrtStreamAbort}) still serves it. On CANN they
 * live in {@code libascendcl.so}; soft HComm exports them from {@code libhcomm_soft.so}. Codes from CANN's
 * {@code rt_error_codes.h} (docs/HCOMM_ABI.md cites the lines).
 */
public final class AclEventLibrary {
    private AclEventLibrary() {}

    /** {@code aclrtEventRecordedStatus}: the latest record has not completed (or was never made, or failed). */
    public static final int ACL_EVENT_RECORDED_STATUS_NOT_READY = 0;
    public static final int ACL_EVENT_RECORDED_STATUS_COMPLETE = 1;
    /** The stream was aborted ({@code aclrtStreamAbort}): it can only be destroyed. */
    public static final int ACL_ERROR_RT_STREAM_ABORT = 107023;
    /** {@code aclrtSynchronizeEventWithTimeout} timed out. */
    public static final int ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047;

    public static native int aclrtCreateEvent(PointerByReference event);

    public static native int aclrtDestroyEvent(Pointer event);

    public static native int aclrtRecordEvent(Pointer event, Pointer stream);

    public static native int aclrtResetEvent(Pointer event, Pointer stream);

    public static native int aclrtStreamWaitEvent(Pointer stream, Pointer event);

    /** {@code status}: an {@code aclrtEventRecordedStatus}. */
    public static native int aclrtQueryEventStatus(Pointer event, IntByReference status);

    /** {@code timeout} in ms: -1 waits as long as it takes, 0 looks once. */
    public static native int aclrtSynchronizeEventWithTimeout(Pointer event, int timeout);

    public static native int aclrtStreamAbort(Pointer stream);

    public static native int aclrtMemcpyAsync(long dst, long destMax, long src, long count, int kind, Pointer stream);

    public static native int aclrtMallocHost(PointerByReference hostPtr, long size);

    public static native int aclrtFreeHost(Pointer hostPtr);
}
