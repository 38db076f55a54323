package org.apache.spark.shuffle.hcomm.internal.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The checks an executor makes before its first communicator init: the expansion mode, and the NPU id's range. */
class CommunicatorChecksTest {
    private static final String A2 = "Ascend910B3";
    private static final String A3 = "Ascend910_9391";

    @Test
    void hostExpansionIsUsableOnA2AndHostAloneOnA3AndUnsetOnBoth() {
        for (String soc : new String[] {A2, A3}) {
            assertNull(CommunicatorChecks.expansionMode(null, soc));
            assertNull(CommunicatorChecks.expansionMode("", soc));
            assertNull(CommunicatorChecks.expansionMode("HOST", soc));
        }
        assertNull(CommunicatorChecks.expansionMode("HOST_TS", A2));
        String a3 = CommunicatorChecks.expansionMode("HOST_TS", A3);
        assertTrue(a3.contains("HCCL_OP_EXPANSION_MODE=HOST_TS") && a3.contains("Atlas A2 only")
                && a3.contains("Atlas A3 (SoC " + A3 + ") set it to HOST, or unset it"), a3);
    }

    @Test
    void deviceSideExpansionIsRefusedNamingTheVariableAndTheAllowedValues() {
        for (String mode : new String[] {"AI_CPU", "AICPU_TS", "AICPU_CacheDisable", "AIV", "CCU_MS", "CCU_SCHED"}) {
            String a2 = CommunicatorChecks.expansionMode(mode, A2);
            assertTrue(a2.startsWith("HCCL_OP_EXPANSION_MODE=" + mode + " expands operators on the")
                    && a2.contains("CPU_TS") && a2.endsWith("set it to HOST or HOST_TS, or unset it"), a2);
            String a3 = CommunicatorChecks.expansionMode(mode, A3);
            assertTrue(a3.contains("Atlas A3") && a3.endsWith("set it to HOST, or unset it"), a3);
        }
    }

    @Test
    void anUnknownValueIsRefusedAndValuesAreCaseSensitiveAsInCann() {
        for (String mode : new String[] {"host", "CPU", "HOST "}) {
            String why = CommunicatorChecks.expansionMode(mode, A2);
            assertTrue(why.contains("HCCL_OP_EXPANSION_MODE=" + mode + " is not a value CANN knows")
                    && why.contains("HOST or HOST_TS"), why);
        }
    }

    @Test
    void aDeviceMustBeBelowTheDeviceCount() {
        assertNull(CommunicatorChecks.device(0, 1, false));
        assertNull(CommunicatorChecks.device(7, 8, true));
        assertEquals("NPU 8 is outside the 8 devices this process sees (aclrtGetDeviceCount: logical ids 0 to 7)",
                CommunicatorChecks.device(8, 8, false));
        String assigned = CommunicatorChecks.device(1, 1, true);
        assertTrue(assigned.startsWith("NPU 1 is outside the 1 device this process sees")
                && assigned.contains("the driver assigned it"), assigned);
        assertTrue(CommunicatorChecks.device(-2, 8, false).startsWith("NPU -2 is outside"));
    }

}
