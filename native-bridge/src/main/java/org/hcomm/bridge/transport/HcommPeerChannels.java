package org.hcomm.bridge.transport;

import java.util.List;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelStatus;
import org.hcomm.bridge.install.Provider;

/**
 * {@link PeerChannels} of an {@link HcommTransport}: one HComm {@link ChannelSet} and, per channel, its peer and the
 * state {@link #poll()} last saw. Leaves the transport's open resources when closed.
 */
final class HcommPeerChannels implements PeerChannels {
    private final ChannelSet set;
    private final Peer[] peers;
    private final TransportBase owner;

    HcommPeerChannels(ChannelSet set, List<PeerSpec> specs, TransportBase owner) {
        this.set = set;
        this.owner = owner;
        this.peers = new Peer[specs.size()];
        for (int i = 0; i < peers.length; i++) {
            peers[i] = new Peer(set.channel(i), specs.get(i).peerId());
        }
    }

    /** The HComm channels of this batch. */
    ChannelSet set() {
        return set;
    }

    @Override
    public int size() {
        return peers.length;
    }

    @Override
    public PeerChannel channel(int index) {
        return peers[index];
    }

    @Override
    public synchronized boolean poll() {
        boolean settled = true;
        for (Peer p : peers) {
            settled &= p.state != State.CONNECTING;
        }
        if (settled) {
            return true;
        }
        List<ChannelStatus> statuses = set.statuses();
        settled = true;
        for (int i = 0; i < peers.length; i++) {
            Peer p = peers[i];
            ChannelStatus s = statuses.get(i);
            if (p.state == State.CONNECTING) {
                if (s == ChannelStatus.READY) {
                    p.path = HcommNative.provider() == Provider.SOFT ? p.channel.dataPath() : "hcomm";
                    p.state = State.READY;
                } else if (s.isFailure()) {
                    p.failure = s.name();
                    p.state = State.FAILED;
                }
            }
            settled &= p.state != State.CONNECTING;
        }
        return settled;
    }

    @Override
    public synchronized void close() {
        owner.forget(this);
        set.close();
    }

    /** One channel to one peer: the HComm channel an {@link HcommTransport} batch reads on, and its state. */
    static final class Peer implements PeerChannels.PeerChannel {
        final ChannelSet.Channel channel;
        final String peerId;
        volatile PeerChannels.State state = PeerChannels.State.CONNECTING;
        volatile String failure;
        volatile String path;

        Peer(ChannelSet.Channel channel, String peerId) {
            this.channel = channel;
            this.peerId = peerId;
        }

        @Override
        public String peerId() {
            return peerId;
        }

        @Override
        public String name() {
            return channel.name();
        }

        @Override
        public PeerChannels.State state() {
            return state;
        }

        @Override
        public String failure() {
            return failure;
        }

        @Override
        public String path() {
            return path;
        }
    }
}
