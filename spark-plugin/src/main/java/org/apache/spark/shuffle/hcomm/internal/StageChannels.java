package org.apache.spark.shuffle.hcomm.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.PeerSpec;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An executor's channels, grouped by stage attempt: created when the driver provisions a stage (one
 * HcommChannelCreate per provisioning), driven to READY by one background poller, borrowed by that stage's reduce
 * tasks, and destroyed in one HcommChannelDestroy when the driver announces the stage attempt's end. Thread-safe;
 * owns every channel it created.
 */
final class StageChannels implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StageChannels.class);
    private static final long END_WAIT_MS = 30_000;

    /** A stage attempt. */
    record StageKey(int stageId, int attempt) {
        @Override
        public String toString() {
            return "stage " + stageId + "." + attempt;
        }
    }

    /** What an end did, for the driver's report. */
    record Ended(int destroyCalls, int channelsDestroyed) {
        static final Ended NOTHING = new Ended(0, 0);

        /** What two ends did together (the driver sums the executors' reports of one stage attempt). */
        Ended plus(Ended other) {
            return new Ended(destroyCalls + other.destroyCalls, channelsDestroyed + other.channelsDestroyed);
        }
    }

    private static final class Group {
        final List<PeerChannels> batches = new ArrayList<>();
        final Map<String, PeerChannels.PeerChannel> byPeer = new HashMap<>();
        final Map<PeerChannels, Long> pendingSince = new LinkedHashMap<>();
        int leases;
        boolean ended;
    }

    private final Transport transport;
    private final ShuffleMetrics metrics;
    private final String executorId;
    private final Map<StageKey, Group> groups = new HashMap<>();
    private final Thread poller;
    private boolean closed;

    StageChannels(Transport transport, ShuffleMetrics metrics, String executorId) {
        this.transport = transport;
        this.metrics = metrics;
        this.executorId = executorId;
        this.poller = new Thread(this::pollLoop, "hcomm-channel-poller");
        this.poller.setDaemon(true);
        this.poller.start();
    }

    /** Creates this executor's ends of the stage's channels to peers it has none to yet. */
    void provision(StageKey key, List<Messages.PeerInfo> peers) {
        synchronized (this) {
            Group g = groups.computeIfAbsent(key, k -> new Group());
            if (closed || g.ended) {
                return;
            }
            List<PeerSpec> specs = new ArrayList<>();
            for (Messages.PeerInfo p : peers) {
                if (!g.byPeer.containsKey(p.executorId())) {
                    specs.add(new PeerSpec(p.executorId(), p.endpoint(), p.serverPort(), p.localIsServer(),
                            p.channelName()));
                }
            }
            if (specs.isEmpty()) {
                return;
            }
            try {
                PeerChannels batch = transport.connect(specs);
                g.batches.add(batch);
                g.pendingSince.put(batch, System.nanoTime());
                for (int i = 0; i < batch.size(); i++) {
                    g.byPeer.put(batch.channel(i).peerId(), batch.channel(i));
                }
                metrics.channelsCreated.inc(specs.size());
                LOG.debug("Executor {} created {} channels for {}", executorId, specs.size(), key);
            } catch (TransportException e) {
                LOG.warn("Executor {} could not create {} channels for {} ({} returned {}); their blocks fall back",
                        executorId, specs.size(), key, e.call(), e.code(), e);
            }
            notifyAll();
        }
    }

    private void pollLoop() {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                boolean pending = false;
                for (Group g : groups.values()) {
                    for (var it = g.pendingSince.entrySet().iterator(); it.hasNext();) {
                        var e = it.next();
                        if (e.getKey().poll()) {
                            metrics.channelSetup(System.nanoTime() - e.getValue());
                            it.remove();
                            notifyAll();
                        } else {
                            pending = true;
                        }
                    }
                }
                try {
                    if (pending) {
                        wait(1);
                    } else {
                        wait();
                    }
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** Registers a reader of the stage attempt: its channels are not destroyed until {@link #release}. */
    synchronized boolean acquire(StageKey key) {
        Group g = groups.computeIfAbsent(key, k -> new Group());
        if (g.ended || closed) {
            return false;
        }
        g.leases++;
        return true;
    }

    synchronized void release(StageKey key) {
        Group g = groups.get(key);
        if (g != null) {
            g.leases--;
            notifyAll();
        }
    }

    synchronized boolean isKnown(StageKey key, String peer) {
        Group g = groups.get(key);
        return g != null && g.byPeer.containsKey(peer);
    }

    /**
     * The READY channel to {@code peer} for the stage attempt, waiting up to {@code timeoutMs} for the driver's
     * provisioning and the handshake; null when there is none by then (or it failed).
     */
    synchronized PeerChannels.PeerChannel await(StageKey key, String peer, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Group g = groups.get(key);
            PeerChannels.PeerChannel ch = g == null ? null : g.byPeer.get(peer);
            if (ch != null && ch.state() != PeerChannels.State.CONNECTING) {
                return ch.state() == PeerChannels.State.READY ? ch : null;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || closed || (g != null && g.ended)) {
                return null;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /**
     * Ends the stage attempt: waits (bounded) for its readers, then destroys all its channels in one call.
     * Calls {@code report} with what it did when it destroyed anything.
     */
    void end(StageKey key, Consumer<Ended> report) {
        Ended ended;
        synchronized (this) {
            Group g = groups.computeIfAbsent(key, k -> new Group());
            if (g.ended) {
                return;
            }
            g.ended = true;
            notifyAll();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(END_WAIT_MS);
            while (g.leases > 0 && System.nanoTime() < deadline) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, Math.max(1, deadline - System.nanoTime()));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (g.leases > 0) {
                LOG.warn("Executor {}: {} still has {} readers after {} ms; destroying its channels anyway",
                        executorId, key, g.leases, END_WAIT_MS);
            }
            ended = destroy(g);
            g.batches.clear();
            g.byPeer.clear();
            g.pendingSince.clear();
            // keep the ended marker so late provisioning or readers of this attempt do not recreate channels
        }
        if (ended.channelsDestroyed() > 0) {
            LOG.debug("Executor {} destroyed {} channels of {} in {} call(s)", executorId, ended.channelsDestroyed(),
                    key, ended.destroyCalls());
            report.accept(ended);
        }
    }

    private Ended destroy(Group g) {
        int n = 0;
        for (PeerChannels b : g.batches) {
            n += b.size();
        }
        if (n == 0) {
            return Ended.NOTHING;
        }
        transport.destroyTogether(List.copyOf(g.batches));
        metrics.destroyCalls.inc();
        metrics.channelsDestroyed.inc(n);
        return new Ended(1, n);
    }

    /** Destroys what is left (executor shutdown). */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (Group g : groups.values()) {
                if (!g.batches.isEmpty()) {
                    destroy(g);
                    g.batches.clear();
                }
            }
            groups.clear();
            notifyAll();
        }
        try {
            poller.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
