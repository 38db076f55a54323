package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;

/**
 * {@code HcclCommConfig}: 2,248 bytes, align 8 (docs/HCOMM_ABI.md §2.13; the version 11 layout of CANN's master
 * headers). The first 24 bytes are the ABI prefix {@code HcclCommConfigInit} writes ({@code size_t size}, magic,
 * version, reserved). {@link #init()} is that header-only helper in Java: the library reads the fields the
 * version it was built with knows, by the size this struct declares.
 */
@FieldOrder({"size", "magicWord", "version", "reserved", "hcclBufferSize", "hcclDeterministic", "hcclCommName",
        "hcclUdi", "hcclOpExpansionMode", "hcclRdmaTrafficClass", "hcclRdmaServiceLevel", "hcclWorldRankID",
        "hcclJobID", "aclGraphZeroCopyEnable", "hcclExecTimeOut", "hcclAlgo", "hcclRetryEnable", "hcclRetryParams",
        "hcclBufferName", "hcclQos", "hcclSymWinMaxMemSizePerRank", "hcclChannelSqDepth"})
public class HcclCommConfig extends AbiStruct {
    public static final int SIZE = 2248;
    public static final int MAGIC_WORD = 0xF0F0F0F0;
    public static final int VERSION = 11;
    /** {@code HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET} (and the other {@code *_NOT_SET} of {@code hccl_types.h}). */
    public static final int NOT_SET = 0xFFFFFFFF;
    public static final int NAME_MAX = 128;

    /** size_t. */
    public long size;
    public int magicWord;
    public int version;
    public long reserved;
    /** MB; the communicator's HCCL buffer is twice this. */
    public int hcclBufferSize;
    public int hcclDeterministic;
    public byte[] hcclCommName = new byte[NAME_MAX];
    public byte[] hcclUdi = new byte[128];
    public int hcclOpExpansionMode;
    public int hcclRdmaTrafficClass;
    public int hcclRdmaServiceLevel;
    public int hcclWorldRankID;
    public long hcclJobID;
    /** uint8. */
    public byte aclGraphZeroCopyEnable;
    public int hcclExecTimeOut;
    public byte[] hcclAlgo = new byte[1600];
    public byte[] hcclRetryEnable = new byte[50];
    public byte[] hcclRetryParams = new byte[128];
    public byte[] hcclBufferName = new byte[128];
    public int hcclQos;
    /** GB. */
    public long hcclSymWinMaxMemSizePerRank;
    public int hcclChannelSqDepth;

    /** {@code HcclCommConfigInit}: the ABI prefix and every "not set" default of CANN's header. */
    public HcclCommConfig init() {
        size = SIZE;
        magicWord = MAGIC_WORD;
        version = VERSION;
        reserved = 0;
        hcclBufferSize = NOT_SET;
        hcclDeterministic = NOT_SET;
        hcclOpExpansionMode = 0;
        hcclRdmaTrafficClass = NOT_SET;
        hcclRdmaServiceLevel = NOT_SET;
        hcclWorldRankID = 0;
        hcclJobID = 0;
        aclGraphZeroCopyEnable = 0;
        hcclExecTimeOut = NOT_SET;
        hcclQos = NOT_SET;
        hcclSymWinMaxMemSizePerRank = 16;
        hcclChannelSqDepth = NOT_SET; // HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET: the library's own depth
        return this;
    }

    /** Sets {@code hcclCommName} (at most 127 bytes of UTF-8, NUL-terminated). */
    public void commName(String name) {
        byte[] b = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (b.length >= NAME_MAX) {
            throw new IllegalArgumentException("communicator name longer than " + (NAME_MAX - 1) + " bytes: " + name);
        }
        java.util.Arrays.fill(hcclCommName, (byte) 0);
        System.arraycopy(b, 0, hcclCommName, 0, b.length);
    }
}
