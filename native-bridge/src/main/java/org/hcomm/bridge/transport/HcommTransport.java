package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.hcomm.bridge.CommThread;
import org.hcomm.bridge.Engine;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.read.ChannelReadException;
import org.hcomm.bridge.read.ReadStrategy;

/**
 * {@link Transport} on an HComm endpoint (the endpoint API, whichever provider {@link HcommNative} loaded): host
 * memory registered on the endpoint, channels created in batches and destroyed together, and reads by the read
 * strategy {@link TransportOptions#nbiFence()} chooses, each batch on an HComm thread of its own for
 * {@code HcommReadOnThread}.
 *
 * <p>Thread-safe as {@link Transport} says.
 */
public final class HcommTransport extends TransportBase {
    private final Endpoint endpoint;
    private final boolean nbiFence;

    private HcommTransport(Endpoint endpoint, boolean nbiFence) {
        this.endpoint = endpoint;
        this.nbiFence = nbiFence;
    }

    /**
     * Loads the library (if not yet loaded), applies the soft settings and creates the endpoint.
     *
     * @throws TransportException with code -1 and the loader's cause when the library is unavailable, or the
     *     status of a refused call
     */
    public static HcommTransport open(TransportOptions options) throws TransportException {
        requireLibrary();
        try {
            if (SoftHcomm.isActive()) {
                if (options.secret() != null) {
                    SoftHcomm.configure("secret", options.secret());
                }
                SoftHcomm.configure("exec_timeout_ms", Long.toString(Math.max(1, options.readTimeout().toMillis())));
                SoftHcomm.configure("connect_timeout_ms",
                        Long.toString(Math.max(1, options.connectTimeout().toMillis())));
            }
            return new HcommTransport(Endpoint.create(options.address()), options.nbiFence());
        } catch (HcommException e) {
            throw wrap(e);
        }
    }

    /**
     * A read call's failure; when it is one channel's read, it names that channel's
     * {@link PeerChannels.PeerChannel}.
     */
    private TransportException readFailure(HcommException e) {
        PeerChannels.PeerChannel failed = e instanceof ChannelReadException r ? peerOf(r.channel()) : null;
        return new TransportException(e.call(), e.code(), e.getMessage(), e, failed);
    }

    /** The open peer channel on HComm channel {@code channel}, or null. Looked up on failure: reads pay nothing. */
    private PeerChannels.PeerChannel peerOf(ChannelSet.Channel channel) {
        if (channel == null) {
            return null;
        }
        HcommPeerChannels c = findTracked(HcommPeerChannels.class, p -> p.set() == channel.owner());
        return c == null ? null : c.channel(channel.index());
    }

    @Override
    public byte[] endpointDescriptor() {
        return endpoint.descriptor();
    }

    @Override
    public int listenPort() {
        return endpoint.listenPort();
    }

    @Override
    public Region allocate(String tag, long bytes) {
        ensureOpen();
        return track(new MemoryRegion(endpoint.allocate(tag, bytes), null));
    }

    @Override
    public Region register(String tag, long address, long bytes) {
        return track(new MemoryRegion(endpoint.register(tag, address, bytes), null));
    }

    @Override
    public Region mapFile(String tag, java.nio.file.Path file, long bytes) throws TransportException {
        long address = MappedFiles.map(file, bytes);
        MemoryRegion region;
        try {
            region = new MemoryRegion(endpoint.register(tag, address, bytes), () -> MappedFiles.unmap(address, bytes));
        } catch (RuntimeException e) {
            MappedFiles.unmap(address, bytes); // not registered: no region owns the mapping yet
            throw e;
        }
        return track(region); // from here the region owns the mapping (track closes it when the transport is closed)
    }

    @Override
    public void destroyTogether(List<PeerChannels> batches) {
        List<ChannelSet> sets = new ArrayList<>(batches.size());
        for (PeerChannels b : batches) {
            HcommPeerChannels c = (HcommPeerChannels) b;
            synchronized (c) {
                forget(c);
                sets.add(c.set());
            }
        }
        ChannelSet.closeTogether(sets);
    }

    @Override
    public PeerChannels connect(List<PeerSpec> peers) throws TransportException {
        if (peers.isEmpty()) {
            throw new IllegalArgumentException("no peers");
        }
        List<ChannelSpec> specs = new ArrayList<>(peers.size());
        for (PeerSpec p : peers) {
            specs.add(p.server() ? ChannelSpec.server(p.endpoint(), p.channelName(), p.port())
                    : ChannelSpec.client(p.endpoint(), p.channelName(), p.port()));
        }
        try {
            return track(new HcommPeerChannels(endpoint.createChannels(Engine.CPU, specs), peers, this));
        } catch (HcommException e) {
            throw wrap(e);
        }
    }

    @Override
    public ReadBatch newReadBatch() {
        ensureOpen();
        if (nbiFence) {
            return track(new Batch(null, ReadStrategy.nbiFence()));
        }
        CommThread thread = CommThread.allocate(Engine.CPU, 0);
        return track(new Batch(thread, ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN)));
    }

    /**
     * On threads, eight: each batch has an HComm thread of its own and completes by draining it (well under the 200
     * threads CANN allows per allocation). A fence waits for every read on the channel, so with ReadNbi, two.
     */
    @Override
    public int independentBatches() {
        return nbiFence ? 2 : 8;
    }

    @Override
    String reads() {
        return nbiFence ? "ReadNbi+Fence" : "ReadOnThread+Drain";
    }

    /** {@code HcommEndpointDestroy}, after every batch, channel and region ({@link TransportBase#close()}). */
    @Override
    void closeCore() {
        endpoint.close();
    }

    private final class MemoryRegion implements Region {
        private final AtomicBoolean closed = new AtomicBoolean();
        private final RegisteredMemory memory;
        private final Runnable afterClose;

        MemoryRegion(RegisteredMemory memory, Runnable afterClose) {
            this.memory = memory;
            this.afterClose = afterClose;
        }

        @Override
        public String tag() {
            return memory.tag();
        }

        @Override
        public long address() {
            return memory.address();
        }

        @Override
        public long size() {
            return memory.size();
        }

        @Override
        public ByteBuffer buffer() {
            return memory.buffer();
        }

        @Override
        public ByteBuffer buffer(long offset, int length) {
            return memory.buffer(offset, length).order(ByteOrder.BIG_ENDIAN);
        }

        @Override
        public void close() {
            forget(this);
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            try {
                memory.close();
            } finally {
                if (afterClose != null) {
                    afterClose.run();
                }
            }
        }
    }

    /**
     * The plugin's batch on the endpoint path: its reads go to {@link ReadStrategy} on the peer's HComm channel, and
     * a failure becomes a {@link TransportException} naming the peer channel; closing it waits for what is in flight
     * and frees its HComm thread.
     */
    private final class Batch implements ReadBatch {
        private final AtomicBoolean closed = new AtomicBoolean();
        private final CommThread thread;
        private final ReadStrategy strategy;

        Batch(CommThread thread, ReadStrategy strategy) {
            this.thread = thread;
            this.strategy = strategy;
        }

        @Override
        public void read(PeerChannels.PeerChannel channel, long dst, long src, long length) throws TransportException {
            try { // no lambda: this runs once per read
                strategy.submit(((HcommPeerChannels.Peer) channel).channel, dst, src, length);
            } catch (HcommException e) {
                throw readFailure(e);
            }
        }

        @Override
        public void flush() throws TransportException {
            try {
                strategy.flush();
            } catch (HcommException e) {
                throw readFailure(e);
            }
        }

        @Override
        public void await() throws TransportException {
            try {
                strategy.complete();
            } catch (HcommException e) {
                throw readFailure(e);
            }
        }

        @Override
        public void close() {
            forget(this);
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            try {
                strategy.complete(); // ends a batch left open on this OS thread and waits for its reads
            } catch (RuntimeException e) {
                // the reads of a batch being thrown away do not matter; the thread must still be freed
            } finally {
                if (thread != null) {
                    thread.close();
                }
            }
        }
    }
}
