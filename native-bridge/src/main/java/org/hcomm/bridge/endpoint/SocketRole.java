package org.hcomm.bridge.endpoint;

/** {@code HcommSocketRole} of a channel's set-up connection. */
public enum SocketRole {
    /** Let the library decide: the side with the numerically smaller address is the server. */
    AUTO(-1),
    CLIENT(0),
    SERVER(1);

    private final int code;

    SocketRole(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
