package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The ACL runtime calls the binding makes, JNA direct mapping. On CANN they live in {@code libascendcl.so}; soft
 * HComm exports them from {@code libhcomm_soft.so}. Bound by the loader with
 * {@code Native.register(AclRuntime.class, lib)}; unbound they throw {@link UnsatisfiedLinkError}. Addresses of
 * copies are plain {@code long}s (host or device virtual addresses, 64-bit on every supported host).
 */
public final class AclRuntime {
    private AclRuntime() {}

    public static final int ACL_SUCCESS = 0;
    public static final int ACL_ERROR_REPEAT_INITIALIZE = 100002;
    /** {@code aclrtSynchronizeStreamWithTimeout}: the stream was not done in time. */
    public static final int ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046;
    public static final int ACL_MEMCPY_HOST_TO_DEVICE = 1;
    public static final int ACL_MEMCPY_DEVICE_TO_HOST = 2;

    public static native int aclrtSynchronizeStream(Pointer stream);

    /** {@code timeout} in ms ({@code -1}: none); a stream not done in time: {@code ACL_ERROR_RT_STREAM_SYNC_TIMEOUT}. */
    public static native int aclrtSynchronizeStreamWithTimeout(Pointer stream, int timeout);

    /** {@code configPath} may be null. */
    public static native int aclInit(String configPath);

    /** The devices visible to this process ({@code uint32_t *count}): aclrtSetDevice takes 0 .. count - 1. */
    public static native int aclrtGetDeviceCount(IntByReference count);

    public static native int aclrtSetDevice(int deviceId);

    public static native int aclrtCreateStream(PointerByReference stream);

    public static native int aclrtDestroyStream(Pointer stream);

    public static native int aclrtMemcpy(long dst, long destMax, long src, long count, int kind);

    public static native String aclrtGetSocName();
}
