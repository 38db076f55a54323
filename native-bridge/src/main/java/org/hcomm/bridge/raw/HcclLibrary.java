package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The HCCL communicator path of {@code libhcomm.so} (Atlas A2/A3; docs/COMMUNICATOR.md): communicators, their
 * threads, channels and HCCL buffers, and the channel notifies. JNA direct mapping, bound apart
 * ({@code Native.register(HcclLibrary.class, lib)}) so that an install without it still serves the endpoint path,
 * and one without the endpoint API (CANN 8.5) still serves this one. The data-plane reads and batch mode are
 * {@link HcommOnThreadLibrary}'s.
 */
public final class HcclLibrary {
    private HcclLibrary() {}

    /** {@code rootInfo}: 4,108 bytes ({@code HcclRootInfo}). */
    public static native int HcclGetRootInfo(Pointer rootInfo);

    public static native int HcclCommInitRootInfoConfig(int nRanks, Pointer rootInfo, int rank, HcclCommConfig config,
            PointerByReference comm);

    public static native int HcclCommDestroy(Pointer comm);

    public static native int HcclGetRankId(Pointer comm, IntByReference rank);

    public static native int HcclGetRankSize(Pointer comm, IntByReference rankSize);

    /** {@code commName}: at least {@code HCCL_COMM_NAME_MAX_LENGTH} (128) bytes; NUL-terminated on return. */
    public static native int HcclGetCommName(Pointer comm, Pointer commName);

    public static native int HcclThreadAcquireWithStream(Pointer comm, int engine, Pointer stream, int notifyNum,
            long[] thread);

    /** {@code channelDescs}: {@code channelNum} contiguous {@link HcclChannelDesc}s. */
    public static native int HcclChannelAcquire(Pointer comm, int engine, Pointer channelDescs, int channelNum,
            long[] channels);

    public static native int HcclGetHcclBuffer(Pointer comm, PointerByReference buffer, LongByReference size);

    public static native int HcclChannelGetHcclBuffer(Pointer comm, long channel, PointerByReference buffer,
            LongByReference size);

    public static native int HcommChannelNotifyRecordOnThread(long thread, long channel, int remoteNotifyIdx);

    /** {@code timeOut} in seconds (CANN's headers; one web page says milliseconds). */
    public static native int HcommChannelNotifyWaitOnThread(long thread, long channel, int localNotifyIdx,
            int timeOut);
}
