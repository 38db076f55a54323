package org.hcomm.bridge.raw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.jna.Pointer;
import org.junit.jupiter.api.Test;

/** {@link HcclCommConfig#init()} writes the bytes CANN's {@code HcclCommConfigInit} writes, field by field. */
class HcclCommConfigTest {
    @Test
    void initLeavesTheChannelSqDepthUnsetAsCannDoes() {
        HcclCommConfig c = new HcclCommConfig().init();
        c.write();
        Pointer p = c.getPointer();
        assertEquals(HcclCommConfig.SIZE, c.size());
        assertEquals(2240, c.offsetOf("hcclChannelSqDepth"), "offsetof(HcclCommConfig, hcclChannelSqDepth)");
        // HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET (hccl_types.h): 0xffffffff, not 0
        assertEquals(0xFFFFFFFF, p.getInt(2240));
        assertEquals(HcclCommConfig.SIZE, p.getLong(0), "size");
        assertEquals(HcclCommConfig.MAGIC_WORD, p.getInt(8), "magicWord");
        assertEquals(HcclCommConfig.VERSION, p.getInt(12), "version");
        assertEquals(0xFFFFFFFF, p.getInt(24), "hcclBufferSize not set");
    }
}
