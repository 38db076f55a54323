package org.hcomm.bridge.transport;

import java.util.List;

/**
 * The channels of a {@link CommunicatorTransport}, as {@link PeerChannels}: acquired when the communicator formed, so
 * READY at once (or FAILED for a peer that is not a member); nothing to poll, nothing to release.
 */
final class CommPeers implements PeerChannels {
    /** One member's channel ({@code handle} 0: no channel, {@code failure} says why). */
    record Peer(String peerId, String name, long handle, String failure) implements PeerChannels.PeerChannel {
        @Override
        public PeerChannels.State state() {
            return handle != 0 ? PeerChannels.State.READY : PeerChannels.State.FAILED;
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
