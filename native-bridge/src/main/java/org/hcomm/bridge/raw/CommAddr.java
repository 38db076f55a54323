package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;
import java.util.Map;

/**
 * {@code CommAddr}: 40 bytes, align 4 (docs/HCOMM_ABI.md §2.5). The anonymous union is the byte block {@link #raws};
 * {@code addr} ({@code struct in_addr}, network byte order), {@code addr6}, {@code id} and {@code eid} all start at
 * its first byte.
 */
@FieldOrder({"type", "raws"})
public class CommAddr extends AbiStruct {
    public static final int SIZE = 40;
    public static final int RAWS_LEN = 36;

    private static final Map<String, UnionMember> UNION = Map.of(
            "addr", new UnionMember("raws", 0),
            "addr6", new UnionMember("raws", 0),
            "id", new UnionMember("raws", 0),
            "eid", new UnionMember("raws", 0));

    /** CommAddrType. */
    public int type;
    public byte[] raws = new byte[RAWS_LEN];

    @Override
    protected Map<String, UnionMember> unionMembers() {
        return UNION;
    }
}
