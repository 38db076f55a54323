package org.hcomm.bridge.raw;

/**
 * {@code HcommAcquireComm}/{@code HcommReleaseComm} ({@code hcomm_primitives.h}): the lock around one use of a
 * communicator, which HCCL's host CPU_TS operators take around their data-plane calls. JNA direct mapping, bound
 * apart and optional: a library without them (soft HComm today) leaves the binding's own per-communicator lock alone
 * in charge.
 */
public final class HcclCommLockLibrary {
    private HcclCommLockLibrary() {}

    /** {@code commId}: the communicator's name ({@code HcclGetCommName}). */
    public static native int HcommAcquireComm(String commId);

    public static native int HcommReleaseComm(String commId);
}
