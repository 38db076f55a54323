package org.hcomm.bridge;

/**
 * Live soft HComm objects of this process ({@code HcommSoftGetCounters}), for leak checks, plus byte counters.
 *
 * @param bytesServed bytes this process's soft NIC sent to TCP readers
 * @param bytesRead bytes this process read, all paths
 * @param opsRunByWaiter reads that a completion wait ran itself because the thread's worker had not started them
 *     (the worker was not scheduled yet; on a busy host this is the wake-up the wait saved)
 */
public record SoftCounters(long endpoints, long regions, long allocations, long imports, long channels,
        long threads, long bytesServed, long bytesRead, long opsRunByWaiter) {

    /** True when no endpoint, region, allocation, import, channel or thread is alive. */
    public boolean noLiveObjects() {
        return endpoints == 0 && regions == 0 && allocations == 0 && imports == 0 && channels == 0 && threads == 0;
    }
}
