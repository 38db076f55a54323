package org.apache.spark.shuffle.hcomm.internal.window;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** How many owners one reduce task reads at once: the receive windows shared out among the executor's task slots. */
class WindowReadsTest {
    @Test
    void everyTaskSlotGetsItsShareOfTheReceiveWindows() {
        assertEquals(16, WindowReads.exchangesPerTask(16, 1, 1));
        assertEquals(4, WindowReads.exchangesPerTask(16, 4, 1));
        assertEquals(5, WindowReads.exchangesPerTask(16, 3, 1), "rounded down: slots x share never exceeds windows");
        assertEquals(8, WindowReads.exchangesPerTask(16, 4, 2), "a task of two cpus takes two cores' share");
    }

    @Test
    void aTaskReadsAtLeastOneOwnerWhenSlotsOutnumberWindows() {
        assertEquals(1, WindowReads.exchangesPerTask(2, 8, 1));
        assertEquals(1, WindowReads.exchangesPerTask(1, 1, 4), "more task cpus than cores is still one slot");
        assertEquals(3, WindowReads.exchangesPerTask(3, 0, 0), "nonsense cores and cpus count as one slot");
    }
}
