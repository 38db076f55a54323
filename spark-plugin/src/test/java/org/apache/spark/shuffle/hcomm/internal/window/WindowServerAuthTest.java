package org.apache.spark.shuffle.hcomm.internal.window;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.spark.network.TransportContext;
import org.apache.spark.network.client.TransportClient;
import org.apache.spark.network.client.TransportClientBootstrap;
import org.apache.spark.network.client.TransportClientFactory;
import org.apache.spark.network.server.NoOpRpcHandler;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.junit.jupiter.api.Test;

/**
 * A window server on loopback, through Spark's own network library: a reader that proves the channel secret is
 * answered, one with another secret or none is refused before any request reaches the server, whether or not
 * {@code spark.authenticate} is on (no Spark here at all).
 */
class WindowServerAuthTest {
    private static final ByteBuffer FETCH = WindowProtocol.encode(new WindowProtocol.Fetch(9, "exec-1", 0,
            new long[] {0}, List.of(new WindowProtocol.Range(0, 1L, 0, 1))));

    @Test
    void onlyAReaderThatProvesTheChannelSecretIsServed() throws Exception {
        ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
        try (WindowServer server = new WindowServer("exec-0", "127.0.0.1", metrics, 5_000, "the-secret")) {
            Object answer = WindowProtocol.decode(ask(server, WindowServer.readerAuth("the-secret"), FETCH));
            WindowProtocol.Refused r = assertInstanceOf(WindowProtocol.Refused.class, answer);
            assertTrue(r.epochMismatch(), "it serves no communicator 9: " + r.reason());
            assertThrows(Exception.class, () -> ask(server, WindowServer.readerAuth("a-guess"), FETCH),
                    "another secret fails the handshake");
            assertThrows(Exception.class, () -> ask(server, List.of(), FETCH),
                    "a request without the handshake is not served");
            assertEquals(1, metrics.windowsRefused.getCount(), "only the authenticated Fetch reached the server");
        }
    }

    private static ByteBuffer ask(WindowServer server, List<TransportClientBootstrap> boot, ByteBuffer request)
            throws Exception {
        try (TransportContext context = new TransportContext(WindowServer.transportConf(), new NoOpRpcHandler(),
                true);
                TransportClientFactory clients = context.createClientFactory(boot)) {
            TransportClient c = clients.createClient("127.0.0.1", server.port());
            return c.sendRpcSync(request.duplicate(), 5_000);
        }
    }
}
