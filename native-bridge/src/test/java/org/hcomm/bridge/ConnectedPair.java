package org.hcomm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.endpoint.ImportedMemory;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.endpoint.SocketRole;

/**
 * This JVM (reader, CLIENT) and a {@link RemotePeer} (owner of the source memory, SERVER) with READY channels
 * between them: the fixture of the cross-process tests. Memory is registered on both sides before the channels are
 * created. {@link #close()} closes everything on both sides and has the peer check it leaked nothing.
 */
final class ConnectedPair implements AutoCloseable {
    private static final AtomicInteger NAMES = new AtomicInteger();

    /** The data path soft HComm uses between the two processes. */
    enum Path {
        SHM("shm"),
        TCP("tcp");

        final String wire;

        Path(String wire) {
            this.wire = wire;
        }
    }

    final Path path;
    final long seed;
    final RemotePeer peer;
    final RemotePeer.Memory peerMemory;
    final Endpoint endpoint;
    final RegisteredMemory dst;
    final ChannelSet channels;
    ImportedMemory src;
    private boolean peerGone;

    private ConnectedPair(Path path, long seed, RemotePeer peer, RemotePeer.Memory peerMemory, Endpoint endpoint,
            RegisteredMemory dst, ChannelSet channels) {
        this.path = path;
        this.seed = seed;
        this.peer = peer;
        this.peerMemory = peerMemory;
        this.endpoint = endpoint;
        this.dst = dst;
        this.channels = channels;
    }

    /** {@link #prepare} then {@link #awaitReady()}. */
    static ConnectedPair open(Path path, long srcSize, long dstSize, int channelCount) throws Exception {
        ConnectedPair p = prepare(path, srcSize, dstSize, channelCount, Map.of(), Map.of());
        try {
            p.awaitReady();
            return p;
        } catch (Throwable t) {
            p.closeQuietly(t);
            throw t;
        }
    }

    /**
     * Starts the peer, allocates and fills its source region, creates this side's endpoint and destination region,
     * and creates the channels on both sides (not yet READY). {@code peerConfig} is applied with
     * {@code HcommSoftConfigure} in the peer before its channels are created.
     */
    static ConnectedPair prepare(Path path, long srcSize, long dstSize, int channelCount,
            Map<String, String> extraPeerEnv, Map<String, String> peerConfig) throws Exception {
        Map<String, String> env = new HashMap<>(extraPeerEnv);
        if (path == Path.TCP) {
            SoftHcomm.configure("force_tcp", "1");
            env.put("HCOMM_SOFT_FORCE_TCP", "1");
        }
        long seed = System.nanoTime();
        RemotePeer peer = RemotePeer.start(env);
        Endpoint endpoint = null;
        try {
            for (Map.Entry<String, String> c : peerConfig.entrySet()) {
                peer.configure(c.getKey(), c.getValue());
            }
            RemotePeer.Memory mem = peer.alloc("src", srcSize);
            peer.fill(mem, seed);
            endpoint = Endpoint.create(InetAddress.getByName("127.0.0.1"));
            RegisteredMemory dst = endpoint.allocate("dst", dstSize);
            String name = "t" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
            peer.connect(SocketRole.SERVER, endpoint.descriptor(), peer.listenPort(), name, channelCount);
            List<ChannelSpec> specs = new ArrayList<>();
            for (int i = 0; i < channelCount; i++) {
                specs.add(ChannelSpec.client(peer.endpointDescriptor(), name + "-" + i, peer.listenPort()));
            }
            ChannelSet channels = endpoint.createChannels(specs);
            return new ConnectedPair(path, seed, peer, mem, endpoint, dst, channels);
        } catch (Throwable t) {
            if (endpoint != null) {
                endpoint.close();
            }
            peer.close();
            resetConfig(path);
            throw t;
        }
    }

    /** Both sides reach READY; then the peer's region is imported. */
    void awaitReady() throws Exception {
        channels.awaitReady(Duration.ofSeconds(60));
        assertEquals("CHANNELS READY " + path.wire, peer.awaitChannels());
        src = endpoint.importMemory(peerMemory.descriptor());
        assertEquals(peerMemory.address(), src.remoteAddress());
        assertEquals(peerMemory.size(), src.size());
    }

    ChannelSet.Channel channel() {
        return channels.channel(0);
    }

    /** The peer was killed by the test: skip its clean exit. */
    void killPeer() throws InterruptedException {
        peer.kill();
        peerGone = true;
    }

    @Override
    public void close() throws Exception {
        try {
            if (src != null) {
                src.close();
            }
            channels.close();
            dst.close();
            endpoint.close();
            if (!peerGone) {
                peer.exit();
            }
        } finally {
            peer.close();
            resetConfig(path);
        }
    }

    void closeQuietly(Throwable first) {
        try {
            peerGone = true;
            close();
        } catch (Throwable t) {
            first.addSuppressed(t);
        }
    }

    private static void resetConfig(Path path) {
        if (path == Path.TCP) {
            SoftHcomm.configure("force_tcp", "0");
        }
    }
}
