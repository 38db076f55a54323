package org.hcomm.bridge;

/**
 * Live soft HComm objects of this process ({@code HcommSoftGetCounters}), for leak checks, plus byte counters.
 *
 * @param bytesServed bytes this process's soft NIC sent to TCP readers
 * @param bytesRead bytes this process read, all paths
 */
public record SoftCounters(long endpoints, long regions, long allocations, long imports, long channels,
        long threads, long bytesServed, long bytesRead) {

    /** True when no endpoint, region, allocation, import, channel or thread is alive. */
    public boolean noLiveObjects() {
        return endpoints == 0 && regions == 0 && allocations == 0 && imports == 0 && channels == 0 && threads == 0;
    }
}
