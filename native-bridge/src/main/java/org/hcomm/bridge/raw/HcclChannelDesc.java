package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;
import java.util.Arrays;

/**
 * {@code HcclChannelDesc} (v1): 496 bytes, align 8 (docs/HCOMM_ABI.md §2.11). On Atlas A2/A3 a caller fills
 * {@code remoteRank}, {@code channelProtocol} and {@code notifyNum} after {@link #init()}, the Java twin of the
 * header-only {@code HcclChannelDescInit}; the endpoints and memory handles are Atlas 350's.
 */
@FieldOrder({"header", "remoteRank", "channelProtocol", "localEndpoint", "remoteEndpoint", "notifyNum", "memHandles",
        "memHandleNum", "raws"})
public class HcclChannelDesc extends AbiStruct {
    public static final int SIZE = 496;
    public static final int MAGIC_WORD = 0x0F0F0F0F;
    public static final int VERSION = 1;

    public CommAbiHeader header = new CommAbiHeader();
    public int remoteRank;
    /** CommProtocol. */
    public int channelProtocol;
    public EndpointDesc localEndpoint = new EndpointDesc();
    public EndpointDesc remoteEndpoint = new EndpointDesc();
    public int notifyNum;
    /** {@code HcclMemHandle*} (Atlas 350's AIV engine only). */
    public Pointer memHandles;
    public int memHandleNum;
    /** The 128-byte union of raws, roceAttr and ubMemAttr; 0xFF after init (the library's defaults). */
    public byte[] raws = new byte[128];

    public HcclChannelDesc() {
        super();
    }

    public HcclChannelDesc(Pointer memory) {
        super(memory);
    }

    /** {@code HcclChannelDescInit} for one descriptor: 0xFF everywhere, then the header and the documented defaults. */
    public HcclChannelDesc init() {
        header.version = VERSION;
        header.magicWord = MAGIC_WORD;
        header.size = SIZE;
        header.reserved = 0;
        remoteRank = -1;
        channelProtocol = HcommAbi.COMM_PROTOCOL_RESERVED;
        fillReserved(localEndpoint);
        fillReserved(remoteEndpoint);
        notifyNum = 0;
        memHandles = null;
        memHandleNum = 0;
        Arrays.fill(raws, (byte) 0xFF);
        return this;
    }

    private static void fillReserved(EndpointDesc e) {
        e.write();
        e.getPointer().setMemory(0, EndpointDesc.SIZE, (byte) 0xFF);
        e.read();
        e.protocol = HcommAbi.COMM_PROTOCOL_RESERVED;
        e.commAddr.type = -1;
        e.loc.locType = -1;
    }
}
