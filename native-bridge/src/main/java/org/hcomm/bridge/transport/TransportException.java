package org.hcomm.bridge.transport;

import java.io.IOException;

import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;

/**
 * A failed HComm call: the call, the status code and its name, and what was involved; for a failed read, the channel
 * whose read failed.
 */
public final class TransportException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int code;
    private final transient PeerChannels.PeerChannel channel;

    public TransportException(String call, int code, String message, Throwable cause) {
        this(call, code, message, cause, null);
    }

    /** A failed read on {@code channel} (null when the failure cannot say which channel's read failed). */
    public TransportException(String call, int code, String message, Throwable cause,
            PeerChannels.PeerChannel channel) {
        super(message, cause);
        this.call = call;
        this.code = code;
        this.channel = channel;
    }

    public String call() {
        return call;
    }

    /** The HComm status code, or -1 when the failure did not come from a status code. */
    public int code() {
        return code;
    }

    /**
     * Whether the call, or a wait it made on the way, gave up waiting ({@code HCCL_E_TIMEOUT}; a refused read first
     * waits for the batch's earlier reads): what it waited for may still complete later.
     */
    public boolean isTimeout() {
        if (code == HcommStatus.HCCL_E_TIMEOUT.code()) {
            return true;
        }
        Throwable cause = getCause();
        if (cause != null) {
            for (Throwable s : cause.getSuppressed()) {
                if (s instanceof HcommException h && h.status() == HcommStatus.HCCL_E_TIMEOUT) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The channel whose read failed, when this is a read's failure and HComm said which channel (a batch that reads
     * from several peers fails with its first failed channel); null otherwise.
     */
    public PeerChannels.PeerChannel channel() {
        return channel;
    }
}
