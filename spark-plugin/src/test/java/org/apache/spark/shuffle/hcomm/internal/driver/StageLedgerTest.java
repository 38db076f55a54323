package org.apache.spark.shuffle.hcomm.internal.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageEnd;
import org.junit.jupiter.api.Test;

/** Whom the driver tells to provision and end a stage attempt's channels, and what the end is to bring. */
class StageLedgerTest {
    private static final StageAttempt S1 = new StageAttempt(1, 0);
    private static final StageAttempt S2 = new StageAttempt(2, 0);

    @Test
    void eachExecutorIsToldOnceAndAWholeMeshIsNotAskedAgain() {
        StageLedger l = new StageLedger();
        assertEquals(List.of("1", "2"), l.provision(S1, List.of("1", "2"), 2));
        assertEquals(List.of(), l.provision(S1, List.of("1", "2"), 2), "nobody registered since");
        assertEquals(List.of(S1), l.joined("3", 3), "a newcomer joins the running attempt");
        assertEquals(List.of(), l.provision(S1, List.of("1", "2", "3"), 3), "the mesh stayed whole");
        assertEquals(List.of("3"), l.provision(S2, List.of("3"), 3));
        assertEquals(List.of("1", "2"), l.provision(S2, List.of("1", "2", "3"), 4), "extended when it moved");
    }

    @Test
    void anEndedAttemptIsNeverProvisionedAgainAndWaitsForItsLiveMembersOnly() {
        StageLedger l = new StageLedger();
        assertEquals(-1, l.destroyCallsExpected(S1), "not ended yet");
        l.provision(S1, List.of("1", "2", "3"), 3);
        assertEquals(List.of("1", "3"), l.end(S1, Set.of("1", "3")::contains), "executor 2 was removed");
        assertEquals(2, l.destroyCallsExpected(S1));
        assertTrue(l.ended(S1));
        assertNull(l.end(S1, id -> true), "ended once");
        assertEquals(List.of(), l.provision(S1, List.of("1", "2", "3"), 4), "a late EnsureStage recreates nothing");
        assertEquals(List.of(), l.joined("4", 5), "nor does a newcomer");
    }

    @Test
    void aMeshOfOneHoldsNoChannelsSoItsEndBringsNoReport() {
        StageLedger l = new StageLedger();
        l.provision(S1, List.of("1"), 1);
        assertEquals(List.of("1"), l.end(S1, id -> true));
        assertEquals(0, l.destroyCallsExpected(S1));
        assertEquals(List.of(), l.end(S2, id -> true), "an attempt never provisioned ends with nobody to tell");
        assertEquals(0, l.destroyCallsExpected(S2));
    }

    @Test
    void aFormedCommunicatorForgetsTheMeshesSoEveryRunningAttemptIsProvisionedAgain() {
        StageLedger l = new StageLedger();
        l.provision(S1, List.of("1", "2"), 2);
        l.provision(S2, List.of("1", "2"), 2);
        l.end(S2, id -> true);
        assertEquals(List.of(S1), l.forgetMeshes(), "ended attempts are not running");
        assertEquals(List.of("1", "2"), l.provision(S1, List.of("1", "2"), 2));
    }

    @Test
    void reportsOfAnEndAddUp() {
        StageLedger l = new StageLedger();
        assertEquals(StageEnd.NOTHING, l.reportedEnd(S1));
        l.reported(S1, new StageEnd(1, 3));
        l.reported(S1, new StageEnd(1, 2));
        assertEquals(2, l.reportedEnd(S1).destroyCalls());
        assertEquals(5, l.reportedEnd(S1).channelsDestroyed());
    }
}
