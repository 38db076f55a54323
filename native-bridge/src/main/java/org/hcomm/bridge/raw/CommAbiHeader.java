package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;

/** {@code CommAbiHeader}: 16 bytes, align 4 (docs/HCOMM_ABI.md §2.4). */
@FieldOrder({"version", "magicWord", "size", "reserved"})
public class CommAbiHeader extends AbiStruct {
    public static final int SIZE = 16;

    public int version;
    public int magicWord;
    public int size;
    public int reserved;
}
