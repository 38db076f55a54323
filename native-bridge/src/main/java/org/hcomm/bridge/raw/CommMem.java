package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;

/** {@code CommMem}: 24 bytes, align 8 (docs/HCOMM_ABI.md §2.8); 4 bytes of padding follow {@code type}. */
@FieldOrder({"type", "addr", "size"})
public class CommMem extends AbiStruct {
    public static final int SIZE = 24;

    /** CommMemType. */
    public int type;
    public Pointer addr;
    /** uint64. */
    public long size;
}
