package org.hcomm.shuffle.benchmarks.scale;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.Wire;
import org.hcomm.bridge.communicator.Communicator;

/**
 * The communicator path (Atlas A2/A3, issue 28) at scale: what forming one HCCL communicator of N executors costs the
 * driver (messages and their bytes, packed as the plugin packs them), the channels each executor makes (N − 1, once
 * per communicator, where the endpoint path makes N − 1 per reduce stage), the set-up time, and the device memory per
 * executor, next to the endpoint path's per-stage numbers of {@link ProvisioningScaleSim}.
 *
 * <p>The set-up time is a MODEL with two PARAMETERS, not a measurement (this machine has no Ascend card and soft
 * HComm's costs are not CANN's): the root's gathering of every rank's information costs {@code rankMs} per rank,
 * one after another ({@code --comm-rank-ms}, default 5), and {@code HcclChannelAcquire} costs {@code channelMs} per
 * channel, each executor acquiring its N − 1 channels in one call while the executors do it at the same time
 * ({@code --comm-channel-ms}, default 1). Device memory is exact: {@code communicator.bufferSize} rounded as the
 * plugin rounds it (hcclBufferSize = ⌈bufferSize / 2 MiB⌉ MB, the HCCL buffer twice that), one communicator per
 * executor, two while the driver re-forms it for changed executors. {@link FormerSim} runs the REAL driver-side
 * former against simulated members, {@link SoftCommunicators} real soft HComm communicators in this process.
 */
final class CommunicatorModel {
    /** The model's inputs, from {@code --comm*} arguments. */
    record Params(int[] ns, double rankMs, double channelMs, long bufferBytes, int stages, int[] realNs,
            long formTimeoutMs) {
        static Params defaults() {
            return new Params(new int[] {16, 64, 256, 1024}, 5, 1, 320L << 20, 100, new int[] {2, 4, 8}, 2000);
        }

        /** This with one {@code --comm*} argument applied; false when {@code arg} is not one. */
        static boolean parse(String arg, Params[] p) {
            Params c = p[0];
            String v = arg.contains("=") ? arg.substring(arg.indexOf('=') + 1) : "";
            if (arg.startsWith("--comm=")) {
                p[0] = new Params(ProvisioningScaleSim.ints(v), c.rankMs, c.channelMs, c.bufferBytes, c.stages,
                        c.realNs, c.formTimeoutMs);
            } else if (arg.startsWith("--comm-rank-ms=")) {
                p[0] = new Params(c.ns, Double.parseDouble(v), c.channelMs, c.bufferBytes, c.stages, c.realNs,
                        c.formTimeoutMs);
            } else if (arg.startsWith("--comm-channel-ms=")) {
                p[0] = new Params(c.ns, c.rankMs, Double.parseDouble(v), c.bufferBytes, c.stages, c.realNs,
                        c.formTimeoutMs);
            } else if (arg.startsWith("--comm-buffer=")) {
                p[0] = new Params(c.ns, c.rankMs, c.channelMs, size(v), c.stages, c.realNs, c.formTimeoutMs);
            } else if (arg.startsWith("--comm-stages=")) {
                p[0] = new Params(c.ns, c.rankMs, c.channelMs, c.bufferBytes, Integer.parseInt(v), c.realNs,
                        c.formTimeoutMs);
            } else if (arg.startsWith("--comm-real=")) {
                p[0] = new Params(c.ns, c.rankMs, c.channelMs, c.bufferBytes, c.stages, ProvisioningScaleSim.ints(v),
                        c.formTimeoutMs);
            } else if (arg.startsWith("--comm-timeout-ms=")) {
                p[0] = new Params(c.ns, c.rankMs, c.channelMs, c.bufferBytes, c.stages, c.realNs, Long.parseLong(v));
            } else {
                return false;
            }
            return true;
        }

        /** The HCCL buffer the plugin asks for: 2 × ⌈bufferSize / 2 MiB⌉ MiB (CommunicatorMember's rounding). */
        long deviceBytesPerCommunicator() {
            return 2 * ((bufferBytes + (2L << 20) - 1) / (2L << 20)) * (1L << 20);
        }
    }

    /** One executor count, modelled; message bytes are the real messages packed by {@link Wire}. */
    record Row(int n, int asks, long askBytes, long joinBytesEach, int replies, long replyBytes,
            int channelsPerExecutor, long channelEnds, double rootGatherMs, double acquireMs, long deviceBytes) {
        double setupMs() {
            return rootGatherMs + acquireMs;
        }
    }

    private CommunicatorModel() {
    }

    static Row row(int n, Params p) throws IOException {
        List<String> ids = new ArrayList<>(n);
        List<String> hosts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ids.add(Integer.toString(i + 1)); // Spark's executor ids
            hosts.add(ProvisioningScaleSim.host(i / 8)); // 8 NPUs per Atlas A2 server, one executor each
        }
        byte[] root = new byte[Communicator.ROOT_INFO_BYTES];
        long rootAsk = packed(new Messages.RootInfoAsk(1, 0));
        long joinLast = packed(new Messages.JoinCommunicator(1, root, ids, hosts, n - 1, (n - 1) % 8));
        long joins = 0;
        for (int rank = 0; rank < n; rank++) { // each ask differs only in its rank
            joins += rank == n - 1 ? joinLast : packed(new Messages.JoinCommunicator(1, root, ids, hosts, rank,
                    rank % 8));
        }
        long ready = n * packed(new Messages.CommunicatorReady(1)); // once every member joined and built its parts
        long replies = packed(new Messages.RootInfo(1, root)) + 2L * n * packed(Messages.Ack.OK);
        return new Row(n, 1 + 2 * n, rootAsk + joins + ready, joinLast, 1 + 2 * n, replies, n - 1, (long) n * (n - 1),
                n * p.rankMs(), (n - 1) * p.channelMs(), p.deviceBytesPerCommunicator());
    }

    static List<Row> rows(Params p) throws IOException {
        List<Row> out = new ArrayList<>();
        for (int n : p.ns()) {
            out.add(row(n, p));
        }
        return out;
    }

    static long packed(java.io.Serializable message) throws IOException {
        return ProvisioningScaleSim.serialisedSize(Wire.pack(message));
    }

    static long size(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long unit = t.endsWith("g") ? 1L << 30 : t.endsWith("m") ? 1L << 20 : t.endsWith("k") ? 1L << 10 : 1;
        return Long.parseLong(unit == 1 ? t : t.substring(0, t.length() - 1)) * unit;
    }

    // ------------------------------------------------------------------------------------------- markdown

    /**
     * The section of the report: the model table (next to the endpoint path's per-stage numbers from {@code drv}
     * where the same N was simulated), then the real former's rows and the soft communicators' rows.
     */
    static String markdown(Params p, List<Row> rows, List<DriverSim.Row> drv,
            List<FormerSim.FormRow> formed, List<SoftCommunicators.SoftRow> soft) {
        StringBuilder sb = new StringBuilder();
        sb.append("\n## The communicator path (Atlas A2/A3): forming one communicator, channels, device memory\n\n");
        sb.append(String.format(Locale.ROOT, "**The set-up times below are a model with parameters, not a "
                + "measurement**: %.3g ms per rank for the root's gathering of the ranks' information (one after "
                + "another) and %.3g ms per channel for `HcclChannelAcquire` (each executor acquires its N − 1 "
                + "channels in one call, the executors at the same time); change them with `--comm-rank-ms=` and "
                + "`--comm-channel-ms=` in `-Dsim.args`. Message counts follow `CommunicatorFormer` (one "
                + "`RootInfoAsk` to the first member, one `JoinCommunicator` ask to every member, then, once all "
                + "joined and built their parts, one `CommunicatorReady` ask to every member, each answered); "
                + "their bytes are the real messages packed by `Wire` (the root info is %,d bytes in every join ask). "
                + "Device memory is `communicator.bufferSize` = %s as the plugin rounds it (`--comm-buffer=`), one "
                + "communicator per executor, two while a re-forming switch overlaps the old and the new (when the "
                + "executors change, the driver forms a new one and each member retires its old one). The "
                + "endpoint path's columns are the driver rows above (per reduce stage); over %d reduce stages "
                + "(`--comm-stages=`) the endpoint path makes %d × (N − 1) channels per executor where the "
                + "communicator path makes N − 1 once.%n%n", p.rankMs(), p.channelMs(),
                Communicator.ROOT_INFO_BYTES, ProvisioningScaleSim.bytes(p.bufferBytes()), p.stages(), p.stages()));
        sb.append("| executors N | driver → executors to form (asks / bytes) | executors → driver (replies / bytes) "
                + "| channels per executor | channel ends in all | root gathering N × rank | acquire (N − 1) × channel "
                + "| set-up (model) | device memory per executor (1 communicator / re-forming switch) | endpoint "
                + "path, per reduce stage: channels per executor, ProvisionStage msgs / bytes, provision | endpoint "
                + "path over " + p.stages() + " stages: channels per executor |\n");
        sb.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            DriverSim.Row d = drv.stream().filter(x -> x.n() == r.n()).findFirst().orElse(null);
            sb.append(String.format(Locale.ROOT, "| %d | %d / %s | %d / %s | %d (once) | %,d | %s | %s | **%s** | "
                    + "%s / %s | %d; %s | %,d |%n", r.n(), r.asks(), ProvisioningScaleSim.bytes(r.askBytes()),
                    r.replies(), ProvisioningScaleSim.bytes(r.replyBytes()), r.channelsPerExecutor(), r.channelEnds(),
                    sec(r.rootGatherMs()), sec(r.acquireMs()), sec(r.setupMs()),
                    ProvisioningScaleSim.bytes(r.deviceBytes()), ProvisioningScaleSim.bytes(2 * r.deviceBytes()),
                    r.n() - 1, d == null ? "not simulated at this N" : d.n() + " msgs / "
                            + ProvisioningScaleSim.bytes(d.provisionBytes()) + "; "
                            + ProvisioningScaleSim.ms(d.provisionNs()), (long) p.stages() * (r.n() - 1)));
        }
        Row big = rows.isEmpty() ? null : rows.get(rows.size() - 1);
        if (big != null) {
            double perRankMs = p.rankMs() + p.channelMs();
            sb.append(String.format(Locale.ROOT, "%nReading it: forming costs the driver 1 + 2N asks (linear), but "
                    + "every join ask carries the %,d-byte root info and the member and host lists, so their bytes "
                    + "grow as N² (%s at N = %d, %s per ask), once per communicator instead of once per stage. With "
                    + "these parameters the set-up grows by %.3g ms per executor (%s at N = %d); it reaches CANN's "
                    + "`HCCL_CONNECT_TIMEOUT` (default 120 s, which the members' init must meet) at N ≈ %,.0f. Device "
                    + "memory per executor does not grow with N: %s (%s during a switch), %.1f %% (%.1f %%) of a "
                    + "910B's 64 GB; a communicator per stage (the rejected sub-communicator design) would hold that "
                    + "per stage in flight.%n", Communicator.ROOT_INFO_BYTES,
                    ProvisioningScaleSim.bytes(big.askBytes()), big.n(),
                    ProvisioningScaleSim.bytes(big.joinBytesEach()), perRankMs, sec(big.setupMs()), big.n(),
                    120_000 / perRankMs, ProvisioningScaleSim.bytes(big.deviceBytes()),
                    ProvisioningScaleSim.bytes(2 * big.deviceBytes()), 100.0 * big.deviceBytes() / 64e9,
                    200.0 * big.deviceBytes() / 64e9));
        }
        FormerSim.markdown(sb, formed, p);
        SoftCommunicators.markdown(sb, soft);
        return sb.toString();
    }

    static String sec(double ms) {
        return ms >= 1000 ? String.format(Locale.ROOT, "%.2f s", ms / 1000) : String.format(Locale.ROOT, "%.0f ms", ms);
    }
}
