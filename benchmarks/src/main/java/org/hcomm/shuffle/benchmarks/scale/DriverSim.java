package org.hcomm.shuffle.benchmarks.scale;

import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.bytes;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.descriptorOf;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.fit;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.host;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.median;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.ms;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.serialisedSize;
import static org.hcomm.shuffle.benchmarks.scale.ProvisioningScaleSim.usedHeap;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.hcomm.internal.driver.ScaleSimAccess;

/**
 * The driver part of the scale simulation: the REAL {@code DriverState} (through {@link ScaleSimAccess}) with N
 * simulated executors whose agents are {@link RecordingAgentRef}s. Measures, and checks as it goes:
 * <ul>
 *   <li><b>registration</b>, once per executor: the driver tells the newcomer of every other executor and every
 *       other executor of the newcomer ({@code Peers}); every executor must end up told of all N−1 others, each
 *       once;</li>
 *   <li><b>per reduce stage attempt</b>: the listener's {@code provision} (one {@code ProvisionStage} per executor,
 *       which must be the same few bytes whatever N), every executor's EnsureStage (nothing more may be sent),
 *       {@code endStage} (one {@code EndStage} each), the StageReports; the driver thread's allocation and the heap of
 *       a live and of an ended stage attempt;</li>
 *   <li>a late executor joining a running stage attempt, then leaving;</li>
 *   <li>one shuffle's directory (Published, one LookupShuffle answer).</li>
 * </ul>
 * Sizes are of the packets as Spark's RPC Java-serialises them; times exclude the simulation's own recording.
 */
final class DriverSim {
    static final int MAPS_PER_EXECUTOR = 8;
    static final int PARTITIONS = 200;
    /** The most a ProvisionStage or an EndStage may weigh on the wire: two ints, whatever N. */
    static final int SMALL_MESSAGE_BYTES = 256;
    private static final SparkConf CONF = new SparkConf(false);
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private DriverSim() {
    }

    /** One executor count. Times in ns (per stage: median over the stages after the first); bytes; heap in B. */
    record Row(int n,
            // registration of all N, once
            long registerNs, long registerMaxNs, long registerMsgs, long registerBytes, long registerEntries,
            int perExecutorMsgsMax, long perExecutorBytesMean, long perExecutorBytesMax, long perExecutorDecodeMaxNs,
            long onePeerBytes, long entryBytes,
            // per reduce stage attempt
            long provisionNs, long ensureAllNs, long ensureMaxNs, long decodeNs, long endNs, long reportsNs,
            long provisionBytes, long endBytes, long perExecutorStageBytes, long provisionMessageBytes,
            int driverToExec, int execToDriver, long ensureBytes, long reportBytes,
            long allocProvision, long allocEnsure, long allocEnd, long liveStageHeap,
            // one shuffle's directory
            int maps, long lookupNs, long lookupSerialiseNs, long lookupBytes, long publishedBytes) {

        long channelEnds() {
            return (long) n * (n - 1);
        }
    }

    /** The simulated executors' side: what each received, checked as it arrives. */
    static final class Executors {
        enum Mode { REGISTER, STAGE, DISCARD }

        final int n;
        final long overhead; // a packet's serialised size minus its payload's
        Mode mode = Mode.REGISTER;
        int newcomer = -1;
        final int[] regMsgs;
        final long[] regBytes;
        final long[] regDecodeNs;
        final BitSet[] heard;
        final List<List<Object>> stage = new ArrayList<>();
        long sinkNs;
        long entries;
        long onePeerBytes;
        long lastNewcomerBytes;
        private byte[] shared; // the payload every other executor got for the current newcomer
        private int[] sharedPeers;
        private long sharedDecodeNs;

        Executors(int n) throws IOException {
            this.n = n;
            regMsgs = new int[n + 1];
            regBytes = new long[n + 1];
            regDecodeNs = new long[n + 1];
            heard = new BitSet[n + 1];
            for (int i = 0; i <= n; i++) {
                heard[i] = new BitSet(n + 1);
                stage.add(new ArrayList<>(4));
            }
            Object w = ScaleSimAccess.packed(ScaleSimAccess.ensureMessage(1, 0, "1"));
            overhead = serialisedSize(w) - payload(w).length;
        }

        RecordingAgentRef agent(int k, String id) {
            return new RecordingAgentRef(CONF, id, 40000 + k, w -> accept(k, w));
        }

        void accept(int k, Object wire) {
            switch (mode) {
                case DISCARD -> { }
                case STAGE -> stage.get(k).add(wire);
                case REGISTER -> registration(k, wire);
                default -> throw new IllegalStateException();
            }
        }

        private void registration(int k, Object wire) {
            long t0 = System.nanoTime();
            byte[] b = payload(wire);
            long size = overhead + b.length;
            int[] peers;
            long decodeNs;
            if (k == newcomer) {
                long d = System.nanoTime();
                Object m = ScaleSimAccess.unpack(wire); // what the newcomer's agent does first
                decodeNs = System.nanoTime() - d;
                peers = peersOf(m, k);
                lastNewcomerBytes = size;
            } else {
                if (shared == null || !Arrays.equals(b, shared)) {
                    long d = System.nanoTime();
                    Object m = ScaleSimAccess.unpack(wire);
                    sharedDecodeNs = System.nanoTime() - d;
                    sharedPeers = peersOf(m, k);
                    shared = b;
                    checkSize(wire, size);
                    onePeerBytes = size;
                }
                peers = sharedPeers;
                decodeNs = sharedDecodeNs;
                if (peers.length != 1 || peers[0] != newcomer) {
                    throw new IllegalStateException("executor " + (k + 1) + " was told of " + Arrays.toString(peers)
                            + " (0-based) while executor " + (newcomer + 1) + " registered");
                }
            }
            for (int p : peers) {
                if (p == k || heard[k].get(p)) {
                    throw new IllegalStateException("executor " + (k + 1) + " told of executor " + (p + 1)
                            + (p == k ? " (itself)" : " twice"));
                }
                heard[k].set(p);
            }
            entries += peers.length;
            regMsgs[k]++;
            regBytes[k] += size;
            regDecodeNs[k] += decodeNs;
            sinkNs += System.nanoTime() - t0;
        }

        private static int[] peersOf(Object m, int k) {
            if (!ScaleSimAccess.isPeers(m) || !ScaleSimAccess.leftIds(m).isEmpty()) {
                throw new IllegalStateException("executor " + (k + 1) + " got " + m + " at a registration");
            }
            return ScaleSimAccess.joinedIds(m).stream().mapToInt(id -> Integer.parseInt(id) - 1).toArray();
        }

        void checkSize(Object wire, long size) {
            try {
                if (serialisedSize(wire) != size) {
                    throw new IllegalStateException("packet size " + serialisedSize(wire) + " != " + size);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        void clearStage() {
            stage.forEach(List::clear);
        }

        /** The one message executor {@code k} received since the last clear, unpacked (fails on none or more). */
        Object only(int k, String what) {
            List<Object> got = stage.get(k);
            if (got.size() != 1) {
                throw new IllegalStateException("executor " + (k + 1) + " received " + got.size() + " messages, "
                        + "expected one " + what);
            }
            return ScaleSimAccess.unpack(got.get(0));
        }

        static byte[] payload(Object wire) {
            if (!ScaleSimAccess.isPacket(wire) || ((Object[]) wire).length != 2) {
                throw new IllegalStateException("not a driver → executor packet: " + wire);
            }
            return (byte[]) ((Object[]) wire)[1];
        }
    }

    static Row run(int n, int stages, byte[] descriptor) throws IOException {
        Object driver = ScaleSimAccess.newDriver();
        Executors ex = new Executors(n);
        String[] ids = new String[n];
        long registerNs = 0;
        long registerMaxNs = 0;
        for (int i = 0; i < n; i++) {
            ids[i] = Integer.toString(i + 1); // Spark's executor ids
            ex.newcomer = i;
            long sink0 = ex.sinkNs;
            long a = System.nanoTime();
            ScaleSimAccess.register(driver, ids[i], host(i), descriptorOf(descriptor, i), 20000 + i,
                    ex.agent(i, ids[i]));
            long d = System.nanoTime() - a - (ex.sinkNs - sink0);
            registerNs += d;
            registerMaxNs = Math.max(registerMaxNs, d);
        }
        long registerMsgs = 0;
        long registerBytes = 0;
        int msgsMax = 0;
        long bytesMax = 0;
        long decodeMax = 0;
        for (int k = 0; k < n; k++) {
            if (ex.heard[k].cardinality() != n - 1) {
                throw new IllegalStateException("executor " + ids[k] + " was told of " + ex.heard[k].cardinality()
                        + " peers, not all " + (n - 1) + " others");
            }
            registerMsgs += ex.regMsgs[k];
            registerBytes += ex.regBytes[k];
            msgsMax = Math.max(msgsMax, ex.regMsgs[k]);
            bytesMax = Math.max(bytesMax, ex.regBytes[k]);
            decodeMax = Math.max(decodeMax, ex.regDecodeNs[k]);
        }
        long entryBytes = n > 2 ? (ex.lastNewcomerBytes - ex.onePeerBytes) / (n - 2) : 0;

        // one shuffle: MAPS_PER_EXECUTOR map outputs per executor, then one executor's lookup
        ex.mode = Executors.Mode.STAGE;
        int maps = n * MAPS_PER_EXECUTOR;
        for (int m = 0; m < maps; m++) {
            ScaleSimAccess.published(driver, 0, m, ids[m % n], 1L << 40 | (long) m << 12, 1L << 41 | (long) m << 20,
                    PARTITIONS);
        }
        long[] lookupNs = new long[3];
        long[] lookupSerNs = new long[3];
        long lookupBytes = 0;
        for (int k = 0; k < 3; k++) {
            long s = System.nanoTime();
            Object dir = ScaleSimAccess.lookup(driver, 0);
            lookupNs[k] = System.nanoTime() - s;
            s = System.nanoTime();
            lookupBytes = serialisedSize(dir); // the packed answer, as Spark's RPC ships it
            lookupSerNs[k] = System.nanoTime() - s;
        }
        if (ex.stage.stream().anyMatch(l -> !l.isEmpty())) {
            throw new IllegalStateException("the driver sent executors something for a publication or a lookup");
        }

        long[] prov = new long[stages];
        long[] ensureAll = new long[stages];
        long[] ensureMax = new long[stages];
        long[] decode = new long[stages];
        long[] end = new long[stages];
        long[] reports = new long[stages];
        long[] allocProv = new long[stages];
        long[] allocEnsure = new long[stages];
        long[] allocEnd = new long[stages];
        long provBytes = 0;
        long endBytes = 0;
        long perExecutor = -1;
        long provMessage = 0;
        for (int s = 0; s < stages; s++) {
            int stageId = 10 + s;
            // the executors' messages, packed on their side before the driver sees them
            Object[] ensures = new Object[n];
            Object[] stageReports = new Object[n];
            for (int i = 0; i < n; i++) {
                ensures[i] = ScaleSimAccess.packed(ScaleSimAccess.ensureMessage(stageId, 0, ids[i]));
                stageReports[i] = ScaleSimAccess.packed(ScaleSimAccess.stageReport(ids[i], stageId, 0, 1, n - 1));
            }
            ex.clearStage();
            long al = THREADS.getCurrentThreadAllocatedBytes();
            long a = System.nanoTime();
            ScaleSimAccess.provision(driver, stageId, 0);
            prov[s] = System.nanoTime() - a;
            allocProv[s] = THREADS.getCurrentThreadAllocatedBytes() - al;
            int sentByProvision = sentCount(ex);
            long max = 0;
            al = THREADS.getCurrentThreadAllocatedBytes();
            a = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long b = System.nanoTime();
                ScaleSimAccess.receivePacked(driver, ensures[i]);
                max = Math.max(max, System.nanoTime() - b);
            }
            ensureAll[s] = System.nanoTime() - a;
            allocEnsure[s] = THREADS.getCurrentThreadAllocatedBytes() - al;
            ensureMax[s] = max;
            if (sentCount(ex) != sentByProvision) {
                throw new IllegalStateException("EnsureStage after provisioning sent more messages");
            }
            // the executors' side: each decodes its one ProvisionStage, which must be the small message
            a = System.nanoTime();
            Object[] decoded = new Object[n];
            for (int i = 0; i < n; i++) {
                decoded[i] = ex.only(i, "ProvisionStage");
            }
            decode[s] = System.nanoTime() - a;
            long sProv = 0;
            long[] perExec = new long[n];
            for (int i = 0; i < n; i++) {
                Object p = decoded[i];
                long size = serialisedSize(ex.stage.get(i).get(0));
                if (!ScaleSimAccess.isProvision(p) || ScaleSimAccess.stageOf(p) != stageId
                        || ScaleSimAccess.attemptOf(p) != 0 || size > SMALL_MESSAGE_BYTES) {
                    throw new IllegalStateException("executor " + ids[i] + ": not the small ProvisionStage of stage "
                            + stageId + " (" + size + " B): " + p);
                }
                sProv += size;
                perExec[i] = size;
                provMessage = size;
            }
            ex.clearStage();
            al = THREADS.getCurrentThreadAllocatedBytes();
            a = System.nanoTime();
            ScaleSimAccess.endStage(driver, stageId, 0);
            end[s] = System.nanoTime() - a;
            allocEnd[s] = THREADS.getCurrentThreadAllocatedBytes() - al;
            long sEnd = 0;
            for (int i = 0; i < n; i++) {
                Object e = ex.only(i, "EndStage");
                long size = serialisedSize(ex.stage.get(i).get(0));
                if (!ScaleSimAccess.isEndStage(e) || ScaleSimAccess.stageOf(e) != stageId
                        || size > SMALL_MESSAGE_BYTES) {
                    throw new IllegalStateException("executor " + ids[i] + ": not the EndStage of stage " + stageId
                            + " (" + size + " B): " + e);
                }
                sEnd += size;
                perExec[i] += size;
            }
            ex.clearStage();
            a = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ScaleSimAccess.receivePacked(driver, stageReports[i]);
            }
            reports[s] = System.nanoTime() - a;
            if (ScaleSimAccess.destroyCallsOf(driver, stageId, 0) != n) {
                throw new IllegalStateException("destroy calls reported != " + n);
            }
            long pe = Arrays.stream(perExec).max().orElse(0);
            if (Arrays.stream(perExec).min().orElse(0) != pe || perExecutor >= 0 && perExecutor != pe) {
                throw new IllegalStateException("executors received different bytes per stage: "
                        + Arrays.stream(perExec).summaryStatistics());
            }
            perExecutor = pe;
            provBytes = sProv;
            endBytes = sEnd;
        }
        lateJoiner(driver, ex, ids, descriptor);

        // driver heap of one running stage attempt (nothing recorded meanwhile)
        ex.mode = Executors.Mode.DISCARD;
        long h0 = usedHeap();
        ScaleSimAccess.provision(driver, 200, 0);
        for (String id : ids) {
            ScaleSimAccess.receivePacked(driver, ScaleSimAccess.packed(ScaleSimAccess.ensureMessage(200, 0, id)));
        }
        long live = usedHeap() - h0;
        endAndReport(driver, 200, ids);

        long ensureBytes = serialisedSize(ScaleSimAccess.packed(ScaleSimAccess.ensureMessage(10, 0, ids[n - 1]))) * n;
        long reportBytes = serialisedSize(ScaleSimAccess.packed(ScaleSimAccess.stageReport(ids[n - 1], 10, 0, 1,
                n - 1))) * n;
        long publishedBytes = serialisedSize(ScaleSimAccess.packed(ScaleSimAccess.publishedMessage(0, maps - 1,
                ids[n - 1])));
        return new Row(n, registerNs, registerMaxNs, registerMsgs, registerBytes, ex.entries, msgsMax,
                registerBytes / n, bytesMax, decodeMax, ex.onePeerBytes, entryBytes,
                median(prov), median(ensureAll), median(ensureMax), median(decode), median(end), median(reports),
                provBytes, endBytes, perExecutor, provMessage, 2 * n, 2 * n, ensureBytes, reportBytes,
                median(allocProv), median(allocEnsure), median(allocEnd), live,
                maps, median(lookupNs), median(lookupSerNs), lookupBytes, publishedBytes);
    }

    private static int sentCount(Executors ex) {
        return ex.stage.stream().mapToInt(List::size).sum();
    }

    private static void endAndReport(Object driver, int stageId, String[] ids) {
        ScaleSimAccess.endStage(driver, stageId, 0);
        for (String id : ids) {
            ScaleSimAccess.receivePacked(driver, ScaleSimAccess.packed(ScaleSimAccess.stageReport(id, stageId, 0, 1,
                    ids.length - 1)));
        }
    }

    /**
     * An executor registers while a stage attempt runs, then leaves: it must hear of all N others and get the
     * attempt's ProvisionStage; each other one must hear of it joining (one peer) and leaving.
     */
    private static void lateJoiner(Object driver, Executors ex, String[] ids, byte[] descriptor) {
        int n = ids.length;
        String lateId = Integer.toString(n + 1);
        int stageId = 99;
        ex.clearStage();
        ScaleSimAccess.provision(driver, stageId, 0);
        ex.clearStage();
        ScaleSimAccess.register(driver, lateId, host(n), descriptorOf(descriptor, n), 20000 + n, ex.agent(n, lateId));
        for (int k = 0; k < n; k++) {
            Object m = ex.only(k, "Peers naming the late executor");
            if (!ScaleSimAccess.isPeers(m) || !ScaleSimAccess.joinedIds(m).equals(List.of(lateId))) {
                throw new IllegalStateException("executor " + ids[k] + " got " + m + " when " + lateId + " joined");
            }
        }
        List<Object> late = ex.stage.get(n);
        if (late.size() != 2) {
            throw new IllegalStateException("the late executor received " + late.size() + " messages, expected 2");
        }
        Object peers = ScaleSimAccess.unpack(late.get(0));
        Object prov = ScaleSimAccess.unpack(late.get(1));
        if (!ScaleSimAccess.isPeers(peers) || !ScaleSimAccess.joinedIds(peers).equals(Arrays.asList(ids))
                || !ScaleSimAccess.isProvision(prov) || ScaleSimAccess.stageOf(prov) != stageId) {
            throw new IllegalStateException("the late executor got " + peers + ", then " + prov);
        }
        ex.clearStage();
        ScaleSimAccess.removed(driver, lateId);
        for (int k = 0; k < n; k++) {
            Object m = ex.only(k, "Peers naming the executor that left");
            if (!ScaleSimAccess.isPeers(m) || !ScaleSimAccess.leftIds(m).equals(List.of(lateId))) {
                throw new IllegalStateException("executor " + ids[k] + " got " + m + " when " + lateId + " left");
            }
        }
        ex.clearStage();
        ScaleSimAccess.endStage(driver, stageId, 0);
        for (int k = 0; k < n; k++) {
            if (!ScaleSimAccess.isEndStage(ex.only(k, "EndStage"))) {
                throw new IllegalStateException("executor " + ids[k] + ": no EndStage after the late join");
            }
        }
        if (!ex.stage.get(n).isEmpty()) {
            throw new IllegalStateException("the executor that left was sent " + ex.stage.get(n));
        }
        ex.clearStage();
    }

    /** Fails unless what an executor receives per stage attempt is the same at every N. */
    static void checkIndependentOfN(List<Row> rows) {
        if (rows.stream().mapToLong(Row::perExecutorStageBytes).distinct().count() > 1) {
            throw new IllegalStateException("bytes per executor per stage depend on N: " + rows.stream()
                    .map(r -> r.n() + ": " + r.perExecutorStageBytes()).toList());
        }
    }

    // ------------------------------------------------------------------------------------------- markdown

    static void markdown(StringBuilder sb, List<Row> drv, int descriptorBytes) {
        sb.append("### Driver, simulated executors\n\n");
        sb.append("Per reduce stage attempt (median of the stages after the first). *provision* = the listener's "
                + "`provision` call (N `ProvisionStage` sends, each packed on the driver's thread); *EnsureStage ×N* "
                + "= every executor's first reduce task asking again (a no-op after provisioning, each under the "
                + "driver lock; the driver's receive only, packed beforehand); *decode* = unpacking the N "
                + "ProvisionStage, the executors' side (summed over them). The simulation fails unless every "
                + "executor receives exactly one ProvisionStage of at most " + SMALL_MESSAGE_BYTES + " B and one "
                + "EndStage per stage, nothing for its EnsureStage, and the same bytes at every N.\n\n");
        sb.append("| executors N | channel ends the executors create (N(N−1)) | provision | EnsureStage ×N (max one) "
                + "| decode ProvisionStage ×N | endStage | StageReport ×N | driver → executors msgs / bytes | "
                + "received per executor | executors → driver msgs / bytes |\n");
        sb.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : drv) {
            sb.append(String.format(Locale.ROOT, "| %d | %,d | %s | %s (%s) | %s | %s | %s | %d / %s | %d msgs / "
                    + "%d B | %d / %s |%n", r.n(), r.channelEnds(), ms(r.provisionNs()), ms(r.ensureAllNs()),
                    ms(r.ensureMaxNs()), ms(r.decodeNs()), ms(r.endNs()), ms(r.reportsNs()), r.driverToExec(),
                    bytes(r.provisionBytes() + r.endBytes()), 2, r.perExecutorStageBytes(), r.execToDriver(),
                    bytes(r.ensureBytes() + r.reportBytes())));
        }
        sb.append("\nDriver memory per reduce stage attempt: bytes the driver thread allocates (ThreadMXBean; "
                + "packing and unpacking included) and the heap a running attempt holds (after full GC, provisioned "
                + "and every EnsureStage in); what an ended one leaves: *Driver memory* below.\n\n");
        sb.append("| executors N | allocated: provision / EnsureStage ×N / endStage | heap of a running stage attempt "
                + "|\n|---:|---:|---:|\n");
        for (Row r : drv) {
            sb.append(String.format(Locale.ROOT, "| %d | %s / %s / %s | %s |%n", r.n(),
                    bytes(r.allocProvision()), bytes(r.allocEnsure()), bytes(r.allocEnd()),
                    heap(r.liveStageHeap())));
        }
        sb.append("\nRegistration, once per executor (all N registering one after another, before any stage): "
                + "the driver sends the newcomer one `Peers` naming every executor already there (endpoint "
                + "descriptor, port) and every other executor a `Peers` naming the newcomer. Checked: every "
                + "executor is told of all N−1 others, each once. *driver time* excludes the simulation's "
                + "recording; *decode* = an executor unpacking all it received.\n\n");
        sb.append("| executors N | driver → executors Peers msgs / bytes in all | peer entries in all | driver time, "
                + "all N registrations / slowest one | received per executor: msgs (most) / bytes (mean / most) | "
                + "decode per executor (most) |\n|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : drv) {
            sb.append(String.format(Locale.ROOT, "| %d | %,d / %s | %,d | %s / %s | %,d / %s / %s | %s |%n",
                    r.n(), r.registerMsgs(), bytes(r.registerBytes()), r.registerEntries(), ms(r.registerNs()),
                    ms(r.registerMaxNs()), r.perExecutorMsgsMax(), bytes(r.perExecutorBytesMean()),
                    bytes(r.perExecutorBytesMax()), ms(r.perExecutorDecodeMaxNs())));
        }
        sb.append("\nOne shuffle's directory (" + MAPS_PER_EXECUTOR + " map outputs per executor, " + PARTITIONS
                + " partitions):\n\n| executors N | LookupShuffle answer (M maps): build, serialise, bytes | "
                + "directory egress per shuffle (N lookups) |\n|---:|---:|---:|\n");
        for (Row r : drv) {
            sb.append(String.format(Locale.ROOT, "| %d | M=%d: %s, %s, %s | %s |%n", r.n(), r.maps(),
                    ms(r.lookupNs()), ms(r.lookupSerialiseNs()), bytes(r.lookupBytes()),
                    bytes(r.lookupBytes() * r.n())));
        }
        sb.append("\nGrowth (least-squares slope of log(value) on log(N) over the rows; 0 = constant, 1 = linear, "
                + "2 = quadratic):\n\n");
        sb.append("| quantity | slope |\n|:---|---:|\n");
        slope(sb, "provision (driver time per stage)", drv, Row::provisionNs);
        slope(sb, "EnsureStage ×N (driver time per stage)", drv, Row::ensureAllNs);
        slope(sb, "one EnsureStage (most)", drv, Row::ensureMaxNs);
        slope(sb, "decode ProvisionStage ×N (executors)", drv, Row::decodeNs);
        slope(sb, "ProvisionStage bytes per stage", drv, Row::provisionBytes);
        slope(sb, "bytes received per executor per stage", drv, Row::perExecutorStageBytes);
        slope(sb, "driver allocation per stage (provision + EnsureStage ×N + endStage)", drv,
                r -> r.allocProvision() + r.allocEnsure() + r.allocEnd());
        slope(sb, "endStage", drv, Row::endNs);
        slope(sb, "StageReport ×N", drv, Row::reportsNs);
        slope(sb, "messages per stage", drv, r -> r.driverToExec() + r.execToDriver());
        slope(sb, "registration: Peers bytes in all (once)", drv, Row::registerBytes);
        slope(sb, "registration: bytes received per executor (most)", drv, Row::perExecutorBytesMax);
        slope(sb, "registration: driver time, all N", drv, Row::registerNs);
        slope(sb, "registration: slowest one", drv, Row::registerMaxNs);
        slope(sb, "directory egress per shuffle (M = " + MAPS_PER_EXECUTOR + "N)", drv,
                r -> r.lookupBytes() * r.n());
        Row last = drv.get(drv.size() - 1);
        sb.append(String.format(Locale.ROOT, "%nPer message: ProvisionStage %d B and EndStage %d B at every N; a "
                + "`Peers` naming one executor %d B, and ~%d B per further executor named (endpoint descriptor %d B, "
                + "id, port); EnsureStage %d B; StageReport %d B; Published (one per map task) %d B; the directory "
                + "~%d B per map output.%n%n", last.provisionMessageBytes(), last.endBytes() / last.n(),
                last.onePeerBytes(), last.entryBytes(), descriptorBytes, last.ensureBytes() / last.n(),
                last.reportBytes() / last.n(), last.publishedBytes(), last.lookupBytes() / Math.max(1, last.maps())));
    }

    /** A heap delta: below zero it is the collector's noise. */
    static String heap(long b) {
        return b < 0 ? "≈ 0 (" + b + " B)" : bytes(b);
    }

    static void slope(StringBuilder sb, String name, List<Row> rows, ToDoubleFunction<Row> m) {
        sb.append("| ").append(name).append(" | ").append(fit(rows.stream().mapToDouble(Row::n).toArray(),
                rows.stream().mapToDouble(m).toArray())).append(" |\n");
    }

    /** The driver's bullets of "Where it stops scaling". */
    static void analysis(StringBuilder sb, List<Row> drv, ProvisioningScaleSim.Memory mem) {
        Row big = at(drv, 1024);
        Row top = drv.get(drv.size() - 1);
        sb.append(String.format(Locale.ROOT, "- **Driver → executors per stage is linear:** one ProvisionStage "
                + "(%d B) and one EndStage (%d B) per executor, whatever N: %s at N = %d, %s at N = %d (before "
                + "issue 29 each ProvisionStage listed all N−1 peers: 218 MiB per stage at N = 1024). Channel "
                + "names and roles follow from the two executor ids, so the executors still create N(N−1) channel "
                + "ends per stage without being told them.%n", top.provisionMessageBytes(),
                top.endBytes() / top.n(), bytes(big.provisionBytes() + big.endBytes()), big.n(),
                bytes(top.provisionBytes() + top.endBytes()), top.n()));
        sb.append(String.format(Locale.ROOT, "- **The peers' endpoints travel once, at registration:** every "
                + "executor is told of every other once, N(N−1) peer entries (~%d B each) in N(N+1)/2 messages: %s "
                + "in all at N = %d and %s at N = %d, i.e. at most %s per executor at N = %d (it grows with its "
                + "peers, O(N), never per stage). The driver packs one message per executor at each registration, "
                + "under its lock: the slowest registration took %s at N = %d (%s for all %d).%n", top.entryBytes(),
                bytes(big.registerBytes()), big.n(), bytes(top.registerBytes()), top.n(),
                bytes(top.perExecutorBytesMax()), top.n(), ms(top.registerMaxNs()), top.n(), ms(top.registerNs()),
                top.n()));
        sb.append(String.format(Locale.ROOT, "- **Driver CPU and memory per stage:** provision %s at N = %d and %s at "
                + "N = %d; EnsureStage ×N %s and %s (each O(1) once the attempt is provisioned); endStage %s and %s. "
                + "The driver thread allocates %s per stage at N = %d (packing N small messages), a running "
                + "attempt holds %s of heap (its member set, ~%d B per executor), and an ended one leaves ~%d B "
                + "whatever N, for the last 4,096 ended attempts (measured at N = %d).%n", ms(big.provisionNs()), big.n(),
                ms(top.provisionNs()), top.n(), ms(big.ensureAllNs()), ms(top.ensureAllNs()), ms(big.endNs()),
                ms(top.endNs()), bytes(top.allocProvision() + top.allocEnsure() + top.allocEnd()), top.n(),
                heap(top.liveStageHeap()), Math.max(0, top.liveStageHeap()) / top.n(),
                mem.perStage(), mem.stageN()));
        sb.append("- **Messages per stage are linear** (2N driver → executors, 2N executors → driver; one create and "
                + "one destroy call per executor), and now so are the bytes.\n");
        sb.append(String.format(Locale.ROOT, "- **Directory:** ~%d B of driver heap per map output (%s for 10⁶ map "
                + "outputs) and ~%d B per map output in each LookupShuffle answer; every executor fetches it once "
                + "per shuffle, so a shuffle with M map outputs costs N × M × that in driver egress (%s at N = %d, "
                + "M = %d; %s at N = 1024, M = 100,000).%n", mem.perMapOutput(), bytes(mem.perMapOutput() * 1_000_000L),
                big.lookupBytes() / Math.max(1, big.maps()), bytes(big.lookupBytes() * big.n()), big.n(), big.maps(),
                bytes(big.lookupBytes() / Math.max(1, big.maps()) * 1024L * 100_000L)));
    }

    /** The row at {@code n}, else the largest. */
    static Row at(List<Row> drv, int n) {
        return drv.stream().filter(r -> r.n() == n).findFirst().orElse(drv.get(drv.size() - 1));
    }
}
