package org.hcomm.bridge.transport;

import java.util.Objects;

/**
 * One channel to create: the peer's endpoint descriptor, the channel name both ends use, which end serves the
 * handshake, and the server's port.
 */
public record PeerSpec(String peerId, byte[] endpoint, int port, boolean server, String channelName) {
    public PeerSpec {
        Objects.requireNonNull(peerId, "peerId");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(channelName, "channelName");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }
}
