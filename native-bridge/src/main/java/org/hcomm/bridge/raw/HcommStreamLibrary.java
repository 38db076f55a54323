package org.hcomm.bridge.raw;

import com.sun.jna.ptr.PointerByReference;

/**
 * {@code HcommThreadResGetInfo}, which only the stream completion of the {@code onThread} strategy needs (the
 * thread's stream for {@link AclRuntime#aclrtSynchronizeStream}); JNA direct mapping, bound apart so that its
 * absence costs nothing else.
 */
public final class HcommStreamLibrary {
    private HcommStreamLibrary() {}

    public static native int HcommThreadResGetInfo(long thread, int resType, int infoLen, PointerByReference info);
}
