package org.hcomm.shuffle.benchmarks.scale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * What forming one communicator costs the driver in asks, as the report quotes it (1 + 2N): the model's count and the
 * REAL former's, against simulated members.
 */
class FormingAsksTest {
    @Test
    void theModelCountsTheRootInfoTheJoinsAndTheReadyAsks() throws Exception {
        CommunicatorModel.Row r = CommunicatorModel.row(16, CommunicatorModel.Params.defaults());
        assertEquals(1 + 2 * 16, r.asks());
        assertEquals(1 + 2 * 16, r.replies());
    }

    @Test
    void theRealFormerAsksForTheRootInfoEveryJoinThenEveryReady() throws Exception {
        FormerSim.FormRow r = FormerSim.run(4, 5000);
        assertTrue(r.formed(), r.why());
        assertEquals(4, r.joinsAsked());
        assertEquals(4, r.outcomesAsked(), "one CommunicatorReady ask to every member");
        assertEquals(1 + 2 * 4, r.asks());
    }
}
