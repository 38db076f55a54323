package org.hcomm.bridge.raw;

/**
 * The functions of the {@code nbiFence} read strategy (docs/HCOMM_ABI.md §3.6, §4.3), JNA direct mapping, bound apart
 * from {@link HcommLibrary} by {@code Native.register(HcommNbiLibrary.class, lib)}.
 */
public final class HcommNbiLibrary {
    private HcommNbiLibrary() {}

    public static native int HcommReadNbi(long channel, long dst, long src, long len);

    public static native int HcommChannelFence(long channel);
}
