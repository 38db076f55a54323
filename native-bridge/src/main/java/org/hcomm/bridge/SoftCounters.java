package org.hcomm.bridge;

/**
 * Live soft HComm objects of this process ({@code HcommSoftGetCounters}), for leak checks, plus byte counters.
 *
 * @param bytesServed bytes this process's soft NIC sent to TCP readers
 * @param bytesRead bytes this process read, all paths
 * @param opsRunByWaiter reads that a completion wait ran itself because the thread's worker had not started them
 *     (the worker was not scheduled yet; on a busy host this is the wake-up the wait saved)
 * @param comms live communicators
 * @param deviceBytes live soft device memory (HCCL buffers)
 * @param h2dBytes bytes copied host to device; {@code d2hBytes} device to host
 * @param notifies channel notifies this process recorded
 * @param events live ACL events
 * @param hostBytes live pinned host memory ({@code aclrtMallocHost})
 */
public record SoftCounters(long endpoints, long regions, long allocations, long imports, long channels,
        long threads, long bytesServed, long bytesRead, long opsRunByWaiter, long comms, long deviceBytes,
        long h2dBytes, long d2hBytes, long notifies, long events, long hostBytes) {

    /**
     * True when no endpoint, region, allocation, import, channel, thread, communicator, device memory, ACL event or
     * pinned host memory is alive.
     */
    public boolean noLiveObjects() {
        return endpoints == 0 && regions == 0 && allocations == 0 && imports == 0 && channels == 0 && threads == 0
                && comms == 0 && deviceBytes == 0 && events == 0 && hostBytes == 0;
    }
}
