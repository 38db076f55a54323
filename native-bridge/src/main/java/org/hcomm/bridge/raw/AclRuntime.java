package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;

/**
 * {@code aclrtSynchronizeStream(aclrtStream)}, JNA direct mapping. On CANN it lives in {@code libascendcl.so}; soft
 * HComm exports it from {@code libhcomm_soft.so}. Bound by the loader with
 * {@code Native.register(AclRuntime.class, lib)}; unbound it throws {@link UnsatisfiedLinkError}.
 */
public final class AclRuntime {
    private AclRuntime() {}

    public static native int aclrtSynchronizeStream(Pointer stream);
}
