package org.apache.spark.shuffle.hcomm.internal.channels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.PeerSpec;
import org.junit.jupiter.api.Test;

/** Both ends of a stage attempt's channel name it alike and take opposite roles, from the two ids alone. */
class RosterTest {
    private static Messages.Peer peer(String id, int port) {
        return new Messages.Peer(id, new byte[] {(byte) port}, port);
    }

    @Test
    void bothEndsAgreeOnTheNameAndTakeOppositeRoles() {
        Roster a = new Roster("10");
        Roster b = new Roster("9");
        a.apply(new Messages.Peers("app1", List.of(peer("9", 900)), List.of()));
        b.apply(new Messages.Peers("app1", List.of(peer("10", 1000)), List.of()));
        StageAttempt s = new StageAttempt(4, 1);
        PeerSpec fromA = a.spec(s, a.peers().get(0), 1000);
        PeerSpec fromB = b.spec(s, b.peers().get(0), 900);
        assertEquals("hsapp1-s4a1-10-9", fromA.channelName(), "the id that sorts first (\"10\") serves");
        assertEquals(fromA.channelName(), fromB.channelName());
        assertTrue(fromA.server());
        assertFalse(fromB.server());
        assertEquals(1000, fromA.port(), "the server listens on its own port");
        assertEquals(1000, fromB.port(), "the client connects to the server's port");
    }

    @Test
    void peersJoinOnceLeaveAndNeverIncludeThisExecutor() {
        Roster r = new Roster("1");
        assertEquals(List.of("2", "3"), r.apply(new Messages.Peers("t", List.of(peer("2", 2), peer("3", 3),
                peer("1", 1)), List.of())).stream().map(Messages.Peer::executorId).toList());
        assertTrue(r.apply(new Messages.Peers("t", List.of(peer("2", 2)), List.of())).isEmpty());
        r.apply(new Messages.Peers("t", List.of(), List.of("2")));
        assertEquals(List.of("3"), r.peers().stream().map(Messages.Peer::executorId).toList());
    }
}
