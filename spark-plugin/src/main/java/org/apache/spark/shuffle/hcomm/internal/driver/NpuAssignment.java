package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;

/**
 * Which NPU (logical id, as {@code aclrtSetDevice} takes it) each executor on the communicator path uses. An executor
 * Spark's resource scheduler gave an NPU ({@link HcommConf#COMMUNICATOR_RESOURCE}) uses that one; any other gets the
 * lowest id no other executor on its host holds. An executor keeps its id while it is registered (across
 * communicator epochs) and frees it when it is removed. HCCL refuses two ranks on one server with the same device
 * ({@code HCCL_E_PARA}), so {@link #conflict} names such a pair, and the setting that fixes it, before a
 * forming asks anyone. Not thread-safe: used under its {@link DriverState}'s lock.
 */
final class NpuAssignment {
    private record Holder(String host, int device) {
    }

    private final Map<String, Holder> byExecutor = new HashMap<>();

    /**
     * Records the executor's NPU and returns it: {@code requested} when Spark named one (&ge; 0), else the lowest id
     * free on {@code host}. Registering again (the same executor id) first frees what it held.
     */
    int register(String executorId, String host, int requested) {
        byExecutor.remove(executorId);
        int device = requested;
        if (device < 0) {
            BitSet used = new BitSet();
            byExecutor.values().stream().filter(h -> h.host().equals(host)).forEach(h -> used.set(h.device()));
            device = used.nextClearBit(0);
        }
        byExecutor.put(executorId, new Holder(host, device));
        return device;
    }

    /** The executor's NPU, or {@link Messages.RegisterExecutor#NO_DEVICE} when it holds none. */
    int device(String executorId) {
        Holder h = byExecutor.get(executorId);
        return h == null ? Messages.RegisterExecutor.NO_DEVICE : h.device();
    }

    /** Frees the executor's NPU (it was removed). */
    void remove(String executorId) {
        byExecutor.remove(executorId);
    }

    /**
     * Why these members cannot form one communicator because two of them on one host use the same NPU, or null when
     * each has its own.
     */
    static String conflict(List<CommunicatorFormer.Member> members) {
        Map<String, String> seen = new HashMap<>(); // host and device → the first member holding it
        for (CommunicatorFormer.Member m : members) {
            String other = seen.putIfAbsent(m.host() + "\u0000" + m.device(), m.executorId());
            if (other != null) {
                return "executors " + other + " and " + m.executorId() + " on host " + m.host() + " both use NPU "
                        + m.device() + ", and HCCL refuses two ranks on one device: give each executor its own NPU "
                        + "with " + HcommConf.COMMUNICATOR_RESOURCE.key() + " (the name of the resource Spark "
                        + "assigns, e.g. npu, with spark.executor.resource.npu.amount=1 and a discovery script "
                        + "giving distinct addresses)";
            }
        }
        return null;
    }
}
