package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The HComm functions, JNA <em>direct mapping</em>: one {@code public static native} method per C function of
 * {@code hcomm_res.h}, {@code hcomm_channel.h} and {@code hcomm_primitives.h} that both {@code libhcomm.so} and
 * soft HComm export. Nothing is bound until the loader calls {@code Native.register(HcommLibrary.class, lib)};
 * calling a method before that throws {@link UnsatisfiedLinkError}.
 *
 * <p>Type mapping (HCOMM_ABI.md §2.1, §7): {@code EndpointHandle}/{@code HcommMemHandle} = {@link Pointer};
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
    public static native int HcommMemAlloc(PointerByReference ptr, long size);

    public static native int HcommMemFree(Pointer ptr);

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

    // ---- threads ----
    public static native int HcommThreadAlloc(int engine, int threadNum, int[] notifyNumPerThread, long[] threads);

    public static native int HcommThreadFree(long[] threads, int threadNum);

    public static native int HcommThreadResGetInfo(long thread, int resType, int infoLen, PointerByReference info);

    // ---- data plane (hcomm_primitives.h) ----
    public static native int HcommReadOnThread(long thread, long channel, long dst, long src, long len);

    public static native int HcommBatchModeStart(String batchTag);

    public static native int HcommBatchModeEnd(String batchTag);

    public static native int HcommChannelDrainOnThread(long thread, long channel);

    public static native int HcommReadNbi(long channel, long dst, long src, long len);

    public static native int HcommChannelFence(long channel);
}
