package org.hcomm.bridge.transport;

import java.io.IOException;

/** A failed HComm call: the call, the status code and its name, and what was involved. */
public final class TransportException extends IOException {
    private final String call;
    private final int code;

    public TransportException(String call, int code, String message, Throwable cause) {
        super(message, cause);
        this.call = call;
        this.code = code;
    }

    public String call() {
        return call;
    }

    /** The HComm status code, or -1 when the failure did not come from a status code. */
    public int code() {
        return code;
    }
}
