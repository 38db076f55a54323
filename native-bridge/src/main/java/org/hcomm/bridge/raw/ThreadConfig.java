package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;

/** {@code ThreadConfig}: 32 bytes, align 4 (docs/HCOMM_ABI.md §2.9). */
@FieldOrder({"header", "notifyNumPerThread", "reserved"})
public class ThreadConfig extends AbiStruct {
    public static final int SIZE = 32;

    public CommAbiHeader header = new CommAbiHeader();
    /** uint16. */
    public short notifyNumPerThread;
    public byte[] reserved = new byte[14];
}
