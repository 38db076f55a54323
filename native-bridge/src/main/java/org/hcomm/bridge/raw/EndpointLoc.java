package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;
import java.util.Map;

/**
 * {@code EndpointLoc}: 64 bytes, align 4 (docs/HCOMM_ABI.md §2.6). The anonymous union is {@link #raws}:
 * {@code device.{devPhyId, superDevId, serverIdx, superPodIdx}} at 0/4/8/12 inside it, {@code host.id} at 0.
 */
@FieldOrder({"locType", "raws"})
public class EndpointLoc extends AbiStruct {
    public static final int SIZE = 64;
    public static final int RAWS_LEN = 60;

    private static final Map<String, UnionMember> UNION = Map.of(
            "device.devPhyId", new UnionMember("raws", 0),
            "device.superDevId", new UnionMember("raws", 4),
            "device.serverIdx", new UnionMember("raws", 8),
            "device.superPodIdx", new UnionMember("raws", 12),
            "host.id", new UnionMember("raws", 0));

    /** EndpointLocType. */
    public int locType;
    public byte[] raws = new byte[RAWS_LEN];

    @Override
    protected Map<String, UnionMember> unionMembers() {
        return UNION;
    }
}
