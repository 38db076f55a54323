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
    HCOMM_TCP("hcomm-tcp");

    static final String FORCE_TCP_ENV = "HCOMM_SOFT_FORCE_TCP";

    private final String label;

    ShuffleConfig(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public boolean isHcomm() {
        return this == HCOMM || this == HCOMM_TCP;
    }

    /** What the executors' HCOMM_SOFT_FORCE_TCP must be for this configuration ("unset" for the built-in ones). */
    String expectedForceTcp() {
        return switch (this) {
            case HCOMM -> "0";
            case HCOMM_TCP -> "1";
            default -> "unset";
        };
    }

    void apply(SparkConf conf) {
        switch (this) {
            case BUILTIN -> conf.set("spark.shuffle.readHostLocalDisk", "true");
            case BUILTIN_NETWORK -> conf.set("spark.shuffle.readHostLocalDisk", "false");
            case HCOMM, HCOMM_TCP -> conf
                    .set("spark.plugins", "org.apache.spark.shuffle.hcomm.HcommShufflePlugin")
                    .set("spark.shuffle.manager", "org.apache.spark.shuffle.hcomm.HcommShuffleManager")
                    .set("spark.shuffle.hcomm.fallback", "never")
                    // Set explicitly both ways, so an exported variable in the caller's shell cannot leak in.
                    .set("spark.executorEnv." + FORCE_TCP_ENV, this == HCOMM_TCP ? "1" : "0");
            default -> throw new AssertionError(this);
        }
    }

    public static ShuffleConfig of(String label) {
        for (ShuffleConfig c : values()) {
            if (c.label.equals(label)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown configuration '" + label + "' (allowed: builtin, "
                + "builtin-network, hcomm, hcomm-tcp)");
    }
}
