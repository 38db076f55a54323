package org.hcomm.bridge.install;

import java.util.Locale;

/**
 * Which HComm API reads one-sidedly: the endpoint API (CANN documents it for the Atlas 350 card), the HCCL
 * communicator path (Atlas A2/A3), or {@link #AUTO}: the SoC decides ({@link #resolve}).
 */
public enum Api {
    AUTO,
    ENDPOINT,
    COMMUNICATOR;

    /** {@code auto}, {@code endpoint} or {@code communicator}, any case; else an exception naming {@code what}. */
    public static Api parse(String value, String what) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        for (Api api : values()) {
            if (api.toString().equals(v)) {
                return api;
            }
        }
        throw new IllegalArgumentException(what + " " + value + " is not valid; use auto, endpoint or communicator");
    }

    /**
     * The API taken on SoC {@code soc} (null: unknown): {@link #AUTO} takes {@link #COMMUNICATOR} on an Atlas A2
     * ({@code Ascend910B*}) or A3 ({@code Ascend910_93*}), else {@link #ENDPOINT}; the others are themselves.
     */
    public Api resolve(String soc) {
        if (this != AUTO) {
            return this;
        }
        return soc != null && (soc.startsWith("Ascend910B") || soc.startsWith("Ascend910_93")) ? COMMUNICATOR
                : ENDPOINT;
    }

    /** The configuration value: {@code auto}, {@code endpoint} or {@code communicator}. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
