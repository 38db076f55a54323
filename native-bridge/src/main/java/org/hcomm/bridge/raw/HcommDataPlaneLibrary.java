package org.hcomm.bridge.raw;

/**
 * Batch mode and {@code HcommReadOnThread} ({@code hcomm_primitives.h}), which the {@code onThread} strategy and the
 * communicator path both use; JNA direct mapping, bound apart from the thread allocation of the endpoint path.
 */
public final class HcommDataPlaneLibrary {
    private HcommDataPlaneLibrary() {}

    public static native int HcommBatchModeStart(String batchTag);

    public static native int HcommBatchModeEnd(String batchTag);

    public static native int HcommReadOnThread(long thread, long channel, long dst, long src, long len);
}
