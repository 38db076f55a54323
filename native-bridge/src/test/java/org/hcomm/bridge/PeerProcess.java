package org.hcomm.bridge;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSetupException;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.endpoint.SocketRole;

/**
 * The other process of the cross-process tests: owns an endpoint on 127.0.0.1 and answers one line per command on
 * stdout. Started by {@link RemotePeer} with the test's own java binary and class path.
 *
 * <pre>
 * (start)                                  -> READY &lt;endpointDescHex&gt; &lt;listenPort&gt; &lt;pid&gt;
 * alloc &lt;tag&gt; &lt;size&gt;                       -> MEM &lt;index&gt; &lt;exportDescHex&gt; &lt;address&gt; &lt;size&gt;
 * fill &lt;index&gt; &lt;seed&gt;                      -> OK            (TestPattern over the whole region)
 * configure &lt;key&gt; &lt;value&gt;                  -> OK
 * connect &lt;role&gt; &lt;remoteDescHex&gt; &lt;port&gt; &lt;name&gt; &lt;count&gt;
 *                                          -> CHANNELS READY &lt;path&gt; | CHANNELS FAILED &lt;index&gt; &lt;status&gt; after &lt;n&gt; ms
 *                                             (channels named name-0 .. name-(count-1); polls until settled)
 * close-channels                           -> OK
 * exit                                     -> BYE &lt;noLiveObjects&gt; &lt;counters&gt;, then exit 0
 * kill                                     -> (halts at once, no cleanup)
 * probe [loader options]                   -> AVAILABLE &lt;source&gt; | UNAVAILABLE &lt;cause class&gt; &lt;message&gt;
 * </pre>
 * Any failure answers {@code ERROR <exception>} and the peer keeps serving.
 */
public final class PeerProcess {
    private final PrintStream out;
    private Endpoint endpoint;
    private final List<RegisteredMemory> regions = new ArrayList<>();
    private ChannelSet channels;

    private PeerProcess(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (args.length > 0 && args[0].equals("probe")) {
            if (HcommNative.load(LoadOptions.fromArgs(List.of(args).subList(1, args.length)))) {
                out.println("AVAILABLE " + HcommNative.librarySource());
            } else {
                Throwable t = HcommNative.unavailabilityCause();
                out.println("UNAVAILABLE " + t.getClass().getName() + " " + oneLine(t.getMessage()));
            }
            return;
        }
        new PeerProcess(out).serve();
    }

    private void serve() throws Exception {
        if (!HcommNative.isAvailable()) {
            out.println("ERROR unavailable " + oneLine(String.valueOf(HcommNative.unavailabilityCause())));
            System.exit(2);
        }
        endpoint = Endpoint.create(InetAddress.getByName("127.0.0.1"));
        out.println("READY " + Hex.of(endpoint.descriptor()) + " " + endpoint.listenPort() + " "
                + ProcessHandle.current().pid());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            try {
                switch (w[0]) {
                    case "alloc":
                        alloc(w[1], Long.parseLong(w[2]));
                        break;
                    case "fill":
                        TestPattern.fill(regions.get(Integer.parseInt(w[1])).buffer(), Long.parseLong(w[2]));
                        out.println("OK");
                        break;
                    case "configure":
                        SoftHcomm.configure(w[1], w[2]);
                        out.println("OK");
                        break;
                    case "connect":
                        connect(SocketRole.valueOf(w[1]), Hex.parse(w[2]), Integer.parseInt(w[3]), w[4],
                                Integer.parseInt(w[5]));
                        break;
                    case "close-channels":
                        closeChannels();
                        out.println("OK");
                        break;
                    case "exit":
                        exit();
                        return;
                    case "kill":
                        Runtime.getRuntime().halt(137);
                        break;
                    default:
                        out.println("ERROR unknown command " + w[0]);
                }
            } catch (Exception | AssertionError e) {
                out.println("ERROR " + oneLine(e.toString()));
            }
        }
        exit(); // stdin closed: the test went away
    }

    private void alloc(String tag, long size) {
        RegisteredMemory m = endpoint.allocate(tag, size);
        regions.add(m);
        out.println("MEM " + (regions.size() - 1) + " " + Hex.of(m.export()) + " " + m.address() + " " + m.size());
    }

    private void connect(SocketRole role, byte[] remote, int port, String name, int count) throws Exception {
        closeChannels();
        List<ChannelSpec> specs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            specs.add(ChannelSpec.server(remote, name + "-" + i, port).withRole(role));
        }
        channels = endpoint.createChannels(specs);
        long start = System.nanoTime();
        try {
            channels.awaitReady(Duration.ofSeconds(60));
            out.println("CHANNELS READY " + channels.channel(0).dataPath());
        } catch (ChannelSetupException e) {
            out.println("CHANNELS FAILED " + e.channelIndex() + " " + e.channelStatus() + " after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms");
        }
    }

    private void closeChannels() {
        if (channels != null) {
            channels.close();
            channels = null;
        }
    }

    private void exit() {
        closeChannels();
        for (RegisteredMemory m : regions) {
            m.close();
        }
        endpoint.close();
        SoftCounters c = SoftHcomm.counters();
        out.println("BYE " + c.noLiveObjects() + " " + c);
        out.flush();
        System.exit(0);
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
    }
}
