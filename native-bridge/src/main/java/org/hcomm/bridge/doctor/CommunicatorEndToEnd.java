package org.hcomm.bridge.doctor;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.transport.CommunicatorTransport;
import org.hcomm.bridge.transport.CommunicatorWindows;
import org.hcomm.bridge.transport.OwnerEnd;
import org.hcomm.bridge.transport.ReaderEnd;
import org.hcomm.bridge.transport.TransportException;
import org.hcomm.bridge.transport.WindowLayout;

/**
 * The doctor's end-to-end check of the communicator path (Atlas A2/A3), through the shuffle's own window path
 * ({@link CommunicatorTransport#formWindowed} and {@link CommunicatorWindows}: the same joins, channels, addressing,
 * claim and DATA/ACK notifies as an executor's window exchanges): the owner ({@link #main}, a second process from the
 * same class path) makes the root info ({@code HcclGetRootInfo}); both form a 2-member windowed transport
 * ({@code HcclCommInitRootInfoConfig} with {@code hcclBufferSize} {@value #BUFFER_MB} MB, then
 * {@code HcclChannelAcquire} of the HCCS channel between them with the window's notifies, both ends); this process
 * opens a receive window ({@link ReaderEnd}) and sends its slot offsets, the owner opens a send window for it
 * ({@link OwnerEnd}) and answers with its own; the owner streams the pattern slice by slice ({@link OwnerEnd#put}:
 * host to device into its send slot, DATA raised on the reader; from the k-th slice on it first waits for the
 * reader's ACK of the slot) and this process takes every slice ({@link ReaderEnd#take}: DATA waited for, the owner's
 * slot read at the base {@code HcclChannelGetHcclBuffer} gave plus the granted offset into its receive slot, ACK
 * raised, copied device to host) and verifies every byte; both ends finish balanced and close, both close their
 * transport ({@code HcclCommDestroy}) and (soft HComm) count no live object. The HCCL buffer holds one window per
 * half whatever {@code --bytes} is: the bytes stream through it.
 *
 * <p>Owner protocol, one line each way: the owner prints {@code ROOT <rootInfoHex> <name>}; the reader sends
 * {@code SLOTS <lane> <o1,o2,...>} (the lane of the channel its window took, its receive slots' offsets), the owner
 * answers {@code GRANTED <o1,o2,...>} (its send slots' offsets), streams the bytes and, once every ACK came
 * ({@link OwnerEnd#finish}), prints {@code SENT <slices>}; the reader sends {@code DONE}, the owner closes its
 * transport and answers {@code BYE <noLiveObjects|unknown>}. Any failure answers {@code ERROR <what>}. Offsets, never
 * addresses, cross the control lines; slices are signalled by notifies only, as in the plugin.
 */
final class CommunicatorEndToEnd {
    /** The window: {@value #SLOTS} slots of {@link #SLICE} bytes at each end (the plugin's default layout). */
    static final int SLOTS = 2;
    static final long SLICE = 4L << 20;
    /**
     * {@code hcclBufferSize} in MB: the HCCL buffer is twice it, so each half (send, receive) holds exactly one
     * window of {@link #SLOTS} x {@link #SLICE}, whatever the bytes read.
     */
    static final int BUFFER_MB = (int) (SLOTS * SLICE >> 20);
    /** The windows' read timeout: how long a notify wait or a slice may take before the exchange fails. */
    private static final long WINDOW_TIMEOUT_MILLIS = 10_000;
    private static final String OWNER = "owner";
    private static final String READER = "reader";
    private static final Duration SETUP = Duration.ofSeconds(60);

    private CommunicatorEndToEnd() {}

    static CommunicatorTransport.WindowSpec window() {
        return new CommunicatorTransport.WindowSpec(SLOTS, SLICE, WINDOW_TIMEOUT_MILLIS);
    }

    static Finding run(Provider provider, String address, long bytes, int ownerDevice, int readerDevice) {
        String[] step = {"starting the owner process"};
        OwnerProcess owner = null;
        try {
            owner = OwnerProcess.start(CommunicatorEndToEnd.class, address, Long.toString(bytes),
                    Integer.toString(ownerDevice));
            return read(owner, address, bytes, ownerDevice, readerDevice, step);
        } catch (Exception | Error e) {
            String ownerSaid = "";
            if (owner != null) {
                owner.stop(); // its last lines are read by then
                ownerSaid = owner.errors();
            }
            String what = e instanceof HcommException || e instanceof TransportException ? e.getMessage()
                    : String.valueOf(e);
            return Finding.fail(Check.END_TO_END, "the communicator read between two processes failed while "
                    + step[0] + ": " + what + (ownerSaid.isEmpty() ? "" : "; the owner process said: " + ownerSaid),
                    provider == Provider.CANN ? "the two ranks need two NPUs of this host that are free (--devices "
                    + "OWNER,READER, now " + ownerDevice + "," + readerDevice + "), HCCL_IF_IP set to this host's "
                    + "address if the root's listener picks another, and must join within HCCL_CONNECT_TIMEOUT; "
                    + "the findings above say what else to check"
                    : "the findings above say what to check; --json keeps the report");
        } finally {
            if (owner != null) {
                owner.stop();
            }
        }
    }

    /** The two members, in rank order: the owner (rank 0) and this process, both on {@code address}. */
    private static List<CommunicatorTransport.Member> members(String address) {
        return List.of(new CommunicatorTransport.Member(OWNER, address),
                new CommunicatorTransport.Member(READER, address));
    }

    /** Slot offsets as they cross the control lines: {@code o1,o2,...}. */
    static String offsets(long[] slots) {
        return Arrays.stream(slots).mapToObj(Long::toString).collect(Collectors.joining(","));
    }

    static long[] parseOffsets(String line) {
        return Arrays.stream(line.split(",")).mapToLong(Long::parseLong).toArray();
    }

    private static Finding read(OwnerProcess owner, String address, long bytes, int ownerDevice, int device,
            String[] step) throws Exception {
        step[0] = "waiting for the owner's root info (HcclGetRootInfo on device " + ownerDevice + ")";
        String[] root = owner.expect("ROOT", SETUP);
        if (SoftHcomm.isActive()) {
            SoftHcomm.configure("if_ip", address);
        }
        long nanos = 0;
        long wrong = -1;
        long slices;
        boolean roce;
        step[0] = "joining the 2-rank communicator as rank 1 on device " + device + " and acquiring the channel to "
                + "rank 0 (both ends call HcclChannelAcquire)";
        try (CommunicatorTransport t = CommunicatorTransport.formWindowed(HexFormat.of().parseHex(root[1]),
                members(address), 1, device, BUFFER_MB, root[2], window())) {
            WindowLayout layout = t.windows().layout();
            slices = layout.sliceCount(bytes);
            step[0] = "opening a receive window of " + SLOTS + " slots x " + (SLICE >> 20) + " MiB";
            ReaderEnd r = t.windows().openReader(OWNER, SETUP.toMillis());
            if (r == null) {
                throw new IllegalStateException("no receive window became free within " + SETUP.toSeconds() + " s");
            }
            try (r) {
                roce = r.roce();
                step[0] = "waiting for the owner to open a send window for this process's slots";
                owner.send("SLOTS " + r.lane() + " " + offsets(r.slotOffsets()));
                // the stream's length, as the shuffle attaches it: over HCCS the reader reads one slice ahead
                r.attach(parseOffsets(owner.expect("GRANTED", SETUP)[1]), bytes);
                for (long j = 0; j < slices; j++) {
                    int len = layout.sliceLength(bytes, j);
                    step[0] = "taking slice " + (j + 1) + " of " + slices + " through the window (DATA waited for, "
                            + "the owner's slot read, ACK raised)";
                    long start = System.nanoTime();
                    ByteBuffer got = r.take(len);
                    nanos += System.nanoTime() - start;
                    step[0] = "verifying the bytes read";
                    long at = j * layout.sliceBytes();
                    long w = wrong >= 0 ? -1 : EndToEnd.firstWrong(got, at / 8, len);
                    if (w >= 0) {
                        wrong = at + w; // every slice is still taken: the window ends balanced
                    }
                }
                step[0] = "waiting for the owner to finish its window (its last ACKs)";
                long sent = Long.parseLong(owner.expect("SENT", SETUP)[1]);
                if (sent != slices) {
                    throw new IllegalStateException("the owner put " + sent + " slices, this process took " + slices);
                }
            }
            step[0] = "destroying the communicator (HcclCommDestroy)";
        }
        if (wrong >= 0) {
            return Finding.fail(Check.END_TO_END, "read " + bytes + " bytes through the communicator but byte "
                    + wrong + " differs from what the owner staged", "report this to the project with the "
                    + "doctor's --json output");
        }
        step[0] = "waiting for the owner to destroy its communicator";
        owner.send("DONE");
        String[] bye = owner.expect("BYE", SETUP);
        String live = EndToEnd.liveObjects(bye[1]);
        double seconds = Math.max(nanos, 1) / 1e9;
        String summary = String.format("read %d MiB one-sidedly from a second process through a 2-rank HCCL "
                + "communicator (devices %d and %d, hcclBufferSize %d MB: one window per half, 1 %s channel) in %d "
                + "slices through a window of %d slots x %d MiB, as the shuffle's window path moves them: %.2f GB/s "
                + "(the reader's time in take); per slice the owner staged it host to device into its send slot "
                + "and raised DATA%s, the reader waited for DATA, %s, raised ACK and copied the slot device to host "
                + "(HcommReadOnThread in batch mode, completed by aclrtSynchronizeStreamWithTimeout), every byte "
                + "verified; both window ends finished balanced (every DATA and ACK waited for); both destroyed "
                + "their communicator (HcclCommDestroy); %s", bytes >> 20, ownerDevice, device, BUFFER_MB,
                roce ? "RoCE" : "HCCS", slices, SLOTS, SLICE >> 20, bytes / seconds / 1e9,
                roce ? " after writing it into the reader's receive slot" : "",
                roce ? "found the slice written into its receive slot (over RoCE the owner writes, then DATA)"
                        : "read the owner's slot at the channel's base + its offset over HCCS",
                live);
        return live.startsWith("left") ? Finding.fail(Check.END_TO_END, summary, "report this leak to the project")
                : Finding.pass(Check.END_TO_END, summary);
    }

    /**
     * The owner process: {@code CommunicatorEndToEnd <address> <bytes> <device> <loader options>}; ends on
     * {@code DONE} or at the end of its input.
     */
    public static void main(String[] args) {
        Doctor.quietJdkLogging();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            OwnerProcess.load(args, 3);
            long bytes = Long.parseLong(args[1]);
            int device = Integer.parseInt(args[2]);
            if (SoftHcomm.isActive()) {
                SoftHcomm.configure("if_ip", args[0]);
            }
            byte[] root = CommunicatorTransport.rootInfo(device);
            String name = "hcomm-doctor-" + ProcessHandle.current().pid();
            out.println("ROOT " + HexFormat.of().formatHex(root) + " " + name);
            try (CommunicatorTransport t = CommunicatorTransport.formWindowed(root, members(args[0]), 0, device,
                    BUFFER_MB, name, window())) {
                String slots = in.readLine();
                if (slots == null) {
                    return; // the reader gave up before opening its window
                }
                if (!slots.startsWith("SLOTS ")) {
                    throw new IllegalStateException("expected SLOTS, the reader sent '" + slots + "'");
                }
                WindowLayout layout = t.windows().layout();
                String[] laneAndSlots = slots.split(" ");
                OwnerEnd end = t.windows().openOwner(READER, Integer.parseInt(laneAndSlots[1]),
                        parseOffsets(laneAndSlots[2]), SETUP.toMillis());
                if (end == null) {
                    throw new IllegalStateException("no send window became free within " + SETUP.toSeconds() + " s");
                }
                try (end) {
                    out.println("GRANTED " + offsets(end.slotOffsets()));
                    for (long j = 0; j < layout.sliceCount(bytes); j++) {
                        int len = layout.sliceLength(bytes, j);
                        EndToEnd.fill(end.staging(), j * layout.sliceBytes() / 8, len);
                        end.put(len);
                    }
                    end.finish();
                }
                out.println("SENT " + end.slicesPut());
                in.readLine(); // DONE, or the end of input when the reader gave up
            }
            out.println("BYE " + EndToEnd.liveWord());
        } catch (Exception | Error e) {
            out.println("ERROR " + String.valueOf(e).replace('\n', ' '));
            System.err.println("hcomm doctor owner process: " + e);
            System.exit(1);
        }
    }
}
