package org.hcomm.bridge.transport;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.hcomm.bridge.communicator.Communicator;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.HcommAbi;

/**
 * {@link Transport} on an HCCL communicator (Atlas A2/A3) whose HCCL buffer is a window ({@link #windows()},
 * docs/ARCHITECTURE.md, "The HCCL buffer as a window"): owners stream requested bytes through bounded slices of it,
 * so nothing is carved from it, no file is registered and no read batch runs on it ({@link #allocate},
 * {@link #register}, {@link #mapFile}, {@link #connect}, {@link #newReadBatch} refuse). Its channels are the
 * communicator's, acquired to every other member when it formed ({@link #formWindowed}) with the window's notifies,
 * and ended only with it.
 *
 * <p>Addressing, as CANN's transports read: a window's slot is an offset into a member's HCCL buffer, resolved
 * against the base {@code HcclChannelGetHcclBuffer} gave for the channel to that member (read once when it formed).
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

    /**
     * A communicator's channel to one member as acquired: its handle, the member's HCCL buffer as transfers over it
     * name it ({@code HcclChannelGetHcclBuffer}: base and size, read once at acquire), and whether it is RoCE.
     */
    record Link(long handle, long base, long size, boolean roce) {}

    /** Why there is no channel to a peer that is not a member. */
    public static final String NOT_A_MEMBER = "not a member of this communicator";

    private static final String WINDOWS_ONLY = "the communicator path moves bytes through windows of the HCCL buffer";

    private final Communicator comm;
    private final Map<String, Integer> rankOf = new HashMap<>();
    /** The channel to each rank (null for this one). */
    private final Link[] linkOfRank;
    private CommunicatorWindows windows;

    private CommunicatorTransport(Communicator comm, List<Member> members, Link[] linkOfRank) {
        this.comm = comm;
        for (int r = 0; r < members.size(); r++) {
            rankOf.put(members.get(r).peerId(), r);
        }
        this.linkOfRank = linkOfRank;
    }

    /** How the HCCL buffer is cut into windows: {@code slots} per window end, slices of {@code sliceBytes}. */
    public record WindowSpec(int slots, long sliceBytes, long timeoutMillis) {}

    /**
     * Joins the communicator as member {@code rank} of {@code members} (in rank order) and acquires a channel to
     * every other member, each carrying the window's notifies ({@link WindowLayout#notifyNum()}): HCCS to members on
     * this host, RoCE to the others. The HCCL buffer is a window ({@link #windows()}) cut as {@code spec} says. Blocks
     * until all members did the same, or fails after the connect timeout; a spec the buffer cannot hold fails the
     * forming ({@code IllegalArgumentException}'s text as the {@link TransportException}'s). Nothing is left on a
     * failure.
     */
    public static CommunicatorTransport formWindowed(byte[] rootInfo, List<Member> members, int rank, int device,
            int bufferMb, String name, WindowSpec spec) throws TransportException {
        Objects.requireNonNull(spec, "spec");
        requireLibrary();
        Communicator comm = null;
        try {
            comm = Communicator.join(rootInfo, members.size(), rank, device, bufferMb, name);
            WindowLayout layout = new WindowLayout(comm.bufferSize(), spec.slots(), spec.sliceBytes());
            Link[] links = new Link[members.size()];
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
                long[] got = comm.acquireChannels(ranks, protocols, layout.notifyNum());
                for (int i = 0; i < n; i++) {
                    long[] buffer = comm.peerBuffer(got[i]);
                    links[ranks[i]] = new Link(got[i], buffer[0], buffer[1],
                            protocols[i] == HcommAbi.COMM_PROTOCOL_ROCE);
                }
            }
            CommunicatorTransport t = new CommunicatorTransport(comm, members, links);
            t.windows = new CommunicatorWindows(t, comm, layout, spec.timeoutMillis());
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

    /** {@code HcclGetRootInfo} on {@code device}: what {@link #formWindowed} needs on every member, out of band. */
    public static byte[] rootInfo(int device) throws TransportException {
        try {
            return Communicator.rootInfo(device);
        } catch (HcommException e) {
            throw wrap(e);
        } catch (IllegalStateException e) {
            throw new TransportException("HcclGetRootInfo", -1, e.getMessage(), e);
        }
    }

    /** The windows of this member's HCCL buffer. */
    public CommunicatorWindows windows() {
        return windows;
    }

    /** The channel to member {@code peerId}, or null when it is not one. */
    Link linkTo(String peerId) {
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
    public Region allocate(String tag, long bytes) {
        throw new UnsupportedOperationException(WINDOWS_ONLY + ": " + tag + " cannot be carved from it");
    }

    @Override
    public Region register(String tag, long address, long bytes) {
        throw new UnsupportedOperationException(WINDOWS_ONLY + ": " + tag + " cannot be registered (Atlas A2/A3)");
    }

    @Override
    public Region mapFile(String tag, java.nio.file.Path file, long bytes) throws TransportException {
        throw new TransportException("HcclCommMemReg", 5, WINDOWS_ONLY + ": " + file
                + " cannot be registered (Atlas A2/A3)", null);
    }

    @Override
    public PeerChannels connect(List<PeerSpec> peers) {
        throw new UnsupportedOperationException(WINDOWS_ONLY + ": its channels are the communicator's");
    }

    @Override
    public void destroyTogether(List<PeerChannels> batches) {
        // a communicator's channels end with it (HcclChannelDestroy is CCU-only on A2/A3): nothing to release
    }

    @Override
    public ReadBatch newReadBatch() {
        throw new UnsupportedOperationException(WINDOWS_ONLY + ": no read batch runs on it");
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
}
