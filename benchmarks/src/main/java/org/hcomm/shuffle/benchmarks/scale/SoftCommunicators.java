package org.hcomm.shuffle.benchmarks.scale;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

import org.hcomm.bridge.SoftCounters;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.transport.CommunicatorTransport;

/**
 * REAL soft HComm communicators of N ranks in this process, each rank on its own thread and soft device (as an
 * executor joins on its own thread; one device per thread as CANN requires), all members on one host (HCCS between
 * them, as within one 8-NPU Atlas A2 server): {@code HcclGetRootInfo}, every rank's
 * {@code CommunicatorTransport.formWindowed} (join + {@code HcclChannelAcquire} of its N − 1 channels, each with the
 * window's notifies: {@link #WINDOW}), then every rank's close ({@code HcclCommDestroy}). Soft HComm's costs, not
 * CANN's: they say what this machine's stand-in costs and check the shape (channels, memory, threads), not the
 * model's parameters. Soft HComm has {@code HCOMM_SOFT_DEVICES} devices per host (default 8, at most 64); larger N
 * are skipped.
 */
final class SoftCommunicators {
    /** One N. Times in ns. */
    record SoftRow(int n, boolean ok, String why, int bufferMb, long rootInfoNs, long formWallNs, long joinMedianNs,
            long joinMaxNs, long deviceBytesPerRank, long closeMaxNs, int threadsBefore, int threadsFormed,
            int threadsAfter, int fdsBefore, int fdsFormed, int fdsAfter, SoftCounters formedCounters) {
    }

    /** hcclBufferSize of the soft runs, in MB (the HCCL buffer is twice this): small, soft memory is host memory. */
    static final int BUFFER_MB = 2;
    /** Two slots of 1 MiB: one window per half of the soft runs' 4 MiB HCCL buffer, 3 + 2 x 2 notifies a channel. */
    static final CommunicatorTransport.WindowSpec WINDOW = new CommunicatorTransport.WindowSpec(2, 1 << 20, 10_000);

    private SoftCommunicators() {
    }

    static int devices() {
        try {
            String v = System.getenv("HCOMM_SOFT_DEVICES");
            int d = v == null ? 8 : Integer.parseInt(v.trim());
            return d < 1 || d > 64 ? 8 : d;
        } catch (NumberFormatException e) {
            return 8;
        }
    }

    static List<SoftRow> rows(int[] ns) {
        List<SoftRow> out = new ArrayList<>();
        if (ns.length == 0) {
            return out;
        }
        SoftHcomm.configure("if_ip", "127.0.0.1");
        for (int n : ns) {
            SoftRow r = n > devices() ? skipped(n, "soft HComm has " + devices() + " devices (HCOMM_SOFT_DEVICES)")
                    : run(n);
            System.out.println(r);
            out.add(r);
        }
        return out;
    }

    private static SoftRow skipped(int n, String why) {
        return new SoftRow(n, false, why, BUFFER_MB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, null);
    }

    static SoftRow run(int n) {
        int threadsBefore = ProvisioningScaleSim.procThreads();
        int fdsBefore = ProvisioningScaleSim.procFds();
        CommunicatorTransport[] ranks = new CommunicatorTransport[n];
        try {
            long a = System.nanoTime();
            byte[] root = CommunicatorTransport.rootInfo(0);
            long rootNs = System.nanoTime() - a;
            List<CommunicatorTransport.Member> members = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                members.add(new CommunicatorTransport.Member(Integer.toString(r + 1), "127.0.0.1"));
            }
            long[] join = new long[n];
            AtomicReference<String> failure = new AtomicReference<>();
            long start = System.nanoTime();
            ProvisioningScaleSim.runEach(n, r -> {
                long b = System.nanoTime();
                try {
                    ranks[r] = CommunicatorTransport.formWindowed(root, members, r, r, BUFFER_MB, "scale-sim",
                            WINDOW);
                } catch (Exception e) {
                    failure.compareAndSet(null, "rank " + r + ": " + e);
                }
                join[r] = System.nanoTime() - b;
            });
            long wall = System.nanoTime() - start;
            int threadsFormed = ProvisioningScaleSim.procThreads();
            int fdsFormed = ProvisioningScaleSim.procFds();
            SoftCounters formed = SoftHcomm.counters();
            long deviceBytes = ranks[0] == null ? 0 : ranks[0].deviceBytes();
            long[] close = new long[n];
            ProvisioningScaleSim.runEach(n, r -> {
                long b = System.nanoTime();
                if (ranks[r] != null) {
                    ranks[r].close();
                    ranks[r] = null;
                }
                close[r] = System.nanoTime() - b;
            });
            Thread.sleep(200);
            if (failure.get() == null && !SoftHcomm.counters().noLiveObjects()) {
                failure.set("live soft HComm objects after every rank closed: " + SoftHcomm.counters());
            }
            return new SoftRow(n, failure.get() == null, failure.get(), BUFFER_MB, rootNs, wall,
                    ProvisioningScaleSim.median(withColdFirst(join)), ProvisioningScaleSim.max(join), deviceBytes,
                    ProvisioningScaleSim.max(close), threadsBefore, threadsFormed, ProvisioningScaleSim.procThreads(),
                    fdsBefore, fdsFormed, ProvisioningScaleSim.procFds(), formed);
        } catch (Exception | Error e) {
            for (CommunicatorTransport t : ranks) {
                if (t != null) {
                    t.close();
                }
            }
            return skipped(n, e.toString());
        }
    }

    /** {@link ProvisioningScaleSim#median} drops its first value (a cold stage); here every rank counts. */
    private static long[] withColdFirst(long[] v) {
        long[] c = new long[v.length + 1];
        System.arraycopy(v, 0, c, 1, v.length);
        return c;
    }

    static void markdown(StringBuilder sb, List<SoftRow> rows) {
        if (rows.isEmpty()) {
            return;
        }
        sb.append(String.format(Locale.ROOT, "%n### Real soft HComm communicators (one JVM, one soft device per "
                + "rank)%n%nEvery rank joins on its own thread and acquires its N − 1 channels (HCCS: all ranks on one "
                + "host), hcclBufferSize %d MB; *form* = from the first rank's join to the last rank's return. Soft "
                + "HComm's costs on this 2-core machine, not CANN's.%n%n", BUFFER_MB));
        sb.append("| N | HcclGetRootInfo | form (wall) | join per rank (median / max) | form per rank | HCCL buffer "
                + "per rank | soft communicators / channels live | threads before → formed → after | fds before → "
                + "formed → after | "
                + "destroy (max rank) | result |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|\n");
        for (SoftRow r : rows) {
            if (r.formedCounters() == null) {
                sb.append("| ").append(r.n()).append(" | – | – | – | – | – | – | – | – | – | not run: ")
                        .append(r.why()).append(" |\n");
                continue;
            }
            sb.append(String.format(Locale.ROOT, "| %d | %s | %s | %s / %s | %s | %s | %d / %d | %d → %d → %d | "
                    + "%d → %d → %d | %s | %s |%n", r.n(), ProvisioningScaleSim.ms(r.rootInfoNs()),
                    ProvisioningScaleSim.ms(r.formWallNs()), ProvisioningScaleSim.ms(r.joinMedianNs()),
                    ProvisioningScaleSim.ms(r.joinMaxNs()), ProvisioningScaleSim.ms(r.formWallNs() / r.n()),
                    ProvisioningScaleSim.bytes(r.deviceBytesPerRank()), r.formedCounters().comms(),
                    r.formedCounters().channels(),
                    r.threadsBefore(), r.threadsFormed(), r.threadsAfter(), r.fdsBefore(), r.fdsFormed(),
                    r.fdsAfter(), ProvisioningScaleSim.ms(r.closeMaxNs()), r.ok() ? "ok" : "**failed**: " + r.why()));
        }
        List<SoftRow> ok = rows.stream().filter(SoftRow::ok).toList();
        if (ok.size() >= 2) {
            sb.append("\n| quantity | slope over soft rows |\n|:---|---:|\n");
            double[] x = ok.stream().mapToDouble(SoftRow::n).toArray();
            sb.append("| form (wall) | ").append(ProvisioningScaleSim.fit(x, ok.stream()
                    .mapToDouble(SoftRow::formWallNs).toArray())).append(" |\n");
            sb.append("| threads at formed | ").append(ProvisioningScaleSim.fit(x, ok.stream()
                    .mapToDouble(r -> r.threadsFormed() - r.threadsBefore()).toArray())).append(" |\n");
        }
        if (rows.stream().anyMatch(r -> !r.ok())) {
            sb.append("\n(Rows not run name why; `HCOMM_SOFT_DEVICES=16` (up to 64) in the sim's environment gives "
                    + "soft HComm more devices per host.)\n");
        }
    }
}
