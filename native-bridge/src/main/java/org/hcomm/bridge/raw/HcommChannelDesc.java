package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;
import java.util.Map;

/**
 * {@code HcommChannelDesc}, ABI v4: 360 bytes, align 8 (docs/HCOMM_ABI.md §2.10).
 *
 * <p>The 128-byte anonymous union at offset 216 is {@link #roceAttr} (32 bytes) followed by {@link #rawsTail}
 * (96 bytes); {@code raws}, {@code hccsAttr.qos}, {@code ubAttr.sqDepth} and {@code ubMemAttr.pathMode} all start at
 * the union's first byte. {@code bool exchangeAllMems} is a {@code byte}; {@code uint16_t port} a {@code short}.
 */
@FieldOrder({"header", "remoteEndpoint", "notifyNum", "exchangeAllMems", "memHandles", "memHandleNum", "socket",
        "role", "port", "roceAttr", "rawsTail", "qos", "channelName"})
public class HcommChannelDesc extends AbiStruct {
    public static final int SIZE = 360;
    public static final int UNION_LEN = 128;

    private static final Map<String, UnionMember> UNION = Map.of(
            "raws", new UnionMember("roceAttr", 0),
            "hccsAttr.qos", new UnionMember("roceAttr", 0),
            "ubAttr.sqDepth", new UnionMember("roceAttr", 0),
            "ubMemAttr.pathMode", new UnionMember("roceAttr", 0));

    public CommAbiHeader header = new CommAbiHeader();
    public EndpointDesc remoteEndpoint = new EndpointDesc();
    public int notifyNum;
    /** bool. */
    public byte exchangeAllMems;
    /** {@code HcommMemHandle*}, used when exchangeAllMems is false. */
    public Pointer memHandles;
    public int memHandleNum;
    /** HcommSocket or NULL. */
    public Pointer socket;
    /** HcommSocketRole. */
    public int role;
    /** uint16: listen port (SERVER) / target port (CLIENT); 0 means 60001. */
    public short port;
    public HcommRoceAttr roceAttr = new HcommRoceAttr();
    public byte[] rawsTail = new byte[UNION_LEN - HcommRoceAttr.SIZE];
    /** uint32, 0xFFFFFFFF = not set (v2+). */
    public int qos;
    /** {@code const char*} (v3+), must match on both ends; NULL = anonymous channel. */
    public Pointer channelName;

    public HcommChannelDesc() {
        super();
    }

    public HcommChannelDesc(Pointer memory) {
        super(memory);
    }

    @Override
    protected Map<String, UnionMember> unionMembers() {
        return UNION;
    }
}
