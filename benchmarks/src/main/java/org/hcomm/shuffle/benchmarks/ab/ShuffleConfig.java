package org.hcomm.shuffle.benchmarks.ab;

import org.apache.spark.SparkConf;

/** The shuffle configurations the A/B suite compares, in the order they alternate within a repetition. */
public enum ShuffleConfig {
    /** Spark's sort shuffle as shipped; on one host, reducers read other executors' files from disk directly. */
    BUILTIN("builtin"),
    /** Spark's sort shuffle with host-local disk reads off: every remote block through Netty, as between hosts. */
    BUILTIN_NETWORK("builtin-network"),
    /** This plugin on soft HComm, same-host shared-memory path. */
    HCOMM("hcomm"),
    /** This plugin on soft HComm forced onto its TCP "soft NIC" path in every executor. */
    HCOMM_TCP("hcomm-tcp"),
    /**
     * This plugin on the HCCL communicator path: soft HComm behaving as an Atlas A2 server in every executor
     * ({@code HCOMM_SOFT_SOC=Ascend910B3}, so {@code spark.shuffle.hcomm.api=auto} takes the communicator path), with
     * a short {@code communicator.settle} and the path's defaults (its HCCL buffer as windows: every remote byte is
     * streamed by its owner host to device, read one-sidedly and copied back device to host; on soft HComm "device
     * memory" is host memory, so both copies are pure overhead here). The runner waits for the driver's communicator
     * before it times anything ({@code Runner.awaitCommunicator}). Not in the presets' matrix (they stay as
     * measured); chosen with {@code -Dab.configs=...,hcomm-communicator}.
     */
    HCOMM_COMMUNICATOR("hcomm-communicator"),
    /**
     * This plugin on soft HComm with {@code spark.shuffle.hcomm.writeTarget=arena}: Spark's writers write each map
     * output straight into the send arena, once (host-local disk reads off, as that mode needs). Not in the presets'
     * matrix; chosen with {@code -Dab.configs=...,hcomm-arena}.
     */
    HCOMM_ARENA("hcomm-arena"),
    /**
     * The communicator path with {@code communicator.transfer=window} set explicitly (its only transfer, so the same
     * as hcomm-communicator): nothing staged at commit, every remote byte streamed through the owners' and readers'
     * buffers slice by slice.
     */
    HCOMM_WINDOW("hcomm-window");

    static final String FORCE_TCP_ENV = "HCOMM_SOFT_FORCE_TCP";
    /** The SoC soft HComm behaves like ({@code aclrtGetSocName}); an Atlas A2 one selects the communicator path. */
    static final String SOC_ENV = "HCOMM_SOFT_SOC";
    static final String A2_SOC = "Ascend910B3";
    /** How long the executors must stay unchanged before the driver forms their communicator (plugin default 3s). */
    static final String COMMUNICATOR_SETTLE = "300ms";

    private final String label;

    ShuffleConfig(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public boolean isHcomm() {
        return this == HCOMM || this == HCOMM_TCP || this == HCOMM_COMMUNICATOR || this == HCOMM_ARENA
                || this == HCOMM_WINDOW;
    }

    /** Whether this configuration reads through an HCCL communicator (Atlas A2/A3) instead of the endpoint API. */
    public boolean isCommunicator() {
        return this == HCOMM_COMMUNICATOR || this == HCOMM_WINDOW;
    }

    /** What the executors' HCOMM_SOFT_FORCE_TCP must be for this configuration ("unset" for the built-in ones). */
    String expectedForceTcp() {
        return switch (this) {
            case HCOMM, HCOMM_COMMUNICATOR, HCOMM_ARENA, HCOMM_WINDOW -> "0";
            case HCOMM_TCP -> "1";
            default -> "unset";
        };
    }

    void apply(SparkConf conf) {
        switch (this) {
            case BUILTIN -> conf.set("spark.shuffle.readHostLocalDisk", "true");
            case BUILTIN_NETWORK -> conf.set("spark.shuffle.readHostLocalDisk", "false");
            case HCOMM, HCOMM_TCP -> plugin(conf, this == HCOMM_TCP);
            case HCOMM_ARENA -> plugin(conf, false)
                    .set("spark.shuffle.hcomm.writeTarget", "arena")
                    .set("spark.shuffle.readHostLocalDisk", "false");
            case HCOMM_COMMUNICATOR -> plugin(conf, false)
                    .set("spark.executorEnv." + SOC_ENV, A2_SOC)
                    .set("spark.shuffle.hcomm.communicator.settle", COMMUNICATOR_SETTLE);
            case HCOMM_WINDOW -> plugin(conf, false)
                    .set("spark.executorEnv." + SOC_ENV, A2_SOC)
                    .set("spark.shuffle.hcomm.communicator.settle", COMMUNICATOR_SETTLE)
                    .set("spark.shuffle.hcomm.communicator.transfer", "window");
            default -> throw new AssertionError(this);
        }
    }

    /** The plugin's two settings, fallback {@code never}, and the soft NIC forced or not in every executor. */
    private static SparkConf plugin(SparkConf conf, boolean forceTcp) {
        return conf.set("spark.plugins", "org.apache.spark.shuffle.hcomm.HcommShufflePlugin")
                .set("spark.shuffle.manager", "org.apache.spark.shuffle.hcomm.HcommShuffleManager")
                .set("spark.shuffle.hcomm.fallback", "never")
                // Set explicitly both ways, so an exported variable in the caller's shell cannot leak in.
                .set("spark.executorEnv." + FORCE_TCP_ENV, forceTcp ? "1" : "0");
    }

    public static ShuffleConfig of(String label) {
        for (ShuffleConfig c : values()) {
            if (c.label.equals(label)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown configuration '" + label + "' (allowed: " + String.join(", ",
                java.util.Arrays.stream(values()).map(ShuffleConfig::label).toList()) + ")");
    }
}
