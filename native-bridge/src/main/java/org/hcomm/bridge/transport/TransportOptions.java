package org.hcomm.bridge.transport;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * How to open a {@link HcommTransport}.
 *
 * @param address the IPv4 address of this process's endpoint
 * @param nbiFence true for HcommReadNbi + HcommChannelFence (Atlas 350 host RoCE), false for HcommReadOnThread +
 *     drain (A2/A3 and the default)
 * @param secret soft HComm only: the shared secret every channel handshake proves (null keeps the library's)
 * @param readTimeout soft HComm only: how long completion waits before failing with HCCL_E_TIMEOUT
 * @param connectTimeout soft HComm only: how long a channel may stay CONNECTING
 */
public record TransportOptions(InetAddress address, boolean nbiFence, String secret, Duration readTimeout,
        Duration connectTimeout) {
    public TransportOptions {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(readTimeout, "readTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
    }
}
