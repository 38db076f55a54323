package org.apache.spark.shuffle.hcomm.internal.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The driver's NPU per executor: Spark's resource when it named one, else the lowest logical id free on the host. */
class NpuAssignmentTest {
    private final NpuAssignment devices = new NpuAssignment();

    private CommunicatorFormer.Member member(String id, String host) {
        return new CommunicatorFormer.Member(id, host, null, devices.device(id));
    }

    @Test
    void executorsOnOneHostGetTheLowestFreeIdsAndHostsCountApart() {
        assertEquals(0, devices.register("1", "a", -1));
        assertEquals(1, devices.register("2", "a", -1));
        assertEquals(0, devices.register("3", "b", -1));
        assertEquals(2, devices.register("4", "a", -1));
        assertNull(NpuAssignment.conflict(List.of(member("1", "a"), member("2", "a"), member("3", "b"),
                member("4", "a"))));
    }

    @Test
    void anIdIsKeptWhileRegisteredAndFreedWhenTheExecutorIsRemoved() {
        devices.register("1", "a", -1);
        devices.register("2", "a", -1);
        devices.register("3", "a", -1);
        assertEquals(1, devices.device("2"));
        devices.remove("2");
        assertEquals(-1, devices.device("2"));
        assertEquals(0, devices.device("1")); // the others keep theirs (a new communicator epoch changes nothing)
        assertEquals(2, devices.device("3"));
        assertEquals(1, devices.register("5", "a", -1)); // the replacement takes the freed one
        assertEquals(3, devices.register("6", "a", -1));
    }

    @Test
    void sparksResourceIsUsedAsItIsAndTheDriverAssignsAroundIt() {
        assertEquals(3, devices.register("1", "a", 3));
        assertEquals(0, devices.register("2", "a", -1));
        assertEquals(5, devices.register("3", "a", 5));
        assertEquals(1, devices.register("4", "a", -1));
        assertEquals(0, devices.register("2", "a", -1)); // registering again keeps the lowest free one
    }

    @Test
    void twoExecutorsOnOneHostWithTheSameNpuAreRefusedNamingTheSetting() {
        devices.register("1", "a", 2);
        devices.register("2", "a", 2);
        devices.register("3", "b", 2);
        String why = NpuAssignment.conflict(List.of(member("1", "a"), member("3", "b"), member("2", "a")));
        assertTrue(why.contains("executors 1 and 2 on host a both use NPU 2"), why);
        assertTrue(why.contains("spark.shuffle.hcomm.communicator.resource"), why);
        assertNull(NpuAssignment.conflict(List.of(member("1", "a"), member("3", "b"))));
    }
}
