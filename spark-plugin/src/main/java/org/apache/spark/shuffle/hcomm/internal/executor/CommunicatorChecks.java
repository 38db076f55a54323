package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.List;

/**
 * What an executor checks before its first communicator init, as pure functions of what it read: the environment's
 * {@code HCCL_OP_EXPANSION_MODE} against the SoC, and an NPU id against the devices the process sees. Each returns
 * null when the value is usable, else why not, naming the setting and what it allows.
 *
 * <p>Which expansion modes the path can use (docs/COMMUNICATOR.md §8, point 3): CANN parses the variable in
 * {@code ParseOpExpansion} (libochao-huawei/hcomm at 8958adbf,
 * {@code src/legacy/ascend910/platform/common/externalinput.cc:1689-1756}; hicann/hccl at 09300b70,
 * {@code src/common/alg_env_config.cc:839-907}); any other value fails its init with {@code HCCL_E_PARA}.
 * {@code AI_CPU}, {@code AICPU_TS}, {@code AICPU_CacheDisable} and {@code AIV} expand on the device (AI CPU, vector
 * cores), {@code CCU_MS}/{@code CCU_SCHED} on the Atlas 350's CCU; host expansion is {@code HOST} and {@code HOST_TS}
 * on the 910B (A2) only ({@code alg_env_config.cc:1205-1208}), and on the 910_93 (A3) {@code HOST_TS} is ignored with
 * a warning, leaving A3's default, AI CPU expansion ({@code externalinput.cc:1738-1743}).
 * The binding issues its reads from the host on CPU_TS threads, in batch mode, so it needs host expansion: on A2
 * {@code HOST} or {@code HOST_TS}, on A3 {@code HOST}, the one value under which CANN's own code uses CPU_TS on A3.
 * Unset is left to CANN's default for the SoC (on A3 a departure docs/COMMUNICATOR.md §9 lists).
 */
final class CommunicatorChecks {
    /** The environment variable CANN reads the operator expansion mode from. */
    static final String EXPANSION_MODE = "HCCL_OP_EXPANSION_MODE";

    private CommunicatorChecks() {}

    /** The expansion modes the communicator path can use on {@code soc} (an A3 SoC: {@code Ascend910_93*}). */
    static List<String> usableExpansionModes(String soc) {
        return isA3(soc) ? List.of("HOST") : List.of("HOST", "HOST_TS");
    }

    /**
     * Null when the communicator path can run with {@code HCCL_OP_EXPANSION_MODE=value} on {@code soc} (null or empty
     * value: unset), else why not, naming the variable and the values allowed on that SoC.
     */
    static String expansionMode(String value, String soc) {
        List<String> usable = usableExpansionModes(soc);
        if (value == null || value.isEmpty() || usable.contains(value)) {
            return null;
        }
        String why = switch (value) {
            case "AI_CPU", "AICPU_TS", "AICPU_CacheDisable" -> "expands operators on the device's AI CPU";
            case "AIV" -> "expands operators on the device's vector cores";
            case "CCU_MS", "CCU_SCHED" -> "expands operators on the CCU of the Atlas 350 card";
            case "HOST_TS" -> "is host expansion on Atlas A2 only (CANN ignores it on A3 and keeps A3's default, AI "
                    + "CPU expansion)";
            default -> "is not a value CANN knows (its communicator init fails with HCCL_E_PARA; values are "
                    + "case-sensitive)";
        };
        return EXPANSION_MODE + "=" + value + " " + why + ", but the communicator path reads from the host on CPU_TS "
                + "threads: on " + (isA3(soc) ? "Atlas A3" : "Atlas A2") + " (SoC " + soc + ") set it to "
                + String.join(" or ", usable) + ", or unset it";
    }

    /**
     * Null when {@code device} is among the {@code count} devices this process sees ({@code aclrtGetDeviceCount}),
     * else why not; {@code assigned}: the driver chose it (the lowest id free on the executor's host), not Spark's
     * resource.
     */
    static String device(int device, int count, boolean assigned) {
        if (device >= 0 && device < count) {
            return null;
        }
        return "NPU " + device + " is outside the " + count + " device" + (count == 1 ? "" : "s") + " this process "
                + "sees (aclrtGetDeviceCount: logical ids 0 to " + (count - 1) + ")" + (assigned ? "; the driver "
                + "assigned it, the lowest id free on its host: this host runs more executors than it shows NPUs"
                : "");
    }

    private static boolean isA3(String soc) {
        return soc != null && soc.startsWith("Ascend910_93");
    }
}
