package org.hcomm.bridge.raw;

/**
 * {@code HcommWriteOnThread} ({@code hcomm_primitives.h}): a one-sided write from this rank's HCCL buffer into a
 * peer's over a communicator's channel. JNA direct mapping, bound apart and optional: the read path never writes.
 */
public final class HcclWriteLibrary {
    private HcclWriteLibrary() {}

    public static native int HcommWriteOnThread(long thread, long channel, long dst, long src, long len);
}
