package org.hcomm.bridge.endpoint;

/** Per-channel status reported by {@code HcommChannelGetStatus} (docs/HCOMM_ABI.md §2.3). */
public enum ChannelStatus {
    READY(0),
    CONNECTING(1),
    FAILED(2),
    /** Socket connect timed out (the library's connect timeout). */
    TIMEOUT(3),
    RES_LOC_UNAVAIL(4),
    RES_RMT_UNAVAIL(5),
    /** A value this binding does not know; treated as a failure. */
    UNKNOWN(-1);

    private final int code;

    ChannelStatus(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** True for every status that will not turn into READY by polling again. */
    public boolean isFailure() {
        return this != READY && this != CONNECTING;
    }

    public static ChannelStatus of(int code) {
        return code >= 0 && code <= 5 ? values()[code] : UNKNOWN;
    }
}
