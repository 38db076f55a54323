package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageEnd;
import org.apache.spark.shuffle.hcomm.internal.rpc.Wire;
import org.apache.spark.shuffle.hcomm.internal.ui.ShuffleSummary;
import org.slf4j.Logger;

/**
 * The driver's view: every executor's endpoint and agent, which executors have channels for which stage attempt (its
 * {@link StageLedger}), and (in its {@link OutputDirectory}) every published map output. Provisions a stage attempt as
 * a full mesh of its executors (one channel per executor pair) and tells both ends; announces stage ends; asks the new
 * owner of moved map outputs to publish them; hands the executors' reports to the HComm tab's {@link TabContent}.
 * Thread-safe (one lock, which also guards the ledger, the directory and the tab's rows; nothing blocks under it).
 */
public final class DriverState {
    private static final Logger LOG = LogCategory.DRIVER_STATE.logger();
    /**
     * Where the shuffle manager (and the example jobs and benchmarks, through {@link #current()}) find the driver
     * state of this JVM: set by the driver component at init, cleared at shutdown.
     */
    private static final AtomicReference<DriverState> CURRENT = new AtomicReference<>();

    private record ExecutorInfo(String executorId, String host, byte[] endpoint, int port, RpcEndpointRef agent,
            boolean communicator) {
    }

    private static final long MOVED_ASK_SECONDS = 10;

    private final String appTag;
    private final ShuffleMetrics metrics = ShuffleMetrics.forDriver();
    private final CommunicatorFormer former;
    private final Map<String, ExecutorInfo> executors = new LinkedHashMap<>();
    /** The NPU of each executor on the communicator path. */
    private final NpuAssignment devices = new NpuAssignment();
    private final OutputDirectory directory = new OutputDirectory(executors::containsKey);
    private final StageLedger stages = new StageLedger();
    /** The HComm tab's rows, guarded by this object's lock. */
    private final TabContent tab;
    private long registrations; // executors registered so far; a plan needs extending only when it moved

    /** The driver state of this JVM, or null when the plugin's driver component is not running here. */
    public static DriverState current() {
        return CURRENT.get();
    }

    /** Makes this the JVM's driver state (the driver component's init). */
    void install() {
        CURRENT.set(this);
    }

    /** Stops being the JVM's driver state (the driver component's shutdown). */
    void uninstall() {
        CURRENT.compareAndSet(this, null);
        former.close();
    }

    DriverState() {
        this(new CommunicatorFormer(3000, 120_000));
    }

    DriverState(CommunicatorFormer former) {
        // channel names carry the application, so two applications on the same hosts never pair up
        this.appTag = Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() >>> 16);
        this.former = former;
        // the tab asks these under this lock: whether an attempt ended, an executor's host (or null)
        this.tab = new TabContent(this, stages::ended,
                id -> executors.containsKey(id) ? executors.get(id).host() : null, former);
        former.onFormed(this::reprovisionAll);
    }

    /**
     * After a communicator formed: every member reads in a new one, whose stage channels know no running stage yet,
     * so every stage attempt that has not ended is provisioned again (executors skip the peers they already have).
     */
    private void reprovisionAll() {
        List<StageAttempt> running;
        synchronized (this) {
            running = stages.forgetMeshes();
        }
        running.forEach(this::provision);
    }

    /** The members of the formed communicator (communicator path), in rank order, or null while there is none. */
    public List<String> communicatorMembers() {
        return former.members();
    }

    /** The epoch of the latest communicator formed or being formed (the communicator path): 0 before the first. */
    public long communicatorEpoch() {
        return former.epoch();
    }

    /** Whether a communicator is about to form for the registered executors (the communicator path). */
    public boolean communicatorPending() {
        return former.pending();
    }

    /**
     * The NPU (logical id) of an executor on the communicator path, or -1: Spark's resource, or the one the driver
     * assigned it.
     */
    public synchronized int communicatorDevice(String executorId) {
        return devices.device(executorId);
    }

    /** Why the latest attempt to form the communicator failed, or null. */
    public String communicatorFailure() {
        return former.lastFailure();
    }

    /** The executors on the communicator path, for the former. Call with this locked. */
    private List<CommunicatorFormer.Member> communicatorCandidates() {
        List<CommunicatorFormer.Member> out = new ArrayList<>();
        for (ExecutorInfo e : executors.values()) {
            if (e.communicator()) {
                out.add(new CommunicatorFormer.Member(e.executorId(), e.host(), e.agent(),
                        devices.device(e.executorId()), e.port()));
            }
        }
        return out;
    }

    ShuffleMetrics metrics() {
        return metrics;
    }

    /** Handles one packed message from an executor; returns the packed reply (or null). */
    Object receive(Object wire) {
        Wire.Packet packet = Wire.unpack(wire);
        Object reply = handle(packet.message(), packet.ref());
        return reply == null ? null : Wire.pack((java.io.Serializable) reply);
    }

    private Object handle(Object message, RpcEndpointRef ref) {
        if (message instanceof Messages.RegisterExecutor r) {
            register(r, ref);
            return Messages.Ack.OK;
        } else if (message instanceof Messages.PublishedBatch b) {
            b.outputs().forEach(this::published);
            return null;
        } else if (message instanceof Messages.LookupShuffle l) {
            return lookup(l.shuffleId());
        } else if (message instanceof Messages.PublishMoved m) {
            return publishMoved(m);
        } else if (message instanceof Messages.EnsureStage e) {
            provision(new StageAttempt(e.stageId(), e.attempt()));
            return Messages.Ack.OK;
        } else if (message instanceof Messages.StageReport s) {
            report(s);
            return null;
        } else if (message instanceof Messages.PairPoisoned p) {
            poisoned(p);
            return null;
        } else if (message instanceof Messages.MetricsReport m) {
            metrics.report(m.executorId(), m.totals());
            tab.report(m.executorId(), new StageAttempt(m.stageId(), m.attempt()), m.totals());
            return null;
        }
        throw new IllegalArgumentException("unknown message " + message);
    }

    /** A pair's channel is poisoned: re-form the communicator, unless one of them is gone (its removal re-forms). */
    private synchronized void poisoned(Messages.PairPoisoned p) {
        if (executors.containsKey(p.executorId()) && executors.containsKey(p.peerId())) {
            former.reform(p.epoch(), "executor " + p.executorId() + "'s channel to executor " + p.peerId()
                    + " is poisoned by a failed window exchange (" + p.why() + ")");
        }
    }

    private synchronized void register(Messages.RegisterExecutor r, RpcEndpointRef agent) {
        if (agent == null) {
            throw new IllegalArgumentException("executor " + r.executorId() + " registered without its agent");
        }
        ExecutorInfo joining = new ExecutorInfo(r.executorId(), r.host(), r.endpoint(), r.port(), agent,
                r.communicator());
        executors.put(r.executorId(), joining);
        registrations++;
        // the newcomer hears of every other executor, each other one of the newcomer (sent under the lock, so every
        // executor hears of peers in the order they came and went); stage attempts going get channels to it
        List<Messages.Peer> others = new ArrayList<>();
        Object toOthers = Wire.pack(new Messages.Peers(appTag, List.of(peer(joining)), List.of())); // packed once
        for (ExecutorInfo e : executors.values()) {
            if (e != joining) {
                others.add(peer(e));
                e.agent().send(toOthers);
            }
        }
        tell(joining, new Messages.Peers(appTag, others, List.of()));
        for (StageAttempt stage : stages.joined(joining.executorId(), registrations)) {
            tell(joining, new Messages.ProvisionStage(stage.stageId(), stage.attempt()));
        }
        if (r.communicator()) {
            int device = devices.register(r.executorId(), r.host(), r.device());
            LOG.info("HComm shuffle: executor {} on {} registered for the communicator path, NPU {} ({})",
                    r.executorId(), r.host(), device, r.device() >= 0 ? "Spark's resource" : "the lowest free there");
            former.membersChanged(communicatorCandidates());
        } else {
            LOG.info("HComm shuffle: executor {} registered its endpoint on {}:{}", r.executorId(), r.host(),
                    r.port());
        }
    }

    private synchronized void published(Messages.Published p) {
        directory.published(p);
    }

    /**
     * Asks the executor that Spark's tracker now names as the owner of these map outputs to publish them, records
     * what it published, and answers with the shuffle's directory. The ask waits on the plugin's RPC thread, at most
     * {@link #MOVED_ASK_SECONDS} (only readers of outputs that moved, e.g. off a decommissioned executor, ever cause
     * one; the executor answers from its own files without asking the driver anything).
     */
    private Messages.ShuffleLocations publishMoved(Messages.PublishMoved m) {
        ExecutorInfo owner;
        synchronized (this) {
            owner = executors.get(m.executorId());
        }
        if (owner != null) {
            try {
                Object reply = owner.agent().askSync(Wire.pack(new Messages.PublishLocal(m.shuffleId(), m.mapIds())),
                        new org.apache.spark.rpc.RpcTimeout(
                                scala.concurrent.duration.FiniteDuration.apply(MOVED_ASK_SECONDS, "s"),
                                "spark.shuffle.hcomm (publish moved map outputs)"),
                        scala.reflect.ClassTag$.MODULE$.apply(Object.class));
                Messages.Moved moved = (Messages.Moved) Wire.reply(reply);
                synchronized (this) { // the executor or the shuffle may have gone during the ask
                    directory.moved(m.executorId(), m.shuffleId(), moved.published());
                }
                LOG.info("HComm shuffle: executor {} published {} moved map outputs of shuffle {}{}", m.executorId(),
                        moved.published().size(), m.shuffleId(),
                        moved.missing() == null ? "" : "; not there: " + moved.missing());
            } catch (Exception e) { // askSync also throws undeclared checked ones (a timeout, the agent's failure)
                LOG.warn("HComm shuffle: executor {} did not publish the map outputs of shuffle {} moved to it",
                        m.executorId(), m.shuffleId(), e);
            }
        }
        return lookup(m.shuffleId());
    }

    private synchronized Messages.ShuffleLocations lookup(int shuffleId) {
        return directory.lookup(shuffleId);
    }

    /**
     * Tells every registered executor not yet in the stage attempt's mesh to create its ends of the attempt's channels
     * (one message of a few bytes, hence one HcommChannelCreate, per executor: what the driver sends per stage grows
     * with the executors, not with their pairs). Idempotent.
     */
    synchronized void provision(StageAttempt stage) {
        List<String> tell = stages.provision(stage, executors.keySet(), registrations);
        if (!tell.isEmpty()) {
            Object order = Wire.pack(new Messages.ProvisionStage(stage.stageId(), stage.attempt())); // packed once
            for (String id : tell) {
                executors.get(id).agent().send(order);
            }
        }
    }

    private static Messages.Peer peer(ExecutorInfo e) {
        return new Messages.Peer(e.executorId(), e.endpoint(), e.port());
    }

    /** Sends to an executor's agent (asynchronous: Spark's RPC queues it, in order per executor). */
    private static void tell(ExecutorInfo e, java.io.Serializable message) {
        e.agent().send(Wire.pack(message));
    }

    /** Tells every executor of the stage attempt's mesh to destroy its channels. */
    void endStage(StageAttempt stage) {
        List<ExecutorInfo> members = new ArrayList<>();
        synchronized (this) {
            List<String> tell = stages.end(stage, executors::containsKey);
            if (tell == null) {
                return;
            }
            tell.forEach(id -> members.add(executors.get(id)));
        }
        for (ExecutorInfo e : members) {
            e.agent().send(Wire.pack(new Messages.EndStage(stage.stageId(), stage.attempt())));
        }
    }

    synchronized void executorRemoved(String executorId) {
        ExecutorInfo gone = executors.remove(executorId);
        if (gone != null) {
            Object left = Wire.pack(new Messages.Peers(appTag, List.of(), List.of(executorId)));
            executors.values().forEach(e -> e.agent().send(left));
            if (gone.communicator()) {
                devices.remove(executorId);
                former.membersChanged(communicatorCandidates());
            }
        }
        directory.executorRemoved(executorId);
        metrics.executorRemoved(executorId); // what it held live went with it
    }

    public synchronized void shuffleRemoved(int shuffleId) {
        directory.shuffleRemoved(shuffleId);
    }

    private void report(Messages.StageReport s) {
        StageAttempt stage = new StageAttempt(s.stageId(), s.attempt());
        synchronized (this) {
            metrics.report(s.executorId(), s.totals());
            stages.reported(stage, new StageEnd(s.destroyCalls(), s.channelsDestroyed()));
        }
        tab.report(s.executorId(), stage, s.totals());
    }

    /** What the HComm tab shows, and what the driver component posts of it as events. */
    TabContent tab() {
        return tab;
    }

    /** What the HComm tab shows, as of now: per stage attempt, per executor, and the communicator. */
    public ShuffleSummary summary() {
        return tab.summary();
    }

    /**
     * For tests and the benchmarks: the destroy calls a stage attempt's end is to bring, one per live executor that
     * holds channel ends of it (0 for a stage without a parent stage: it reads no shuffle and gets no channels), or -1
     * while it has not ended (or ended too long ago to be remembered). Reports are
     * complete when {@link #destroyCallsOf} reaches it.
     */
    public synchronized int destroyCallsExpected(int stageId, int attempt) {
        return stages.destroyCallsExpected(new StageAttempt(stageId, attempt));
    }

    /** For tests and the example job: destroy calls the executors reported for a stage attempt. */
    public synchronized int destroyCallsOf(int stageId, int attempt) {
        return stages.reportedEnd(new StageAttempt(stageId, attempt)).destroyCalls();
    }

    /**
     * For tests: channel ends the executors reported destroyed for a stage attempt (per stage, unlike the
     * cumulative metrics, so no baseline read before the stage can be stale).
     */
    public synchronized int channelsDestroyedOf(int stageId, int attempt) {
        return stages.reportedEnd(new StageAttempt(stageId, attempt)).channelsDestroyed();
    }

    /** For tests and the example job: the cluster total of a metric of the HcommShuffle source. */
    public long clusterTotal(String metric) {
        return metrics.clusterTotal(metric);
    }

    /** Number of executors whose endpoint is registered. */
    public synchronized int registeredExecutors() {
        return executors.size();
    }
}
