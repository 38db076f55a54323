package org.hcomm.bridge.raw;

import com.sun.jna.Pointer;
import com.sun.jna.Structure.FieldOrder;

/** The {@code roceAttr} member of the {@code HcommChannelDesc} union: 32 bytes, align 8 (docs/HCOMM_ABI.md §2.10). */
@FieldOrder({"queueNum", "retryCnt", "retryInterval", "tc", "sl", "qpThreshold", "cqAttrFlags", "srcPortList"})
public class HcommRoceAttr extends AbiStruct {
    public static final int SIZE = 32;

    public int queueNum;
    public int retryCnt;
    public int retryInterval;
    /** uint8. */
    public byte tc;
    /** uint8. */
    public byte sl;
    public int qpThreshold;
    public int cqAttrFlags;
    /** {@code uint16_t*}, one UDP source port per QP (v4). */
    public Pointer srcPortList;
}
