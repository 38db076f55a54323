package org.hcomm.bridge;

/** {@code CommEngine}: who issues transfers (docs/HCOMM_ABI.md §2.3). Soft HComm accepts CPU, CPU_TS and AICPU_TS. */
public enum Engine {
    CPU(0),
    CPU_TS(1),
    AICPU(2),
    AICPU_TS(3),
    AIV(4),
    CCU(5);

    private final int code;

    Engine(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
