package org.hcomm.bridge.raw;

/**
 * Java copies of the header-only init helpers {@code EndpointDescInit} and {@code HcommChannelDescInit}
 * ({@code static inline} in the C headers, exported by no library; defaults in docs/HCOMM_ABI.md §2.14).
 *
 * <p>Like the C helpers they fill the whole struct with 0xFF first, padding included, so every byte a caller does
 * not set keeps the "unset" pattern the library defaults from. Memory and Java fields are left in step (the struct
 * is written), so later field assignments followed by {@code write()} keep the fill.
 */
public final class HcommDescInit {
    private HcommDescInit() {}

    /** {@code EndpointDescInit}: 0xFF fill, then protocol = -1, commAddr.type = -1, loc.locType = -1. */
    public static void endpointDescInit(EndpointDesc... descs) {
        for (EndpointDesc d : descs) {
            d.getPointer().setMemory(0, d.size(), (byte) 0xFF);
            d.read();
            d.protocol = HcommAbi.COMM_PROTOCOL_RESERVED;
            d.commAddr.type = HcommAbi.COMM_ADDR_TYPE_RESERVED;
            d.loc.locType = HcommAbi.ENDPOINT_LOC_TYPE_RESERVED;
            d.write();
        }
    }

    /**
     * {@code HcommChannelDescInit}: 0xFF fill; header {4, 0x0FCF0F0F, 360, 0}; remoteEndpoint via
     * {@link #endpointDescInit}; notifyNum 0; exchangeAllMems false; memHandles NULL; memHandleNum 0; socket NULL;
     * role -1; port 0; roceAttr.srcPortList NULL; channelName NULL. The other roceAttr fields and qos keep 0xFF.
     */
    public static void hcommChannelDescInit(HcommChannelDesc... descs) {
        for (HcommChannelDesc d : descs) {
            d.getPointer().setMemory(0, d.size(), (byte) 0xFF);
            d.read();
            d.header.version = HcommAbi.HCOMM_CHANNEL_VERSION;
            d.header.magicWord = HcommAbi.HCOMM_CHANNEL_MAGIC_WORD;
            d.header.size = d.size();
            d.header.reserved = 0;
            d.write();
            endpointDescInit(d.remoteEndpoint);
            d.notifyNum = 0;
            d.exchangeAllMems = 0;
            d.memHandles = null;
            d.memHandleNum = 0;
            d.socket = null;
            d.role = HcommAbi.HCOMM_SOCKET_ROLE_RESERVED;
            d.port = 0;
            d.roceAttr.srcPortList = null;
            d.channelName = null;
            d.write();
        }
    }
}
