package org.hcomm.bridge.communicator;

import com.sun.jna.ptr.IntByReference;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclRuntime;

/**
 * The ACL runtime as the communicator path needs it, checked: {@code aclInit} once per process (a repeat by
 * another library of the process is fine), the device of each OS thread ({@code aclrtSetDevice} before any call that
 * needs a device context, as CANN requires per thread), and copies between host memory and device memory
 * (HCCL buffers), which the host cannot touch directly.
 *
 * <p>Thread-safe.
 */
public final class Acl {
    private static final Object INIT = new Object();
    private static volatile boolean initialised;
    /** The device this OS thread set, or -1. */
    private static final ThreadLocal<int[]> DEVICE = ThreadLocal.withInitial(() -> new int[] {-1});

    private Acl() {}

    /** {@code aclInit(NULL)} once per process. */
    public static void init() {
        if (initialised) {
            return;
        }
        synchronized (INIT) {
            if (initialised) {
                return;
            }
            HcommNative.ensureCommunicator();
            int rc = AclRuntime.aclInit(null);
            if (rc != AclRuntime.ACL_SUCCESS && rc != AclRuntime.ACL_ERROR_REPEAT_INITIALIZE) {
                throw new HcommException("aclInit", rc, "");
            }
            initialised = true;
        }
    }

    /**
     * How many devices this process sees ({@code aclrtGetDeviceCount}): the logical ids {@code aclrtSetDevice} takes
     * are 0 .. count - 1, as {@code ASCEND_RT_VISIBLE_DEVICES} (or a container's device plugin) leaves them.
     */
    public static int deviceCount() {
        init();
        IntByReference count = new IntByReference();
        int rc = AclRuntime.aclrtGetDeviceCount(count);
        HcommException.check(rc, "aclrtGetDeviceCount", "");
        return count.getValue();
    }

    /** {@code aclrtSetDevice(device)} on the calling OS thread, once per thread and device. */
    public static void useDevice(int device) {
        if (device < 0) {
            throw new IllegalArgumentException("device must be >= 0, got " + device);
        }
        int[] mine = DEVICE.get();
        if (mine[0] == device) {
            return;
        }
        init();
        int rc = AclRuntime.aclrtSetDevice(device);
        HcommException.check(rc, "aclrtSetDevice", "device=" + device);
        mine[0] = device;
    }

    /** The SoC this host's cards report ({@code aclrtGetSocName}), e.g. {@code Ascend910B3}; null if unknown. */
    public static String socName() {
        init();
        return AclRuntime.aclrtGetSocName();
    }

    /** Host to device: {@code aclrtMemcpy(dst, len, src, len, HOST_TO_DEVICE)} on {@code device}. */
    public static void toDevice(int device, long deviceDst, long hostSrc, long length) {
        copy(device, deviceDst, hostSrc, length, AclRuntime.ACL_MEMCPY_HOST_TO_DEVICE, "host to device");
    }

    /** Device to host. */
    public static void toHost(int device, long hostDst, long deviceSrc, long length) {
        copy(device, hostDst, deviceSrc, length, AclRuntime.ACL_MEMCPY_DEVICE_TO_HOST, "device to host");
    }

    private static void copy(int device, long dst, long src, long length, int kind, String what) {
        if (length <= 0) {
            return;
        }
        useDevice(device);
        int rc = AclRuntime.aclrtMemcpy(dst, length, src, length, kind);
        HcommException.check(rc, "aclrtMemcpy", what + " of " + length + " bytes, device " + device);
    }
}
