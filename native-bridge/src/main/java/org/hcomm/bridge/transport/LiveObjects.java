package org.hcomm.bridge.transport;

/** Native objects alive in this process, as the library counts them. */
public record LiveObjects(long endpoints, long regions, long allocations, long channels, long threads) {
    public boolean isEmpty() {
        return endpoints == 0 && regions == 0 && allocations == 0 && channels == 0 && threads == 0;
    }
}
