package org.hcomm.bridge.raw;

/**
 * The functions of the {@code onThread} read strategy (docs/HCOMM_ABI.md §3.4, §3.6), JNA direct mapping, bound apart
 * from {@link HcommLibrary} by {@code Native.register(HcommOnThreadLibrary.class, lib)}: HComm threads and the
 * completion of reads by drain (batch mode and the reads are {@link HcommDataPlaneLibrary}'s). Same type mapping as
 * {@link HcommLibrary}.
 */
public final class HcommOnThreadLibrary {
    private HcommOnThreadLibrary() {}

    public static native int HcommThreadAlloc(int engine, int threadNum, int[] notifyNumPerThread, long[] threads);

    public static native int HcommThreadFree(long[] threads, int threadNum);

    public static native int HcommChannelDrainOnThread(long thread, long channel);
}
