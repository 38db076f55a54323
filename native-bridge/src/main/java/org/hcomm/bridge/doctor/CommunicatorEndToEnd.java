package org.hcomm.bridge.doctor;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.transport.CommunicatorTransport;
import org.hcomm.bridge.transport.PeerChannels;
import org.hcomm.bridge.transport.PeerSpec;
import org.hcomm.bridge.transport.ReadBatch;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.TransportException;

/**
 * The doctor's end-to-end check of the communicator path (Atlas A2/A3), through the shuffle's own transport
 * ({@link CommunicatorTransport}: the same joins, channels, addressing, claim and notifies as an executor's reads):
 * the owner ({@link #main}, a second process from the same class path) makes the root info ({@code HcclGetRootInfo});
 * both form a 2-member transport ({@code HcclCommInitRootInfoConfig}, {@code hcclBufferSize} just large enough for
 * the bytes, then {@code HcclChannelAcquire} of the HCCS channel between them, both ends); the owner stages a pattern
 * into a region of its HCCL buffer ({@link Region#commit}, host to device) and publishes the region's
 * {@link Region#readSource} (an offset into its HCCL buffer); this process reads it one-sidedly into a region of its
 * own ({@code HcommReadOnThread} at the base {@code HcclChannelGetHcclBuffer} gave plus the offset, in batch mode on
 * a stream of {@code HcclThreadAcquireWithStream}, completed by {@code aclrtSynchronizeStream} and copied device to
 * host into the region's mirror) and verifies every byte; both close their transport ({@code HcclCommDestroy}) and
 * (soft HComm) count no live object.
 *
 * <p>Owner protocol, one line each way: the owner prints {@code ROOT <rootInfoHex> <name>}, then
 * {@code STAGED <readSource>} once the bytes are on its device; the reader sends {@code DONE}, the owner closes its
 * transport and answers {@code BYE <noLiveObjects|unknown>}. Any failure answers {@code ERROR <what>}. Readiness
 * travels out of band after the bytes landed, as in the plugin.
 */
final class CommunicatorEndToEnd {
    private static final long PIECE = 16L << 20;
    private static final String OWNER = "owner";
    private static final Duration SETUP = Duration.ofSeconds(60);

    private CommunicatorEndToEnd() {}

    /** {@code hcclBufferSize} in MB for {@code bytes}: the HCCL buffer is twice it, at least the bytes read. */
    static int bufferMb(long bytes) {
        return (int) Math.max(1, (bytes + (2L << 20) - 1) / (2L << 20));
    }

    static Finding run(Provider provider, String address, long bytes, int ownerDevice, int readerDevice) {
        int bufferMb = bufferMb(bytes);
        String[] step = {"starting the owner process"};
        OwnerProcess owner = null;
        try {
            owner = OwnerProcess.start(CommunicatorEndToEnd.class, address, Long.toString(bytes),
                    Integer.toString(ownerDevice), Integer.toString(bufferMb));
            return read(owner, address, bytes, ownerDevice, readerDevice, bufferMb, step);
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
                new CommunicatorTransport.Member("reader", address));
    }

    private static Finding read(OwnerProcess owner, String address, long bytes, int ownerDevice, int device,
            int bufferMb, String[] step) throws Exception {
        step[0] = "waiting for the owner's root info (HcclGetRootInfo on device " + ownerDevice + ")";
        String[] root = owner.expect("ROOT", SETUP);
        if (SoftHcomm.isActive()) {
            SoftHcomm.configure("if_ip", address);
        }
        double seconds;
        long wrong = -1;
        step[0] = "joining the 2-rank communicator as rank 1 on device " + device + " and acquiring the channel to "
                + "rank 0 (both ends call HcclChannelAcquire)";
        try (CommunicatorTransport t = CommunicatorTransport.form(HexFormat.of().parseHex(root[1]),
                members(address), 1, device, bufferMb, root[2])) {
            step[0] = "waiting for the owner to stage " + bytes + " bytes host to device";
            long src = Long.parseLong(owner.expect("STAGED", SETUP)[1]);
            Region into = t.allocate("doctor-read", bytes);
            PeerChannels peers = t.connect(List.of(new PeerSpec(OWNER, new byte[0], 0, false, "doctor")));
            step[0] = "reading one-sidedly";
            long start = System.nanoTime();
            try (ReadBatch batch = t.newReadBatch()) {
                for (long at = 0; at < bytes; at += PIECE) {
                    batch.read(peers.channel(0), into.address() + at, src + at, Math.min(PIECE, bytes - at));
                }
                batch.await(); // the bytes are in the region's mirror then
            }
            seconds = (System.nanoTime() - start) / 1e9;
            step[0] = "verifying the bytes read";
            ByteBuffer got = into.buffer();
            for (long at = 0; at < bytes && wrong < 0; at += PIECE) {
                int len = (int) Math.min(PIECE, bytes - at);
                long w = EndToEnd.firstWrong(got.slice((int) at, len), at / 8, len);
                wrong = w < 0 ? -1 : at + w;
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
        String summary = String.format("read %d MiB one-sidedly from a second process through a 2-rank HCCL "
                + "communicator (devices %d and %d, hcclBufferSize %d MB, 1 HCCS channel): %.2f GB/s "
                + "(HcommReadOnThread in batch mode at the channel's view of the owner's HCCL buffer, completed by "
                + "aclrtSynchronizeStream, through the shuffle's CommunicatorTransport); staged host to device by "
                + "the owner, copied device to host here, every byte verified; both destroyed their communicator "
                + "(HcclCommDestroy); %s", bytes >> 20, ownerDevice, device, bufferMb, bytes / seconds / 1e9, live);
        return live.startsWith("left") ? Finding.fail(Check.END_TO_END, summary, "report this leak to the project")
                : Finding.pass(Check.END_TO_END, summary);
    }

    /**
     * The owner process: {@code CommunicatorEndToEnd <address> <bytes> <device> <bufferMb> <loader options>}; ends
     * on {@code DONE} or at the end of its input.
     */
    public static void main(String[] args) {
        Doctor.quietJdkLogging();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            OwnerProcess.load(args, 4);
            long bytes = Long.parseLong(args[1]);
            int device = Integer.parseInt(args[2]);
            int bufferMb = Integer.parseInt(args[3]);
            if (SoftHcomm.isActive()) {
                SoftHcomm.configure("if_ip", args[0]);
            }
            byte[] root = CommunicatorTransport.rootInfo(device);
            String name = "hcomm-doctor-" + ProcessHandle.current().pid();
            out.println("ROOT " + HexFormat.of().formatHex(root) + " " + name);
            try (CommunicatorTransport t = CommunicatorTransport.form(root, members(args[0]), 0, device, bufferMb,
                    name)) {
                Region staged = t.allocate("doctor-staged", bytes);
                ByteBuffer mirror = staged.buffer();
                for (long at = 0; at < bytes; at += PIECE) {
                    int len = (int) Math.min(PIECE, bytes - at);
                    EndToEnd.fill(mirror.slice((int) at, len), at / 8, len);
                }
                staged.commit(0, bytes);
                out.println("STAGED " + staged.readSource(0));
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
