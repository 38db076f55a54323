package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.communicator.CommStream;
import org.hcomm.bridge.communicator.Communicator;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.HcommAbi;

/**
 * {@link Transport} on an HCCL communicator (Atlas A2/A3): every region is a slice of this rank's HCCL buffer in
 * device memory with a host mirror ({@link Region#buffer()}), written to the device by {@link Region#commit} and
 * read back after each batch; channels are the communicator's, acquired to every other member when it formed
 * ({@link #form}, {@link Communicator#NOTIFY_NUM} notifies each) and ended only with it, so {@link #connect} finds
 * them and {@link PeerChannels#close()} releases nothing; reads are {@code HcommReadOnThread} in batch mode on pooled
 * streams, completed by {@code aclrtSynchronizeStream}. Files cannot be registered ({@link #mapFile},
 * {@link #register}): on A2/A3 only HCCL buffers are read one-sidedly.
 *
 * <p>Addressing, as CANN's transports read: a region's {@link Region#readSource} is an offset into this member's
 * HCCL buffer, and a read's {@code src} is such an offset into the owner's; the batch resolves it against the base
 * {@code HcclChannelGetHcclBuffer} gave for the channel to that owner (read once at {@link #form}) after checking it
 * against the size the channel gave, so a bad offset is a {@link TransportException} naming the peer, never a
 * native call. A read's {@code dst} is a region's {@link Region#address()} (this member's own buffer).
 *
 * <p>Reads go in a {@link CommunicatorBatch}, which issues under {@link Communicator#claim()} (from its first read
 * to its flush: one user of the communicator at a time) and, after its reads over each RoCE channel, records {@link
 * Communicator.Notify#ACK} on that channel in the same batch, as HCCL's read templates do.
 *
 * <p>Thread-safe as {@link Transport} says.
 */
public final class CommunicatorTransport extends TransportBase {
    /** One member of the communicator: who (the plugin's peer id), where (host, for HCCS or RoCE). */
    public record Member(String peerId, String host) {
        public Member {
            Objects.requireNonNull(peerId, "peerId");
            Objects.requireNonNull(host, "host");
        }
    }

    /** {@link PeerChannels.PeerChannel#failure()} of the channel to a peer that is not a member. */
    public static final String NOT_A_MEMBER = "not a member of this communicator";

    private final Communicator comm;
    private final Map<String, Integer> rankOf = new HashMap<>();
    /** The channel to each rank (null for this one). */
    private final CommPeers.Link[] linkOfRank;
    private final Deque<CommStream> idleStreams = new ArrayDeque<>();
    /** Non-null when the HCCL buffer is a window ({@link #formWindowed}): then no region is carved from it. */
    private CommunicatorWindows windows;
    /** Bytes of the HCCL buffer handed out; regions are carved from its start and never returned before close. */
    private long carved;

    private CommunicatorTransport(Communicator comm, List<Member> members, CommPeers.Link[] linkOfRank) {
        this.comm = comm;
        for (int r = 0; r < members.size(); r++) {
            rankOf.put(members.get(r).peerId(), r);
        }
        this.linkOfRank = linkOfRank;
    }

    /**
     * Joins the communicator as member {@code rank} of {@code members} (in rank order) and acquires a channel to
     * every other member: HCCS to members on this host, RoCE to the others. Blocks until all members did the same,
     * or fails after the connect timeout (nothing is left then).
     */
    public static CommunicatorTransport form(byte[] rootInfo, List<Member> members, int rank, int device,
            int bufferMb, String name) throws TransportException {
        return form(rootInfo, members, rank, device, bufferMb, name, null);
    }

    /** How the HCCL buffer is cut into windows: {@code slots} per window end, slices of {@code sliceBytes}. */
    public record WindowSpec(int slots, long sliceBytes, long timeoutMillis) {}

    /**
     * As {@link #form}, with the HCCL buffer as a window ({@link #windows()}) cut as {@code spec} says, and every
     * channel carrying the window's notifies ({@link WindowLayout#notifyNum()}). A spec the buffer cannot hold fails
     * the forming ({@code IllegalArgumentException}'s text as the {@link TransportException}'s), nothing left.
     */
    public static CommunicatorTransport formWindowed(byte[] rootInfo, List<Member> members, int rank, int device,
            int bufferMb, String name, WindowSpec spec) throws TransportException {
        return form(rootInfo, members, rank, device, bufferMb, name, Objects.requireNonNull(spec, "spec"));
    }

    private static CommunicatorTransport form(byte[] rootInfo, List<Member> members, int rank, int device,
            int bufferMb, String name, WindowSpec spec) throws TransportException {
        requireLibrary();
        Communicator comm = null;
        try {
            comm = Communicator.join(rootInfo, members.size(), rank, device, bufferMb, name);
            WindowLayout layout = spec == null ? null
                    : new WindowLayout(comm.bufferSize(), spec.slots(), spec.sliceBytes());
            CommPeers.Link[] links = new CommPeers.Link[members.size()];
            int n = members.size() - 1;
            if (n > 0) {
                int[] ranks = new int[n];
                int[] protocols = new int[n];
                for (int r = 0, i = 0; r < members.size(); r++) {
                    if (r == rank) {
                        continue;
                    }
                    ranks[i] = r;
                    protocols[i] = members.get(r).host().equals(members.get(rank).host())
                            ? HcommAbi.COMM_PROTOCOL_HCCS : HcommAbi.COMM_PROTOCOL_ROCE;
                    i++;
                }
                long[] got = comm.acquireChannels(ranks, protocols, layout == null ? Communicator.NOTIFY_NUM
                        : layout.notifyNum());
                for (int i = 0; i < n; i++) {
                    long[] buffer = comm.peerBuffer(got[i]);
                    links[ranks[i]] = new CommPeers.Link(got[i], buffer[0], buffer[1],
                            protocols[i] == HcommAbi.COMM_PROTOCOL_ROCE);
                }
            }
            CommunicatorTransport t = new CommunicatorTransport(comm, members, links);
            if (layout != null) {
                t.windows = new CommunicatorWindows(t, comm, layout, spec.timeoutMillis());
            }
            return t;
        } catch (HcommException | IllegalStateException | IllegalArgumentException e) {
            if (comm != null) {
                try {
                    comm.close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (e instanceof HcommException h) {
                throw wrap(h);
            }
            throw new TransportException("form", -1, e.getMessage(), e);
        }
    }

    /** {@code HcclGetRootInfo} on {@code device}: what {@link #form} needs on every member, carried out of band. */
    public static byte[] rootInfo(int device) throws TransportException {
        try {
            return Communicator.rootInfo(device);
        } catch (HcommException e) {
            throw wrap(e);
        } catch (IllegalStateException e) {
            throw new TransportException("HcclGetRootInfo", -1, e.getMessage(), e);
        }
    }

    /** The windows of this member's HCCL buffer, or null when it is a store ({@link #form}). */
    public CommunicatorWindows windows() {
        return windows;
    }

    /** The channel to member {@code peerId}, or null when it is not one. */
    CommPeers.Link linkTo(String peerId) {
        Integer r = rankOf.get(peerId);
        return r == null ? null : linkOfRank[r];
    }

    WindowEnd trackWindow(WindowEnd end) {
        return track(end);
    }

    void forgetWindow(WindowEnd end) {
        forget(end);
    }

    /** This member's rank. */
    public int rank() {
        return comm.rank();
    }

    /** The communicator under this transport (tests; the plugin goes through the transport). */
    Communicator communicator() {
        return comm;
    }

    /** This member's HCCL buffer, a device address: what its regions' {@link Region#readSource} offsets count from. */
    public long bufferAddress() {
        return comm.bufferAddress();
    }

    /** The communicator's name ({@code HcclGetCommName}). */
    public String name() {
        return comm.name();
    }

    /** The HCCL buffer's size in bytes (device memory this communicator holds on this member). */
    public long deviceBytes() {
        return comm.bufferSize();
    }

    @Override
    public byte[] endpointDescriptor() {
        return new byte[0]; // members are known by their peer id: the communicator exchanged the rest
    }

    @Override
    public int listenPort() {
        return 0;
    }

    @Override
    public synchronized Region allocate(String tag, long bytes) {
        ensureOpen();
        if (windows != null) {
            throw new IllegalStateException("the HCCL buffer of this communicator is a window: " + tag
                    + " cannot be carved from it");
        }
        if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("region size must be in (0, 2 GiB), got " + bytes);
        }
        long aligned = (carved + 4095) & ~4095L;
        if (bytes > comm.bufferSize() - aligned) {
            throw new IllegalStateException("HCCL buffer of " + comm.bufferSize() + " bytes has " + Math.max(0,
                    comm.bufferSize() - aligned) + " left, " + tag + " needs " + bytes
                    + " (raise spark.shuffle.hcomm.communicator.bufferMB)");
        }
        carved = aligned + bytes;
        return track(new DeviceRegion(tag, comm.bufferAddress() + aligned, bytes));
    }

    @Override
    public boolean canRegisterFiles() {
        return false;
    }

    @Override
    public Region register(String tag, long address, long bytes) {
        throw new UnsupportedOperationException("the communicator path reads only HCCL buffers: " + tag
                + " cannot be registered (Atlas A2/A3)");
    }

    @Override
    public Region mapFile(String tag, java.nio.file.Path file, long bytes) throws TransportException {
        throw new TransportException("HcclCommMemReg", 5, "the communicator path reads only HCCL buffers: " + file
                + " cannot be registered (Atlas A2/A3)", null);
    }

    @Override
    public PeerChannels connect(List<PeerSpec> peers) {
        if (peers.isEmpty()) {
            throw new IllegalArgumentException("no peers");
        }
        ensureOpen();
        List<CommPeers.Peer> list = new ArrayList<>(peers.size());
        for (PeerSpec p : peers) {
            Integer r = rankOf.get(p.peerId());
            CommPeers.Link link = r == null ? null : linkOfRank[r];
            list.add(new CommPeers.Peer(p.peerId(), p.channelName(), link, link == null ? NOT_A_MEMBER : null));
        }
        return new CommPeers(list);
    }

    @Override
    public void destroyTogether(List<PeerChannels> batches) {
        // a communicator's channels end with it (HcclChannelDestroy is CCU-only on A2/A3): nothing to release
    }

    @Override
    public ReadBatch newReadBatch() {
        ensureOpen();
        CommStream s;
        synchronized (this) {
            s = idleStreams.poll();
        }
        if (s == null) {
            try {
                s = comm.newStream();
            } catch (HcommException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        }
        return track(new CommunicatorBatch(this, comm, s));
    }

    @Override
    String reads() {
        return "HcclCommunicator(rank " + comm.rank() + "/" + comm.size() + ", device " + comm.device()
                + ", HCCL buffer " + (comm.bufferSize() >> 20) + " MiB)";
    }

    /** {@code HcclCommDestroy} (channels, threads and HCCL buffer with it), then the streams. */
    @Override
    void closeCore() {
        comm.close();
    }

    /** The region holding [address, address + length), or null. */
    private DeviceRegion regionOf(long address, long length) {
        return findTracked(DeviceRegion.class, d -> address >= d.address && address + length <= d.address + d.size);
    }

    private final class DeviceRegion implements Region {
        final String tag;
        final long address;
        final long size;
        final ByteBuffer mirror;
        final long mirrorAddress;

        DeviceRegion(String tag, long address, long size) {
            this.tag = tag;
            this.address = address;
            this.size = size;
            this.mirror = ByteBuffer.allocateDirect((int) size);
            this.mirrorAddress = com.sun.jna.Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(mirror));
        }

        @Override
        public String tag() {
            return tag;
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long size() {
            return size;
        }

        /** The offset into this member's HCCL buffer: what a peer's read resolves against its channel's base. */
        @Override
        public long readSource(long offset) {
            return address - comm.bufferAddress() + offset;
        }

        @Override
        public ByteBuffer buffer() {
            return mirror.duplicate().clear();
        }

        @Override
        public void commit(long offset, long length) throws TransportException {
            if (offset < 0 || length < 0 || offset > size - length) {
                throw new IndexOutOfBoundsException("commit of [" + offset + ", +" + length + ") in " + tag + " of "
                        + size + " bytes");
            }
            try {
                Acl.toDevice(comm.device(), address + offset, mirrorAddress + offset, length);
            } catch (HcommException e) {
                throw wrap(e);
            }
        }

        /** Device to mirror, after a read landed at {@code dst}. */
        void land(long dst, long length) {
            Acl.toHost(comm.device(), mirrorAddress + (dst - address), dst, length);
        }

        @Override
        public void close() {
            forget(this); // the bytes stay carved: the HCCL buffer goes back whole, with the communicator
        }
    }

    /** Copies a read that landed at {@code dst} to its region's host mirror (none outside a live region). */
    void land(long dst, long length) {
        DeviceRegion r = regionOf(dst, length);
        if (r != null) {
            r.land(dst, length);
        }
    }

    /** Ends a batch: its stream goes back to the pool unless the transport closed. */
    void retire(CommunicatorBatch batch, CommStream stream) {
        forget(batch);
        synchronized (this) {
            if (!isClosed()) {
                idleStreams.push(stream);
            }
        }
    }
}
