package org.hcomm.bridge.raw;

import com.sun.jna.Structure.FieldOrder;

/**
 * {@code HcommSoftCounters} (soft HComm only, {@code hcomm_soft.h}): 136 bytes. Versioned by size: set
 * {@link #size} to {@link #SIZE} before calling {@code HcommSoftGetCounters}.
 */
@FieldOrder({"size", "reserved", "endpoints", "regions", "allocations", "imports", "channels", "threads",
        "bytesServed", "bytesRead", "opsRunByWaiter", "comms", "deviceBytes", "h2dBytes", "d2hBytes", "notifies",
        "events", "hostBytes"})
public class HcommSoftCounters extends AbiStruct {
    public static final int SIZE = 136;

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
    public long opsRunByWaiter;
    /** Live communicators. */
    public long comms;
    /** Live soft device memory (the communicators' HCCL buffers). */
    public long deviceBytes;
    public long h2dBytes;
    public long d2hBytes;
    /** Channel notifies this process recorded. */
    public long notifies;
    /** Live ACL events ({@code aclrtCreateEvent}, not yet destroyed). */
    public long events;
    /** Live pinned host memory ({@code aclrtMallocHost}, not yet freed). */
    public long hostBytes;
}
