package org.apache.spark.shuffle.hcomm.internal.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.storage.BlockManagerId;
import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.TransportException;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * Which owner a failed batch across several owners names ({@link Blame#blame}): the pure decision,
 * the probes given as the owners that answer (the probe itself is a read on the real library, covered by the Spark
 * suites).
 */
class BlameTest {
    /** A channel as the transport hands it out; only its identity matters here. */
    private record Channel(String peerId) implements PeerChannels.PeerChannel {
        @Override
        public String name() {
            return "to-" + peerId;
        }

        @Override
        public PeerChannels.State state() {
            return PeerChannels.State.READY;
        }

        @Override
        public String failure() {
            return null;
        }

        @Override
        public String path() {
            return "tcp";
        }
    }

    private final Channel toA = new Channel("a");
    private final Channel toB = new Channel("b");
    private final Channel toC = new Channel("c");

    private static MapRead read(Channel channel, long mapId) {
        BlockManagerId owner = BlockManagerId$.MODULE$.apply(channel.peerId(), "host", 7337, Option.empty());
        return new MapRead(owner, false, mapId, (int) mapId, 0, 4, 4096 * mapId, 0, channel, List.of(), null);
    }

    /** Reads of owners a, a, b, c, b: two map outputs of a, two of b, one of c. */
    private final List<MapRead> batch = List.of(read(toA, 1), read(toA, 2), read(toB, 3), read(toC, 4),
            read(toB, 5));

    private final List<MapRead> probed = new ArrayList<>();

    private MapRead blame(TransportException e, Set<Channel> silent) {
        return Blame.blame(e, batch, r -> {
            probed.add(r);
            return !silent.contains((Channel) r.channel());
        });
    }

    private static TransportException failure(PeerChannels.PeerChannel channel) {
        return channel == null ? new TransportException("HcommChannelDrainOnThread", 9, "timeout", null, null)
                : new TransportException("HcommChannelDrainOnThread", 19, "failed", null, channel);
    }

    @Test
    void aFailureNamingItsChannelNamesTheFirstReadOnItWithoutProbing() {
        assertSame(batch.get(2), blame(failure(toB), Set.of(toB)));
        assertSame(batch.get(3), blame(failure(toC), Set.of()));
        assertEquals(List.of(), probed);
    }

    @Test
    void aFailureNamingNoChannelProbesEachOwnerOnceInOrderAndNamesTheFirstSilentOne() {
        MapRead named = blame(failure(null), Set.of(toB, toC));
        assertSame(batch.get(2), named, "b's first map output: the first owner that did not answer");
        assertEquals(List.of(batch.get(0), batch.get(2)), probed, "a, then b; c is not probed after b failed");
    }

    @Test
    void whenEveryOwnerAnswersTheFirstReadIsNamed() {
        assertSame(batch.get(0), blame(failure(null), Set.of()));
        assertEquals(List.of(batch.get(0), batch.get(2), batch.get(3)), probed, "one probe per owner");
    }

    @Test
    void aBatchOfOneOwnerNeedsNoProbe() {
        List<MapRead> onlyB = List.of(read(toB, 3), read(toB, 5));
        MapRead named = Blame.blame(failure(null), onlyB, r -> {
            probed.add(r);
            return false;
        });
        assertSame(onlyB.get(0), named);
        assertEquals(List.of(), probed);
    }
}
