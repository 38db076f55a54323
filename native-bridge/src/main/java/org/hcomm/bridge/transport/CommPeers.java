package org.hcomm.bridge.transport;

import java.util.List;

/**
 * The channels of a {@link CommunicatorTransport}, as {@link PeerChannels}: acquired when the communicator formed, so
 * READY at once (or FAILED for a peer that is not a member); nothing to poll, nothing to release.
 */
final class CommPeers implements PeerChannels {
    /**
     * A communicator's channel to one member as acquired: its handle, the member's HCCL buffer as reads over it name
     * it ({@code HcclChannelGetHcclBuffer}: base and size, read once at acquire), and whether it is RoCE.
     */
    record Link(long handle, long base, long size, boolean roce) {}

    /** One member's channel ({@code link} null: no channel, {@code failure} says why). */
    record Peer(String peerId, String name, Link link, String failure) implements PeerChannels.PeerChannel {
        @Override
        public PeerChannels.State state() {
            return link != null ? PeerChannels.State.READY : PeerChannels.State.FAILED;
        }

        @Override
        public String path() {
            return null;
        }
    }

    private final List<Peer> peers;

    CommPeers(List<Peer> peers) {
        this.peers = peers;
    }

    @Override
    public int size() {
        return peers.size();
    }

    @Override
    public PeerChannel channel(int index) {
        return peers.get(index);
    }

    @Override
    public boolean poll() {
        return true; // acquired when the communicator formed
    }

    @Override
    public void close() {}
}
