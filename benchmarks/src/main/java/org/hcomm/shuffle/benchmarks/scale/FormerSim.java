package org.hcomm.shuffle.benchmarks.scale;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.Wire;
import org.hcomm.bridge.communicator.Communicator;
import scala.concurrent.Future;
import scala.concurrent.Promise;
import scala.reflect.ClassTag;

/**
 * The REAL driver-side {@code CommunicatorFormer} forming one communicator of N simulated members: what it sends,
 * how many join asks it has in flight at once, how long the driver takes when joining costs nothing, and whether it
 * forms at all. Members are {@link RpcEndpointRef}s that answer as an executor's agent does: the root info at once, a
 * join once all N members asked (the collective init), or not ok when not all asked within the form timeout (CANN's
 * {@code HCCL_CONNECT_TIMEOUT}; members asked after that fail at once, the root being gone), and the ready (or
 * failed) ask that follows at once. The former is
 * package-private and has no door in the plugin's {@code ScaleSimAccess}, so it is reached by reflection (the class
 * path has no module boundary); nothing in it is changed.
 */
final class FormerSim {
    private static final String DRIVER = "org.apache.spark.shuffle.hcomm.internal.driver.";
    private static final SparkConf CONF = new SparkConf(false);
    private static final long SETTLE_MS = 10;

    /** One executor count. {@code wallNs}: from the end of the settle time to formed (or failed). */
    record FormRow(int n, boolean formed, String why, long wallNs, int asks, long askBytes, int maxJoinsInFlight,
            int joinsAsked, int outcomesAsked) {
    }

    private FormerSim() {
    }

    static FormRow run(int n, long formTimeoutMs) throws Exception {
        Class<?> formerClass = Class.forName(DRIVER + "CommunicatorFormer");
        Constructor<?> ctor = formerClass.getDeclaredConstructor(long.class, long.class);
        ctor.setAccessible(true);
        Class<?> memberClass = Class.forName(DRIVER + "CommunicatorFormer$Member");
        Constructor<?> memberCtor = memberClass.getDeclaredConstructor(String.class, String.class,
                RpcEndpointRef.class, int.class);
        memberCtor.setAccessible(true);
        Method changed = formerClass.getDeclaredMethod("membersChanged", List.class);
        Method members = formerClass.getDeclaredMethod("members");
        Method lastFailure = formerClass.getDeclaredMethod("lastFailure");
        Method close = formerClass.getDeclaredMethod("close");
        for (Method m : List.of(changed, members, lastFailure, close)) {
            m.setAccessible(true);
        }

        Collective collective = new Collective(n, formTimeoutMs);
        List<Object> candidates = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String id = Integer.toString(i + 1);
            candidates.add(memberCtor.newInstance(id, ProvisioningScaleSim.host(i / 8),
                    new MemberRef(id, 40000 + i, collective), i % 8)); // 8 NPUs per server, one executor each
        }
        Object former = ctor.newInstance(SETTLE_MS, formTimeoutMs);
        try {
            long start = System.nanoTime() + SETTLE_MS * 1_000_000L;
            changed.invoke(former, candidates);
            long deadline = System.nanoTime() + (formTimeoutMs * (n / 64 + 2) + 60_000) * 1_000_000L;
            while (members.invoke(former) == null && lastFailure.invoke(former) == null) {
                if (System.nanoTime() > deadline) {
                    return collective.row(n, false, "the former neither formed nor failed", System.nanoTime() - start);
                }
                Thread.sleep(1);
            }
            long wall = System.nanoTime() - start;
            Object failure = lastFailure.invoke(former);
            return collective.row(n, failure == null, failure == null ? null : failure.toString(), wall);
        } finally {
            close.invoke(former);
            collective.close();
        }
    }

    static List<FormRow> rows(CommunicatorModel.Params p) throws Exception {
        List<FormRow> out = new ArrayList<>();
        for (int n : p.ns()) {
            FormRow r = run(n, p.formTimeoutMs());
            System.out.println(r);
            out.add(r);
        }
        return out;
    }

    /** The members' side: what they were asked, and the join that completes when all N asked. */
    static final class Collective {
        final int n;
        final long timeoutMs;
        final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        final List<Promise<Object>> waiting = new ArrayList<>();
        final AtomicLong bytes = new AtomicLong();
        int asks;
        int joins;
        /** CommunicatorReady and CommunicatorFailed asks: after the joins, one to every member. */
        int outcomes;
        int maxInFlight;
        boolean done;
        boolean failed;

        Collective(int n, long timeoutMs) {
            this.n = n;
            this.timeoutMs = timeoutMs;
        }

        synchronized void asked(Object wire, Promise<Object> reply) {
            asks++;
            try {
                bytes.addAndGet(ProvisioningScaleSim.serialisedSize(wire));
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
            Object message = Wire.unpack(wire).message();
            if (message instanceof Messages.RootInfoAsk r) {
                reply.success(Wire.pack(new Messages.RootInfo(r.epoch(), new byte[Communicator.ROOT_INFO_BYTES])));
                return;
            }
            if (message instanceof Messages.CommunicatorReady || message instanceof Messages.CommunicatorFailed) {
                outcomes++;
                reply.success(Wire.pack(Messages.Ack.OK));
                return;
            }
            if (!(message instanceof Messages.JoinCommunicator)) {
                reply.failure(new IllegalArgumentException("unexpected ask " + message));
                return;
            }
            if (failed) {
                reply.success(Wire.pack(new Messages.Ack(false, "HCCL_E_TIMEOUT: the root is gone")));
                return;
            }
            joins++;
            waiting.add(reply);
            maxInFlight = Math.max(maxInFlight, waiting.size());
            if (joins == 1) {
                timer.schedule(this::timeout, timeoutMs, TimeUnit.MILLISECONDS);
            }
            if (joins == n) {
                done = true;
                waiting.forEach(w -> w.success(Wire.pack(Messages.Ack.OK)));
                waiting.clear();
            }
        }

        synchronized void timeout() {
            if (done) {
                return;
            }
            failed = true;
            String why = "HCCL_E_TIMEOUT: " + joins + " of " + n + " ranks joined within " + timeoutMs + " ms";
            waiting.forEach(w -> w.success(Wire.pack(new Messages.Ack(false, why))));
            waiting.clear();
        }

        synchronized FormRow row(int n, boolean formed, String why, long wallNs) {
            return new FormRow(n, formed, why, wallNs, asks, bytes.get(), maxInFlight, joins, outcomes);
        }

        void close() {
            timer.shutdownNow();
        }
    }

    /** A simulated member's agent: every ask goes to the {@link Collective}. */
    static final class MemberRef extends RpcEndpointRef {
        private static final long serialVersionUID = 1L;
        private final RpcAddress address;
        private final transient Collective collective;

        MemberRef(String executorId, int port, Collective collective) {
            super(CONF);
            this.address = new RpcAddress("sim-" + executorId, port);
            this.collective = collective;
        }

        @Override
        public RpcAddress address() {
            return address;
        }

        @Override
        public String name() {
            return "hcomm-shuffle-agent";
        }

        @Override
        public void send(Object message) {
            throw new UnsupportedOperationException("forming sends nothing");
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> Future<T> ask(Object message, RpcTimeout timeout, ClassTag<T> tag) {
            Promise<Object> reply = scala.concurrent.Promise$.MODULE$.apply();
            collective.asked(message, reply);
            return (Future<T>) reply.future();
        }
    }

    // ------------------------------------------------------------------------------------------- markdown

    static void markdown(StringBuilder sb, List<FormRow> rows, CommunicatorModel.Params p) {
        if (rows.isEmpty()) {
            return;
        }
        sb.append(String.format(Locale.ROOT, "%n### The real driver-side former, simulated members%n%n"
                + "`CommunicatorFormer` as the driver runs it (reached by reflection, unchanged), its members "
                + "simulated: the root info at once, every join answered when all N members have asked (the collective "
                + "init, costing nothing here), or not ok %d ms (`--comm-timeout-ms=`, standing in for "
                + "`HCCL_CONNECT_TIMEOUT`) after the first join if not all asked; then the `CommunicatorReady` (or "
                + "`CommunicatorFailed`) ask to every member, answered at once: 1 + 2N asks. *driver time* is from the "
                + "end of the settle time to formed (or failed): the driver's own cost when joining is free.%n%n", p
                        .formTimeoutMs()));
        sb.append("| executors N | asks sent / bytes | join asks in flight at once (most) | members asked before "
                + "the outcome | driver time | result |\n|---:|---:|---:|---:|---:|:---|\n");
        for (FormRow r : rows) {
            sb.append(String.format(Locale.ROOT, "| %d | %d / %s | %d | %d | %s | %s |%n", r.n(), r.asks(),
                    ProvisioningScaleSim.bytes(r.askBytes()), r.maxJoinsInFlight(), r.joinsAsked(),
                    ProvisioningScaleSim.ms(r.wallNs()), r.formed() ? "formed" : "**did not form**: "
                            + r.why().replace('|', '/')));
        }
        FormRow capped = rows.stream().filter(r -> !r.formed() && r.maxJoinsInFlight() < r.n()).findFirst()
                .orElse(null);
        if (capped != null) {
            sb.append(String.format(Locale.ROOT, "%nAs built the former cannot form a communicator of more than %d "
                    + "executors: it asks from a pool of min(N, 64) threads and each join ask returns only when the "
                    + "collective init has completed, which needs every member's join, so members beyond the %d in "
                    + "flight are never asked before the first %d time out (with CANN after `HCCL_CONNECT_TIMEOUT` + "
                    + "20 s, 140 s by default); their blocks then all go by Spark's fetch. Asking every member at once "
                    + "(Spark's asynchronous `ask`, a future per member, no thread held per member) removes the cap; "
                    + "the model's set-up times above assume that.%n", capped.maxJoinsInFlight(),
                    capped.maxJoinsInFlight(), capped.maxJoinsInFlight()));
        }
    }
}
