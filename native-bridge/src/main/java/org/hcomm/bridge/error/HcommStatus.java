package org.hcomm.bridge.error;

/**
 * HComm status codes ({@code HcclResult} numbering, shared by {@code HcommResult}; docs/HCOMM_ABI.md §2.2). The
 * constant names are the C names. This is the only place a code is classified: {@link HcommException} carries one
 * of these.
 */
public enum HcommStatus {
    HCCL_SUCCESS(0, "success"),
    HCCL_E_PARA(1, "invalid parameter"),
    HCCL_E_PTR(2, "null pointer"),
    HCCL_E_MEMORY(3, "memory error"),
    HCCL_E_INTERNAL(4, "internal error"),
    HCCL_E_NOT_SUPPORT(5, "not supported on this product, engine or protocol"),
    HCCL_E_NOT_FOUND(6, "resource not found (unknown handle, or range outside the registered/exchanged memory)"),
    HCCL_E_UNAVAIL(7, "resource unavailable"),
    HCCL_E_SYSCALL(8, "system call failed"),
    HCCL_E_TIMEOUT(9, "timeout"),
    HCCL_E_OPEN_FILE_FAILURE(10, "file open failed"),
    HCCL_E_TCP_CONNECT(11, "TCP connect failed"),
    HCCL_E_ROCE_CONNECT(12, "RoCE connect failed (or the channel is not connected yet)"),
    HCCL_E_TCP_TRANSFER(13, "TCP transfer failed"),
    HCCL_E_ROCE_TRANSFER(14, "RoCE transfer failed"),
    HCCL_E_RUNTIME(15, "runtime (ACL) call failed"),
    HCCL_E_DRV(16, "driver call failed"),
    HCCL_E_PROFILING(17, "profiling call failed"),
    HCCL_E_CCE(18, "CCE call failed"),
    HCCL_E_NETWORK(19, "network error or error completion"),
    HCCL_E_AGAIN(20, "try again (queue full, or already present)"),
    HCCL_E_REMOTE(21, "error completion from the remote side"),
    HCCL_E_SUSPENDING(22, "communicator suspending"),
    HCCL_E_OPRETRY_FAIL(23, "op-retry constraint"),
    HCCL_E_OOM(24, "out of memory"),
    HCCL_E_IN_STATUS(1041, "detailed error is in the per-item status array"),
    /** A code this binding does not know; {@link HcommException#code()} keeps the raw value. */
    UNKNOWN(Integer.MIN_VALUE, "status code not known to this binding");

    private static final HcommStatus[] SMALL = new HcommStatus[25];

    static {
        for (HcommStatus s : values()) {
            if (s.code >= 0 && s.code < SMALL.length) {
                SMALL[s.code] = s;
            }
        }
    }

    private final int code;
    private final String meaning;

    HcommStatus(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }

    /** The numeric code ({@link Integer#MIN_VALUE} for {@link #UNKNOWN}). */
    public int code() {
        return code;
    }

    /** What the code means, in words. */
    public String meaning() {
        return meaning;
    }

    /** The status for a code returned by an HComm call; {@link #UNKNOWN} when the code is not listed. */
    public static HcommStatus of(int code) {
        if (code >= 0 && code < SMALL.length) {
            return SMALL[code];
        }
        return code == HCCL_E_IN_STATUS.code ? HCCL_E_IN_STATUS : UNKNOWN;
    }
}
