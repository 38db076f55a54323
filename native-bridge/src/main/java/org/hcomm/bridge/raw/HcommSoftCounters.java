package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;

/**
 * {@code HcommSoftCounters} (soft HComm only, {@code hcomm_soft.h}): 72 bytes. Versioned by size: set
 * {@link #size} to {@link #SIZE} before calling {@code HcommSoftGetCounters}.
 */
@FieldOrder({"size", "reserved", "endpoints", "regions", "allocations", "imports", "channels", "threads",
        "bytesServed", "bytesRead"})
public class HcommSoftCounters extends AbiStruct {
    public static final int SIZE = 72;

    public int size;
    public int reserved;
    public long endpoints;
    public long regions;
    public long allocations;
    public long imports;
    public long channels;
    public long threads;
    public long bytesServed;
    public long bytesRead;
}
