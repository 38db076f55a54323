package org.hcomm.bridge.doctor;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.CommThread;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.Engine;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.endpoint.ImportedMemory;
import org.hcomm.bridge.read.ReadStrategy;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * The doctor's end-to-end check: this process (the reader) and a second one started from the same class path (the
 * owner, {@link #main}) each create an endpoint; the owner registers, fills and exports memory; one channel is
 * connected; the reader reads it all one-sidedly with the chosen strategy, verifies every byte and times it; both
 * destroy their channel end in one call and close everything, and (soft HComm) count no live object.
 *
 * <p>Owner protocol, one line each way: the owner prints {@code READY <endpointHex> <port> <memoryHex>}; the
 * reader sends {@code CONNECT <endpointHex> <name>}, the owner answers {@code CONNECTED} once its end is READY;
 * the reader sends {@code DONE}, the owner closes and answers {@code BYE <noLiveObjects|unknown>}. Any failure
 * answers {@code ERROR <what>}.
 */
final class EndToEnd {
    private static final long PIECE = 16L << 20;
    private static final Duration SETUP = Duration.ofSeconds(60);

    private EndToEnd() {}

    static Finding run(Provider provider, String address, long bytes, Need strategy) {
        OwnerProcess owner = null;
        try {
            owner = OwnerProcess.start(EndToEnd.class, address, Long.toString(bytes));
            return read(owner, address, bytes, strategy);
        } catch (Exception | Error e) {
            String ownerSaid = "";
            if (owner != null) {
                owner.stop(); // its last lines are read by then
                ownerSaid = owner.errors();
            }
            return Finding.fail(Check.END_TO_END, "the read between two processes failed: " + e
                    + (ownerSaid.isEmpty() ? "" : "; the owner process said: " + ownerSaid),
                    provider == Provider.CANN ? "with CANN a host endpoint needs this host's RDMA NIC address: "
                    + "--address IP (now " + address + "); the findings above say what else to check"
                    : "the findings above say what to check; --json keeps the report");
        } finally {
            if (owner != null) {
                owner.stop();
            }
        }
    }

    private static Finding read(OwnerProcess owner, String address, long bytes, Need strategy) throws Exception {
        String[] ready = owner.expect("READY", SETUP);
        byte[] ownerEndpoint = HexFormat.of().parseHex(ready[1]);
        int port = Integer.parseInt(ready[2]);
        byte[] memory = HexFormat.of().parseHex(ready[3]);
        String name = "hcomm-doctor-" + ProcessHandle.current().pid();
        double seconds;
        long wrong;
        try (Endpoint ep = Endpoint.create(InetAddress.getByName(address));
                RegisteredMemory dst = ep.allocate("doctor-dst", bytes)) {
            owner.send("CONNECT " + HexFormat.of().formatHex(ep.descriptor()) + " " + name);
            try (ChannelSet channels = ep.createChannels(List.of(ChannelSpec.client(ownerEndpoint, name, port)))) {
                channels.awaitReady(SETUP);
                owner.expect("CONNECTED", SETUP);
                try (ImportedMemory src = ep.importMemory(memory);
                        CommThread thread = strategy == Need.ON_THREAD ? CommThread.allocate(Engine.CPU, 0) : null) {
                    ReadStrategy reads = thread == null ? ReadStrategy.nbiFence()
                            : ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN);
                    long start = System.nanoTime();
                    for (long at = 0; at < bytes; at += PIECE) {
                        reads.submit(channels.channel(0), dst.address() + at, src.remoteAddress() + at,
                                Math.min(PIECE, bytes - at));
                    }
                    reads.complete();
                    seconds = (System.nanoTime() - start) / 1e9;
                }
            }
            wrong = firstWrong(dst.buffer(), 0, bytes);
        }
        if (wrong >= 0) {
            return Finding.fail(Check.END_TO_END, "read " + bytes + " bytes but byte " + wrong + " differs from "
                    + "the owner's", "report this to the project with the doctor's --json output");
        }
        owner.send("DONE");
        String[] bye = owner.expect("BYE", SETUP);
        String live = liveObjects(bye[1]);
        double gbps = bytes / seconds / 1e9;
        String summary = String.format("read %d MiB one-sidedly from a second process over 1 channel with "
                + "readStrategy=%s: %.2f GB/s, every byte verified; each side destroyed its channel in one "
                + "HcommChannelDestroy call; %s", bytes >> 20, InstallChecks.strategyName(strategy), gbps, live);
        return live.startsWith("left") ? Finding.fail(Check.END_TO_END, summary, "report this leak to the project")
                : Finding.pass(Check.END_TO_END, summary);
    }

    /** Whether both processes closed everything (soft HComm counts; CANN does not), from the owner's BYE word. */
    static String liveObjects(String ownerSays) {
        if (HcommNative.provider() != Provider.SOFT) {
            return "every handle closed (CANN does not count live objects)";
        }
        boolean readerClean = SoftHcomm.counters().noLiveObjects();
        boolean ownerClean = "noLiveObjects".equals(ownerSays);
        return readerClean && ownerClean ? "no live object left in either process"
                : "left live objects (reader " + SoftHcomm.counters() + ", owner " + ownerSays + ")";
    }

    /** The owner's word for its live objects after closing: noLiveObjects, its counters, or unknown (CANN). */
    static String liveWord() {
        return SoftHcomm.isActive() ? (SoftHcomm.counters().noLiveObjects() ? "noLiveObjects"
                : String.valueOf(SoftHcomm.counters()).replace(' ', '_')) : "unknown";
    }

    /** The pattern the owner writes: 8-byte words, each a function of its index. */
    static long word(long index) {
        return index * 0x9E3779B97F4A7C15L ^ 0x5DEECE66DL;
    }

    /** Writes words {@code first}, {@code first + 1}, ... into the first {@code bytes} of {@code b}. */
    static void fill(ByteBuffer b, long first, long bytes) {
        LongBuffer l = b.order(ByteOrder.nativeOrder()).asLongBuffer();
        for (int i = 0; i < bytes / 8; i++) {
            l.put(i, word(first + i));
        }
    }

    /** The offset in {@code b} of the first byte that is not the pattern from word {@code first}, or -1. */
    static long firstWrong(ByteBuffer b, long first, long bytes) {
        LongBuffer l = b.order(ByteOrder.nativeOrder()).asLongBuffer();
        for (int i = 0; i < bytes / 8; i++) {
            if (l.get(i) != word(first + i)) {
                return 8L * i;
            }
        }
        return -1;
    }

    /**
     * The owner process: {@code EndToEnd <address> <bytes> <loader options>}; ends on {@code DONE} or at the end of
     * its input.
     */
    public static void main(String[] args) throws Exception {
        Doctor.quietJdkLogging();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            OwnerProcess.load(args, 2);
            long bytes = Long.parseLong(args[1]);
            try (Endpoint ep = Endpoint.create(InetAddress.getByName(args[0]));
                    RegisteredMemory src = ep.allocate("doctor-src", bytes)) {
                fill(src.buffer(), 0, bytes);
                out.println("READY " + HexFormat.of().formatHex(ep.descriptor()) + " " + ep.listenPort() + " "
                        + HexFormat.of().formatHex(src.export()));
                String connect = in.readLine();
                if (connect == null) {
                    return; // the reader gave up before connecting
                }
                String[] w = connect.split(" ");
                try (ChannelSet channels = ep.createChannels(List.of(ChannelSpec.server(HexFormat.of().parseHex(w[1]),
                        w[2], ep.listenPort())))) {
                    channels.awaitReady(SETUP);
                    out.println("CONNECTED");
                    in.readLine(); // DONE, or the end of input when the reader gave up
                }
            }
            out.println("BYE " + liveWord());
        } catch (Exception | Error e) {
            out.println("ERROR " + String.valueOf(e).replace('\n', ' '));
            System.err.println("hcomm doctor owner process: " + e);
            System.exit(1);
        }
    }
}
