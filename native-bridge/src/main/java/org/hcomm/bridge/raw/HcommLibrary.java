package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The HComm functions every read strategy needs (endpoints, memory, channels), JNA <em>direct mapping</em>: one
 * {@code public static native} method per C function of {@code hcomm_res.h} and {@code hcomm_channel.h} that both
 * {@code libhcomm.so} and soft HComm export. The functions of one read strategy are bound apart
 * ({@link HcommOnThreadLibrary}, {@link HcommNbiLibrary}), so that an install lacking one strategy's symbols still
 * serves the other; {@link HcommSymbol} lists them all. Nothing is bound until the loader calls
 * {@code Native.register(HcommLibrary.class, lib)}, which fails on the first missing symbol; calling a method
 * before that throws {@link UnsatisfiedLinkError}.
 *
 * <p>Type mapping (docs/HCOMM_ABI.md §2.1, §7): {@code EndpointHandle}/{@code HcommMemHandle} = {@link Pointer};
 * {@code ChannelHandle}/{@code ThreadHandle} = {@code long}; handle arrays = {@code long[]}; {@code void**} =
 * {@link PointerByReference}; {@code uint32_t*} = {@link IntByReference} or {@code int[]}; unsigned values travel in
 * the signed Java type of the same width. On the data path, {@code dst}/{@code src} are raw addresses as
 * {@code long} (the cheapest direct-mapped argument). Arrays of structs ({@code HcommChannelDesc* descs}) are
 * passed as the {@link Pointer} to the first of {@code n} contiguous, already written structs.
 *
 * <p>No logic and no checks: see {@code org.hcomm.bridge} for the checked facade.
 */
public final class HcommLibrary {
    private HcommLibrary() {}

    // ---- endpoints (hcomm_res.h) ----
    public static native int HcommEndpointCreate(EndpointDesc endpoint, PointerByReference endpointHandle);

    public static native int HcommEndpointDestroy(Pointer endpointHandle);

    public static native int HcommEndpointGetListenPort(Pointer endpointHandle, IntByReference port);

    // ---- memory ----
    public static native int HcommMemReg(Pointer endpointHandle, String memTag, CommMem mem,
            PointerByReference memHandle);

    public static native int HcommMemUnreg(Pointer endpointHandle, Pointer memHandle);

    public static native int HcommMemExport(Pointer endpointHandle, Pointer memHandle, PointerByReference memDesc,
            IntByReference memDescLen);

    public static native int HcommMemImport(Pointer endpointHandle, byte[] memDesc, int descLen, CommMem outMem);

    public static native int HcommMemUnimport(Pointer endpointHandle, byte[] memDesc, int descLen);

    // ---- channels (hcomm_channel.h) ----
    public static native int HcommChannelCreate(Pointer endpointHandle, int engine, Pointer channelDescs,
            int channelNum, long[] channels);

    public static native int HcommChannelGetStatus(long[] channelList, int listNum, int[] statusList);

    public static native int HcommChannelDestroy(long[] channels, int channelNum);
}
