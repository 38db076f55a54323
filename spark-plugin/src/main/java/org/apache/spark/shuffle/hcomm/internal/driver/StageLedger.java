package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageEnd;

/**
 * The driver's ledger of stage attempts: which executors were told to create their ends of each running attempt's
 * channels (its mesh), which attempts ended and how many destroy reports each end is to bring, and what the executors
 * reported of them. It decides whom to tell; {@link DriverState} tells them. Not thread-safe: guarded by the driver
 * state's lock (the order of a report against a stage end depends on that one lock).
 */
final class StageLedger {
    /** Stage attempts remembered after their end (so late provisioning does not recreate channels): bounded. */
    private static final int ENDED_KEPT = 4096;

    private static final class Mesh {
        final Set<String> members = new LinkedHashSet<>();
        long registrationsSeen = -1; // the registration count when the mesh was last extended
    }

    private final Map<StageAttempt, Mesh> running = new HashMap<>();
    /** Ended stage attempt → destroy reports its end is to bring (see {@link #destroyCallsExpected}). */
    private final Map<StageAttempt, Integer> ended = boundedMap();
    private final Map<StageAttempt, StageEnd> reportedEnds = boundedMap();

    /** A map that keeps its {@link #ENDED_KEPT} latest entries. */
    static <K, V> Map<K, V> boundedMap() {
        return new LinkedHashMap<>(64, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > ENDED_KEPT;
            }
        };
    }

    boolean ended(StageAttempt stage) {
        return ended.containsKey(stage);
    }

    /**
     * The executors of {@code registered} to tell to provision {@code stage} (those not yet in its mesh, now counted
     * in it); none once it ended, and none without asking any when nobody registered since the mesh was last
     * extended ({@code registrations}: executors registered so far), so every EnsureStage after the first is O(1).
     */
    List<String> provision(StageAttempt stage, Iterable<String> registered, long registrations) {
        if (ended(stage)) {
            return List.of();
        }
        Mesh mesh = running.computeIfAbsent(stage, k -> new Mesh());
        if (mesh.registrationsSeen == registrations) {
            return List.of();
        }
        mesh.registrationsSeen = registrations;
        List<String> tell = new ArrayList<>();
        for (String id : registered) {
            if (mesh.members.add(id)) {
                tell.add(id);
            }
        }
        return tell;
    }

    /**
     * An executor registered, the {@code registrations}-th: the running attempts it is to provision (it joins each
     * mesh); a mesh that was whole before it stays known as whole.
     */
    List<StageAttempt> joined(String executorId, long registrations) {
        List<StageAttempt> tell = new ArrayList<>();
        running.forEach((stage, mesh) -> {
            if (mesh.members.add(executorId)) {
                tell.add(stage);
            }
            if (mesh.registrationsSeen == registrations - 1) {
                mesh.registrationsSeen = registrations;
            }
        });
        return tell;
    }

    /**
     * A communicator formed: every member reads in a new one whose stage channels know no running attempt, so each
     * running attempt's mesh is forgotten; returns them, to be provisioned again.
     */
    List<StageAttempt> forgetMeshes() {
        for (Mesh mesh : running.values()) {
            mesh.members.clear();
            mesh.registrationsSeen = -1;
        }
        return new ArrayList<>(running.keySet());
    }

    /**
     * Ends a stage attempt: returns the members of its mesh that are still {@code live}, to be told, or null when it
     * had ended already. Each live member of a mesh of two or more holds channel ends and reports their destroy; one
     * alone holds none (an executor removed since is not waited for).
     */
    List<String> end(StageAttempt stage, Predicate<String> live) {
        if (ended(stage)) {
            return null;
        }
        Mesh mesh = running.remove(stage);
        List<String> tell = new ArrayList<>();
        if (mesh != null) {
            for (String id : mesh.members) {
                if (live.test(id)) {
                    tell.add(id);
                }
            }
        }
        ended.put(stage, mesh != null && mesh.members.size() > 1 ? tell.size() : 0);
        return tell;
    }

    /** An executor's report of what it destroyed at a stage attempt's end. */
    void reported(StageAttempt stage, StageEnd end) {
        reportedEnds.merge(stage, end, StageEnd::plus);
    }

    /** The destroy reports a stage attempt's end is to bring, or -1 while it has not ended (or is forgotten). */
    int destroyCallsExpected(StageAttempt stage) {
        return ended.getOrDefault(stage, -1);
    }

    /** What the executors reported destroyed at a stage attempt's end, so far. */
    StageEnd reportedEnd(StageAttempt stage) {
        return reportedEnds.getOrDefault(stage, StageEnd.NOTHING);
    }
}
