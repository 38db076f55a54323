package org.apache.spark.shuffle.hcomm.internal.channels;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageEnd;
import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.PeerSpec;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;

/**
 * An executor's channels, grouped by stage attempt: created when the driver provisions a stage (one
 * HcommChannelCreate per provisioning), driven to READY by one background poller, borrowed by that stage's reduce
 * tasks, and destroyed in one HcommChannelDestroy when the driver announces the stage attempt's end — at once when
 * no reader holds them, else by the last reader to let go, or by the poller when the readers overstay the end wait.
 * No call waits for readers, so one stage's slow reader never delays another stage's end. Thread-safe, one lock:
 * the agent provisions and ends, reduce tasks acquire, await and release, the poller polls and ends overdue
 * attempts; reports run outside the lock. Owns every channel it created.
 */
public final class StageChannels implements AutoCloseable {
    private static final Logger LOG = LogCategory.STAGE_CHANNELS.logger();
    /** How long an ended stage attempt's channels wait for readers still holding them. */
    private static final long END_WAIT_MS = 30_000;

    private static final class Group {
        final List<PeerChannels> batches = new ArrayList<>();
        final Map<String, PeerChannels.PeerChannel> byPeer = new HashMap<>();
        final Map<PeerChannels, Long> pendingSince = new LinkedHashMap<>();
        int leases;
        boolean ended;
        /** Its channels were destroyed: nothing read over them writes any more. */
        boolean destroyed;
        /** Set while an ended attempt waits for its readers: whom to tell, and until when to wait. */
        Consumer<StageEnd> report;
        long endDeadline;
    }

    private final Transport transport;
    private final ShuffleMetrics metrics;
    private final String executorId;
    private final Roster roster;
    private final Consumer<StageAttempt> destroyed;
    private final long endWaitNanos;
    private final Map<StageAttempt, Group> groups = new HashMap<>();
    private final Thread poller;
    private boolean closed;

    /**
     * @param destroyed told (under this object's lock, so it must not call back) which stage attempt's channels were
     *     just destroyed
     * @param roster the peers this executor may make channels to (the executor's, shared with other parts)
     */
    public StageChannels(Transport transport, ShuffleMetrics metrics, Roster roster,
            Consumer<StageAttempt> destroyed) {
        this(transport, metrics, roster, destroyed, END_WAIT_MS);
    }

    StageChannels(Transport transport, ShuffleMetrics metrics, Roster roster, Consumer<StageAttempt> destroyed,
            long endWaitMs) {
        this.transport = transport;
        this.metrics = metrics;
        this.roster = roster;
        this.executorId = roster.executorId();
        this.destroyed = destroyed;
        this.endWaitNanos = TimeUnit.MILLISECONDS.toNanos(endWaitMs);
        this.poller = new Thread(this::pollLoop, "hcomm-channel-poller");
        this.poller.setDaemon(true);
        this.poller.start();
    }

    /** Creates this executor's ends of the stage attempt's channels to every peer it has none to yet. */
    public void provision(StageAttempt key) {
        synchronized (this) {
            connect(key, groups.computeIfAbsent(key, k -> new Group()), roster.peers());
        }
    }

    /** Peers that joined: every stage attempt still going gets channels to them. */
    public void peersJoined(List<Messages.Peer> joined) {
        if (joined.isEmpty()) {
            return;
        }
        synchronized (this) {
            groups.forEach((key, g) -> connect(key, g, joined));
        }
    }

    /** One HcommChannelCreate for the group's channels to {@code peers} it has none to yet. Caller holds the lock. */
    private void connect(StageAttempt key, Group g, List<Messages.Peer> peers) {
        if (closed || g.ended) {
            return;
        }
        List<PeerSpec> specs = new ArrayList<>();
        for (Messages.Peer p : peers) {
            if (!g.byPeer.containsKey(p.executorId())) {
                specs.add(roster.spec(key, p, transport.listenPort()));
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

    private void pollLoop() {
        while (true) {
            List<Runnable> overdue;
            synchronized (this) {
                if (closed) {
                    return;
                }
                boolean pending = pollPending();
                overdue = finishOverdueEnds();
                if (overdue.isEmpty()) {
                    try {
                        idle(pending);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            overdue.forEach(Runnable::run); // outside the lock; each guards itself, so the poller outlives failures
        }
    }

    /** Polls every channel batch still connecting; whether any still is. Caller holds the lock. */
    private boolean pollPending() {
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
        return pending;
    }

    /** Destroys the channels of ended attempts whose readers overstayed; returns their reports. Lock held. */
    private List<Runnable> finishOverdueEnds() {
        List<Runnable> overdue = List.of();
        long now = System.nanoTime();
        for (var entry : groups.entrySet()) {
            Group g = entry.getValue();
            if (g.report != null && now - g.endDeadline >= 0) {
                LOG.warn("Executor {}: {} still has {} readers {} ms after its end; destroying its channels anyway",
                        executorId, entry.getKey(), g.leases, TimeUnit.NANOSECONDS.toMillis(endWaitNanos));
                if (overdue.isEmpty()) {
                    overdue = new ArrayList<>();
                }
                overdue.add(finishing(entry.getKey(), g));
            }
        }
        return overdue;
    }

    /**
     * Waits for the next thing to do: 1 ms while channels are connecting, else until the earliest end deadline, else
     * until notified. Caller holds the lock.
     */
    private void idle(boolean pending) throws InterruptedException {
        if (pending) {
            wait(1);
            return;
        }
        long now = System.nanoTime();
        long next = Long.MAX_VALUE;
        for (Group g : groups.values()) {
            if (g.report != null) {
                next = Math.min(next, g.endDeadline - now);
            }
        }
        if (next == Long.MAX_VALUE) {
            wait();
        } else {
            TimeUnit.NANOSECONDS.timedWait(this, Math.max(1, next));
        }
    }

    /** Registers a reader of the stage attempt: its channels are not destroyed until {@link #release}. */
    public synchronized boolean acquire(StageAttempt key) {
        Group g = groups.computeIfAbsent(key, k -> new Group());
        if (g.ended || closed) {
            return false;
        }
        g.leases++;
        return true;
    }

    /** Ends a reader's hold on the stage attempt; the last reader of an ended attempt destroys its channels. */
    public void release(StageAttempt key) {
        Runnable finish = null;
        synchronized (this) {
            Group g = groups.get(key);
            if (g == null) {
                return;
            }
            g.leases--;
            if (g.leases == 0 && g.report != null) {
                finish = finishing(key, g);
            }
        }
        if (finish != null) {
            finish.run();
        }
    }

    synchronized boolean isKnown(StageAttempt key, String peer) {
        Group g = groups.get(key);
        return g != null && g.byPeer.containsKey(peer);
    }

    /**
     * The READY channel to {@code peer} for the stage attempt, waiting up to {@code timeoutMs} for the driver's
     * provisioning and the handshake; null when there is none by then (or it failed).
     */
    public synchronized PeerChannels.PeerChannel await(StageAttempt key, String peer, long timeoutMs)
            throws InterruptedException {
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

    /** Whether the stage attempt's channels were destroyed (or the executor is shutting down). */
    public synchronized boolean channelsDestroyed(StageAttempt key) {
        Group g = groups.get(key);
        return closed || (g != null && g.destroyed);
    }

    /**
     * Whether the driver has ended the stage attempt (or the executor is shutting down), waiting up to
     * {@code timeoutMs} for that word.
     */
    public synchronized boolean awaitEnd(StageAttempt key, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Group g = groups.get(key);
            if (closed || (g != null && g.ended)) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /**
     * Ends the stage attempt: no reader can take its channels any more, and they are destroyed in one call as soon
     * as the readers holding them let go (at once when none does; after the end wait at the latest). Calls
     * {@code report} with what the destroy did, when it destroyed anything, on the thread that destroyed. Never
     * waits.
     */
    public void end(StageAttempt key, Consumer<StageEnd> report) {
        Runnable finish;
        synchronized (this) {
            Group g = groups.computeIfAbsent(key, k -> new Group());
            if (g.ended || closed) {
                return;
            }
            g.ended = true;
            g.report = report;
            notifyAll(); // readers waiting in await give up; the poller learns the deadline
            if (g.leases > 0) {
                g.endDeadline = System.nanoTime() + endWaitNanos;
                return;
            }
            finish = finishing(key, g);
        }
        finish.run();
    }

    /**
     * Destroys the ended group's channels (under the lock) and returns what remains to do outside it: telling the
     * end's report. The group stays, empty and ended, so late provisioning or readers do not recreate channels.
     */
    private Runnable finishing(StageAttempt key, Group g) {
        Consumer<StageEnd> report = g.report;
        g.report = null;
        StageEnd done = destroyEmptying(key, g);
        if (done.channelsDestroyed() == 0) {
            return () -> { };
        }
        return () -> {
            LOG.debug("Executor {} destroyed {} channels of {} in {} call(s)", executorId, done.channelsDestroyed(),
                    key, done.destroyCalls());
            try {
                report.accept(done);
            } catch (RuntimeException e) {
                LOG.warn("Executor {} could not report the end of {}", executorId, key, e);
            }
        };
    }

    /**
     * Destroys the group's channels and forgets them; a failure is logged, not thrown: the callers (the agent, a
     * reduce task finishing, the poller, shutdown) must not fail for it.
     */
    private StageEnd destroyEmptying(StageAttempt key, Group g) {
        StageEnd done;
        try {
            done = destroy(g);
        } catch (RuntimeException e) {
            LOG.warn("Executor {} could not destroy the channels of {}", executorId, key, e);
            return StageEnd.NOTHING;
        } finally {
            g.batches.clear();
            g.byPeer.clear();
            g.pendingSince.clear();
        }
        g.destroyed = true;
        try {
            destroyed.accept(key);
        } catch (RuntimeException e) {
            LOG.warn("Executor {}: the destroy of {}'s channels could not be acted on", executorId, key, e);
        }
        return done;
    }

    private StageEnd destroy(Group g) {
        int n = 0;
        for (PeerChannels b : g.batches) {
            n += b.size();
        }
        if (n == 0) {
            return StageEnd.NOTHING;
        }
        transport.destroyTogether(List.copyOf(g.batches));
        metrics.destroyCalls.inc();
        metrics.channelsDestroyed.inc(n);
        return new StageEnd(1, n);
    }

    /** Destroys what is left (executor shutdown). */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            groups.forEach(this::destroyEmptying);
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
