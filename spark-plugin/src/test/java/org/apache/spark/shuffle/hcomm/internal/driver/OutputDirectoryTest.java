package org.apache.spark.shuffle.hcomm.internal.driver;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.junit.jupiter.api.Test;

/** The driver's directory of published outputs: only registered executors' outputs, gone with them and the shuffle. */
class OutputDirectoryTest {
    private final Set<String> registered = new HashSet<>(Set.of("1", "2"));
    private final OutputDirectory directory = new OutputDirectory(registered::contains);

    private static Messages.Published output(int shuffleId, long mapId, String executorId) {
        return new Messages.Published(shuffleId, mapId, executorId, 4096 * mapId, 4096 * mapId + 64, 3);
    }

    /** The shuffle's map ids, sorted. */
    private long[] mapIds(int shuffleId) {
        long[] ids = directory.lookup(shuffleId).mapIds();
        Arrays.sort(ids);
        return ids;
    }

    @Test
    void recordsOnlyRegisteredExecutorsOutputs() {
        directory.published(output(0, 1, "1"));
        directory.published(output(0, 2, "3"));
        directory.published(output(0, 3, "3"));
        assertArrayEquals(new long[] {1}, mapIds(0));
        Messages.ShuffleLocations l = directory.lookup(0);
        assertEquals("1", l.executorIds()[0]);
        assertEquals(4096 + 64, l.dataAddresses()[0]);
        assertEquals(3, l.numPartitions()[0]);
        assertEquals(0, directory.lookup(7).mapIds().length);
    }

    @Test
    void aRemovedExecutorsOutputsGoWithIt() {
        directory.published(output(0, 1, "1"));
        directory.published(output(0, 2, "2"));
        directory.published(output(1, 3, "2"));
        directory.executorRemoved("2");
        assertArrayEquals(new long[] {1}, mapIds(0));
        assertArrayEquals(new long[] {}, mapIds(1));
    }

    @Test
    void movedOutputsAreRecordedUnlessTheirExecutorOrShuffleWent() {
        directory.published(output(0, 1, "1"));
        directory.moved("2", 0, List.of(output(0, 2, "2")));
        assertArrayEquals(new long[] {1, 2}, mapIds(0));
        directory.shuffleRemoved(5);
        directory.moved("2", 5, List.of(output(5, 2, "2"))); // the answer came after the shuffle's removal
        assertArrayEquals(new long[] {}, mapIds(5));
        registered.remove("2");
        directory.moved("2", 0, List.of(output(0, 3, "2")));
        assertArrayEquals(new long[] {1, 2}, mapIds(0));
    }

    @Test
    void aRemovedShuffleHasNoOutputs() {
        directory.published(output(0, 1, "1"));
        directory.shuffleRemoved(0);
        assertArrayEquals(new long[] {}, mapIds(0));
    }

    /**
     * Every map task of a shuffle may run before any communicator formed, so none of its outputs was published at
     * commit: the outputs its owner publishes when a reader asks are the first the directory has of the shuffle, and
     * are recorded (they were dropped once, and a reduce under fallback `never` then failed: "map outputs not
     * published for one-sided reads").
     */
    @Test
    void lateOutputsOfAShuffleWithNoOutputYetAreRecorded() {
        directory.moved("1", 3, List.of(output(3, 7, "1"), output(3, 8, "1")));
        assertArrayEquals(new long[] {7, 8}, mapIds(3));
    }
}
