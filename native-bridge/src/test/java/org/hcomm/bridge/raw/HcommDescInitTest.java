package org.hcomm.bridge.raw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Byte-level defaults of the Java copies of {@code EndpointDescInit} and {@code HcommChannelDescInit}
 * (docs/HCOMM_ABI.md §2.14): the expected images are built here from the documented offsets and values.
 */
class HcommDescInitTest {

    @Test
    void endpointDescInitIsAllOnes() {
        EndpointDesc d = new EndpointDesc();
        d.getPointer().setMemory(0, d.size(), (byte) 0x00); // garbage the helper must overwrite
        HcommDescInit.endpointDescInit(d);
        byte[] expected = new byte[EndpointDesc.SIZE];
        Arrays.fill(expected, (byte) 0xFF); // fill, and protocol/commAddr.type/loc.locType = -1
        assertArrayEquals(expected, d.getPointer().getByteArray(0, d.size()));
        assertEquals(-1, d.protocol);
        assertEquals(-1, d.commAddr.type);
        assertEquals(-1, d.loc.locType);
    }

    @Test
    void channelDescInitMatchesTheHeaderHelper() {
        HcommChannelDesc d = new HcommChannelDesc();
        d.getPointer().setMemory(0, d.size(), (byte) 0x11);
        HcommDescInit.hcommChannelDescInit(d);
        assertArrayEquals(expectedChannelDesc(), d.getPointer().getByteArray(0, d.size()));
    }

    @Test
    void channelDescInitCoversEveryElementOfAnArray() {
        HcommChannelDesc first = new HcommChannelDesc();
        HcommChannelDesc[] all = (HcommChannelDesc[]) first.toArray(3);
        HcommDescInit.hcommChannelDescInit(all);
        byte[] image = expectedChannelDesc();
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(image, first.getPointer().getByteArray((long) i * HcommChannelDesc.SIZE,
                    HcommChannelDesc.SIZE), "element " + i);
        }
    }

    @Test
    void fieldsSetAfterInitKeepTheFillElsewhere() {
        HcommChannelDesc d = new HcommChannelDesc();
        HcommDescInit.hcommChannelDescInit(d);
        d.port = (short) 60001;
        d.role = HcommAbi.HCOMM_SOCKET_ROLE_SERVER;
        d.exchangeAllMems = 1;
        d.write();
        ByteBuffer b = image(d);
        assertEquals(60001, Short.toUnsignedInt(b.getShort(212)));
        assertEquals(1, b.getInt(208));
        assertEquals(1, b.get(180));
        assertEquals((byte) 0xFF, b.get(181), "padding after exchangeAllMems keeps the 0xFF fill");
        assertEquals((byte) 0xFF, b.get(214), "padding after port keeps the 0xFF fill");
        assertEquals(-1, b.getInt(344), "qos stays unset");
    }

    private static ByteBuffer image(HcommChannelDesc d) {
        return ByteBuffer.wrap(d.getPointer().getByteArray(0, d.size())).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** 0xFF everywhere, then the helper's assignments at the offsets of docs/HCOMM_ABI.md §2.10. */
    private static byte[] expectedChannelDesc() {
        ByteBuffer b = ByteBuffer.allocate(360).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 360; i++) {
            b.put(i, (byte) 0xFF);
        }
        b.putInt(0, 4).putInt(4, 0x0FCF0F0F).putInt(8, 360).putInt(12, 0); // header
        // remoteEndpoint 16..175: EndpointDescInit = all 0xFF
        b.putInt(176, 0); // notifyNum
        b.put(180, (byte) 0); // exchangeAllMems = false
        b.putLong(184, 0); // memHandles = NULL
        b.putInt(192, 0); // memHandleNum
        b.putLong(200, 0); // socket = NULL
        b.putInt(208, -1); // role RESERVED
        b.putShort(212, (short) 0); // port
        b.putLong(240, 0); // roceAttr.srcPortList = NULL
        b.putLong(352, 0); // channelName = NULL
        return b.array();
    }
}
