package org.hcomm.bridge.endpoint;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.hcomm.bridge.raw.EndpointDesc;
import org.hcomm.bridge.raw.HcommAbi;

/**
 * What one channel of a {@link ChannelSet} connects to: the peer's 160-byte endpoint descriptor, the channel name
 * both ends must use, this end's role, the port (the SERVER end's listen port) and the notify count. Channels always
 * exchange every region registered on the endpoint when they are created ({@code exchangeAllMems = true}).
 * Immutable and thread-safe.
 */
public final class ChannelSpec {
    private final byte[] remoteEndpoint;
    private final String name;
    private final SocketRole role;
    private final int port;
    private final int notifyNum;

    private ChannelSpec(byte[] remoteEndpoint, String name, SocketRole role, int port, int notifyNum) {
        Objects.requireNonNull(remoteEndpoint, "remoteEndpoint");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        if (remoteEndpoint.length != EndpointDesc.SIZE) {
            throw new IllegalArgumentException("remote endpoint descriptor must be " + EndpointDesc.SIZE
                    + " bytes, got " + remoteEndpoint.length);
        }
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        if (utf8.length == 0 || utf8.length > HcommAbi.HCOMM_CHANNEL_NAME_MAX_LEN || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("channel name must be 1.." + HcommAbi.HCOMM_CHANNEL_NAME_MAX_LEN
                    + " UTF-8 bytes without NUL, got '" + name + "'");
        }
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        }
        if (notifyNum < 0 || notifyNum > 64) {
            throw new IllegalArgumentException("notifyNum must be in [0, 64], got " + notifyNum);
        }
        this.remoteEndpoint = remoteEndpoint.clone();
        this.name = name;
        this.role = role;
        this.port = port;
        this.notifyNum = notifyNum;
    }

    /** This end connects to the peer, which listens on {@code serverPort} (its endpoint's listen port). */
    public static ChannelSpec client(byte[] remoteEndpoint, String name, int serverPort) {
        return new ChannelSpec(remoteEndpoint, name, SocketRole.CLIENT, serverPort, 0);
    }

    /** This end accepts the peer's connection on {@code listenPort} (this endpoint's listen port). */
    public static ChannelSpec server(byte[] remoteEndpoint, String name, int listenPort) {
        return new ChannelSpec(remoteEndpoint, name, SocketRole.SERVER, listenPort, 0);
    }

    /** A copy with another role. */
    public ChannelSpec withRole(SocketRole newRole) {
        return new ChannelSpec(remoteEndpoint, name, newRole, port, notifyNum);
    }

    /** A copy with {@code n} notifies (0..64). */
    public ChannelSpec withNotifyNum(int n) {
        return new ChannelSpec(remoteEndpoint, name, role, port, n);
    }

    public byte[] remoteEndpoint() {
        return remoteEndpoint.clone();
    }

    byte[] remoteEndpointUnsafe() {
        return remoteEndpoint;
    }

    public String name() {
        return name;
    }

    public SocketRole role() {
        return role;
    }

    public int port() {
        return port;
    }

    public int notifyNum() {
        return notifyNum;
    }

    @Override
    public String toString() {
        return "ChannelSpec[name=" + name + " role=" + role + " port=" + port + " notifyNum=" + notifyNum + "]";
    }
}
