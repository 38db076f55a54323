package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;

/** {@code EndpointDesc}: 160 bytes, align 4 (docs/HCOMM_ABI.md §2.7). */
@FieldOrder({"protocol", "commAddr", "loc", "raws"})
public class EndpointDesc extends AbiStruct {
    public static final int SIZE = 160;
    public static final int RAWS_LEN = 52;

    /** CommProtocol. */
    public int protocol;
    public CommAddr commAddr = new CommAddr();
    public EndpointLoc loc = new EndpointLoc();
    public byte[] raws = new byte[RAWS_LEN];

    public EndpointDesc() {
        super();
    }

    public EndpointDesc(Pointer memory) {
        super(memory);
    }
}
