package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.hcomm.bridge.ChannelReadException;
import org.hcomm.bridge.ChannelSet;
import org.hcomm.bridge.ChannelSpec;
import org.hcomm.bridge.CommThread;
import org.hcomm.bridge.Endpoint;
import org.hcomm.bridge.Engine;
import org.hcomm.bridge.HcommException;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.ReadStrategy;
import org.hcomm.bridge.RegisteredMemory;
import org.hcomm.bridge.SoftHcomm;

/** {@link Transport} on the HComm facade: whichever provider {@link HcommNative} loaded. */
public final class HcommTransport implements Transport {
    private final Endpoint endpoint;
    private final boolean nbiFence;
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

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
        if (!HcommNative.isAvailable()) {
            throw new TransportException("load", -1, "HComm library unavailable: " + HcommNative.unavailabilityCause(),
                    HcommNative.unavailabilityCause());
        }
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

    static TransportException wrap(HcommException e) {
        return new TransportException(e.call(), e.code(), e.getMessage(), e);
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
        for (AutoCloseable r : open) {
            if (r instanceof HcommPeerChannels c && c.set() == channel.owner()) {
                return c.channel(channel.index());
            }
        }
        return null;
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
                open.remove(c);
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
            return track(new HcommPeerChannels(endpoint.createChannels(Engine.CPU, specs), peers, open));
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
    public LiveObjects liveObjects() {
        return LiveObjects.current();
    }

    @Override
    public String describe() {
        return "provider=" + HcommNative.provider() + " library=" + HcommNative.librarySource() + " version="
                + HcommNative.libraryVersion() + " reads=" + (nbiFence ? "ReadNbi+Fence" : "ReadOnThread+Drain");
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("transport is closed");
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        if (closed) {
            closeQuietly(resource);
            throw new IllegalStateException("transport is closed");
        }
        open.add(resource);
        return resource;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        // batches, then channels, then memory: what HComm needs torn down before the endpoint
        for (Class<?> kind : List.of(Batch.class, HcommPeerChannels.class, MemoryRegion.class)) {
            for (AutoCloseable r : List.copyOf(open)) {
                if (kind.isInstance(r)) {
                    failure = closeCollecting(r, failure);
                }
            }
        }
        try {
            endpoint.close();
        } catch (RuntimeException e) {
            failure = addTo(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private RuntimeException closeCollecting(AutoCloseable r, RuntimeException failure) {
        try {
            r.close();
        } catch (Exception e) {
            return addTo(failure, e instanceof RuntimeException re ? re : new IllegalStateException(e));
        }
        return failure;
    }

    private static RuntimeException addTo(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // the caller's failure is the one that matters
        }
    }

    private final class MemoryRegion implements Region {
        private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
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
            open.remove(this);
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

    private final class Batch implements ReadBatch {
        private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
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
            open.remove(this);
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
