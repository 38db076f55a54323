package org.apache.spark.shuffle.hcomm.internal.driver;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.Wire;
import org.slf4j.Logger;

/**
 * Forms the HCCL communicators of the executors on the communicator path (Atlas A2/A3), on the driver. A
 * communicator is collective and fixed in size, executors come and go: whenever the set of such executors has been
 * unchanged for the settle time and differs from the current communicator's members, the former forms a new
 * communicator of them, its epoch one more than the last (the first member makes the root info, every member joins,
 * acquires its channels and builds its parts, all within the form timeout); only when every member did does the
 * former tell them all that it is ready, and each then reads in the new one and retires its old one, so no member
 * reads in a communicator where another cannot yet serve its outputs; when one did not, it tells them all that it
 * failed, and why. 1 + 2N asks per forming of N members. Until an executor's first communicator is ready, and for executors that are not members, blocks go by
 * Spark's fetch; no stage waits. Thread-safe; forming runs on its own daemon thread, never on Spark's RPC threads.
 */
final class CommunicatorFormer implements AutoCloseable {
    private static final Logger LOG = LogCategory.DRIVER_STATE.logger();

    /** One executor on the communicator path, as it registered, and the NPU it uses (logical id). */
    /** {@code windowPort}: where its window server listens (0: none, its outputs are read by Spark's fetch). */
    record Member(String executorId, String host, RpcEndpointRef agent, int device, int windowPort) {
        Member(String executorId, String host, RpcEndpointRef agent, int device) {
            this(executorId, host, agent, device, 0);
        }
    }

    private final long settleMillis;
    private final long formTimeoutMillis;
    private final ScheduledExecutorService timer;
    private List<Member> candidates = List.of();
    private ScheduledFuture<?> pending;
    private long epoch;
    private List<String> formed; // the members of the current communicator, or null
    private Runnable onFormed = () -> { };
    private String lastFailure; // why the latest forming failed, or null
    private List<String> failedMembers; // whom the latest failed forming was for, or null
    private long stale = -1; // the epoch a poisoned pair asked to re-form with the same members, or -1

    CommunicatorFormer(long settleMillis, long formTimeoutMillis) {
        this.settleMillis = settleMillis;
        this.formTimeoutMillis = formTimeoutMillis;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hcomm-communicator-former");
            t.setDaemon(true);
            return t;
        });
    }

    /** What runs after a communicator formed (the driver provisions the running stages again). */
    synchronized void onFormed(Runnable r) {
        onFormed = r;
    }

    /**
     * The executors on the communicator path now (registration order); once they settle, forms their communicator
     * when they are not the current one's members.
     */
    synchronized void membersChanged(List<Member> now) {
        candidates = List.copyOf(now);
        if (pending != null) {
            pending.cancel(false);
        }
        pending = timer.schedule(this::formIfSettled, settleMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * A member's channel to another is poisoned in communicator {@code e}: once the executors stayed unchanged for the
     * settle time, forms a new one of them (once per epoch; a report about an earlier communicator changes nothing).
     * A poisoning often comes with a member's death, whose removal reaches the former a little later: waiting for
     * the settle time, as for any change, keeps the dead member out of the new communicator (a join would wait for
     * it until the form timeout).
     */
    synchronized void reform(long e, String why) {
        if (e != epoch || formed == null || stale == e) {
            return;
        }
        stale = e;
        LOG.warn("HComm shuffle: communicator {} is to be re-formed with the executors there are: {}", e, why);
        if (pending != null) {
            pending.cancel(false);
        }
        pending = timer.schedule(this::formIfSettled, settleMillis, TimeUnit.MILLISECONDS);
    }

    /** The members of the formed communicator, in rank order, or null while none is formed. */
    synchronized List<String> members() {
        return formed;
    }

    /**
     * Whether a communicator is to form for the executors there are now (two or more, not the current one's members,
     * and not a set whose forming just failed): what a job that wants one-sided reads from its first stage waits for.
     */
    /** The epoch of the latest communicator formed or being formed: 0 before the first. */
    synchronized long epoch() {
        return epoch;
    }

    synchronized boolean pending() {
        List<String> ids = candidates.stream().map(Member::executorId).toList();
        return ids.size() >= 2 && !ids.equals(formed) && !ids.equals(failedMembers);
    }

    /** Why the latest attempt to form a communicator failed, or null. */
    synchronized String lastFailure() {
        return lastFailure;
    }

    private void formIfSettled() {
        List<Member> members;
        long e;
        synchronized (this) {
            List<String> ids = candidates.stream().map(Member::executorId).toList();
            if (candidates.size() < 2 || (ids.equals(formed) && stale != epoch)) {
                return; // one executor reads nothing remote; the same members have their communicator
            }
            members = candidates;
            e = ++epoch;
            stale = -1;
        }
        long start = System.nanoTime();
        String failure = form(e, members);
        Runnable after;
        synchronized (this) {
            after = failure == null ? onFormed : null;
            lastFailure = failure;
            failedMembers = failure == null ? null : members.stream().map(Member::executorId).toList();
            if (failure == null) {
                formed = members.stream().map(Member::executorId).toList();
                LOG.info("HComm shuffle: communicator {} formed by {} executors {} in {} ms", e, members.size(),
                        formed, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            } else {
                LOG.warn("HComm shuffle: communicator {} of executors {} did not form ({}); blocks go by Spark's "
                        + "fetch (or their earlier communicator) until the executors change and a new one forms", e,
                        members.stream().map(Member::executorId).toList(), failure);
            }
        }
        if (after != null) {
            after.run();
        }
    }

    /**
     * Forms communicator {@code e} of {@code members}, then tells every member whether it formed (ready or failed);
     * null when it formed, else why not.
     */
    private String form(long e, List<Member> members) {
        String failure = NpuAssignment.conflict(members);
        if (failure == null) {
            failure = join(e, members);
        }
        if (failure == null) {
            failure = askAll(members, new Messages.CommunicatorReady(e), "communicator ready");
        } else {
            String failed = askAll(members, new Messages.CommunicatorFailed(e, failure), "communicator failed");
            if (failed != null) {
                LOG.warn("HComm shuffle: not every member heard that communicator {} failed: {}", e, failed);
            }
        }
        return failure;
    }

    /** Asks the first member for the root info, then every member to join; null when all joined, else why not. */
    private String join(long e, List<Member> members) {
        byte[] root;
        try {
            Messages.RootInfo info = (Messages.RootInfo) Wire.reply(members.get(0).agent().askSync(
                    Wire.pack(new Messages.RootInfoAsk(e, members.get(0).device())), timeout(30_000, "root info"),
                    scala.reflect.ClassTag$.MODULE$.apply(Object.class)));
            root = info.bytes();
        } catch (Exception ex) { // askSync also throws undeclared checked ones
            return "executor " + members.get(0).executorId() + " could not make the root info: " + ex;
        }
        List<String> ids = members.stream().map(Member::executorId).toList();
        List<String> hosts = members.stream().map(Member::host).toList();
        List<Integer> ports = members.stream().map(Member::windowPort).toList();
        // every ask at once (Spark's asynchronous ask): a join returns only when all members joined
        RpcTimeout joinTimeout = timeout(formTimeoutMillis + 15_000, "join communicator");
        List<scala.concurrent.Future<Object>> joins = new ArrayList<>();
        for (int rank = 0; rank < members.size(); rank++) {
            Messages.JoinCommunicator join = new Messages.JoinCommunicator(e, root, ids, hosts, rank,
                    members.get(rank).device(), ports);
            joins.add(members.get(rank).agent().ask(Wire.pack(join), joinTimeout,
                    scala.reflect.ClassTag$.MODULE$.apply(Object.class)));
        }
        return failures(members, joins, joinTimeout);
    }

    /** Asks every member at once and waits for all answers; null when all said ok, else every failure. */
    private static String askAll(List<Member> members, java.io.Serializable ask, String what) {
        RpcTimeout t = timeout(30_000, what);
        Object packed = Wire.pack(ask);
        List<scala.concurrent.Future<Object>> asks = new ArrayList<>();
        for (Member m : members) {
            asks.add(m.agent().ask(packed, t, scala.reflect.ClassTag$.MODULE$.apply(Object.class)));
        }
        return failures(members, asks, t);
    }

    /**
     * Null when every member answered ok, else each failure in rank order, joined: one member's refusal makes the
     * others time out, and the refusal is the cause worth naming.
     */
    private static String failures(List<Member> members, List<scala.concurrent.Future<Object>> asks, RpcTimeout t) {
        List<String> whys = new ArrayList<>();
        for (int i = 0; i < asks.size(); i++) {
            try {
                Messages.Ack ack = (Messages.Ack) Wire.reply(t.awaitResult(asks.get(i)));
                if (!ack.ok()) {
                    whys.add("executor " + members.get(i).executorId() + ": " + ack.reason());
                }
            } catch (Exception ex) { // awaitResult also throws undeclared checked ones (a timeout, the agent's failure)
                whys.add("executor " + members.get(i).executorId() + ": " + ex);
            }
        }
        return whys.isEmpty() ? null : String.join("; ", whys);
    }

    private static RpcTimeout timeout(long millis, String what) {
        return new RpcTimeout(scala.concurrent.duration.FiniteDuration.apply(millis, "ms"),
                "spark.shuffle.hcomm (" + what + ")");
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
