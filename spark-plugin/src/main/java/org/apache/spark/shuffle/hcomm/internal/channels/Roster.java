package org.apache.spark.shuffle.hcomm.internal.channels;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.PeerSpec;

/**
 * The executors this one may make channels to, as the driver told it ({@link Messages.Peers}), and how a stage
 * attempt's channel to each is named and which end serves its handshake: both follow from the two executor ids, so
 * both ends agree without being told. Outlives the executor's one-sided parts (a new communicator keeps the peers).
 * Thread-safe.
 */
public final class Roster {
    private final String executorId;
    private final Map<String, Messages.Peer> peers = new LinkedHashMap<>();
    private String appTag = "";

    public Roster(String executorId) {
        this.executorId = executorId;
    }

    public String executorId() {
        return executorId;
    }

    /** Takes the driver's news; returns the peers that joined (not known before). */
    public synchronized List<Messages.Peer> apply(Messages.Peers news) {
        appTag = news.appTag();
        news.left().forEach(peers::remove);
        List<Messages.Peer> joined = new ArrayList<>();
        for (Messages.Peer p : news.joined()) {
            if (!p.executorId().equals(executorId) && peers.put(p.executorId(), p) == null) {
                joined.add(p);
            }
        }
        return joined;
    }

    synchronized List<Messages.Peer> peers() {
        return new ArrayList<>(peers.values());
    }

    /**
     * This executor's end of {@code stage}'s channel to {@code peer}: the executor whose id sorts first serves the
     * handshake on its listen port ({@code ownPort} when it is this one), and the name carries the application, the
     * stage attempt and both ids, server first.
     */
    synchronized PeerSpec spec(StageAttempt stage, Messages.Peer peer, int ownPort) {
        boolean serves = executorId.compareTo(peer.executorId()) < 0;
        String name = "hs" + appTag + "-s" + stage.stageId() + "a" + stage.attempt() + "-"
                + (serves ? executorId + "-" + peer.executorId() : peer.executorId() + "-" + executorId);
        return new PeerSpec(peer.executorId(), peer.endpoint(), serves ? ownPort : peer.port(), serves, name);
    }
}
