package org.hcomm.bridge.transport;

/** Native objects alive in this process, as the library counts them (communicators and device memory included). */
public record LiveObjects(long endpoints, long regions, long allocations, long channels, long threads, long comms,
        long deviceBytes) {
    public boolean isEmpty() {
        return endpoints == 0 && regions == 0 && allocations == 0 && channels == 0 && threads == 0 && comms == 0
                && deviceBytes == 0;
    }

    /** What soft HComm counts now; null with another provider (it cannot tell). */
    static LiveObjects current() {
        if (!org.hcomm.bridge.SoftHcomm.isActive()) {
            return null;
        }
        org.hcomm.bridge.SoftCounters c = org.hcomm.bridge.SoftHcomm.counters();
        return new LiveObjects(c.endpoints(), c.regions(), c.allocations(), c.channels(), c.threads(), c.comms(),
                c.deviceBytes());
    }
}
