package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/**
 * {@code HcommMemAlloc} / {@code HcommMemFree}, JNA direct mapping, bound for soft HComm only: there they allocate
 * shareable host memory (memfd) that peers on the host map; on CANN they reserve device HBM (docs/HCOMM_ABI.md §3.2),
 * which the plugin never uses (it maps host memory itself), so a CANN install need not export them.
 */
public final class HcommAllocLibrary {
    private HcommAllocLibrary() {}

    public static native int HcommMemAlloc(PointerByReference ptr, long size);

    public static native int HcommMemFree(Pointer ptr);
}
