package org.hcomm.shuffle.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.LoadOptions;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSetupException;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.endpoint.RegisteredMemory;

/**
 * The owner process of {@link ReadThroughputBenchmark}: a second JVM that allocates, fills with random data and
 * exports one registered region, then keeps the SERVER end of one channel to the benchmark JVM. It does no work for
 * shm reads (the reader copies from its memfd) and serves TCP reads on its soft NIC. Line protocol on stdin/stdout:
 *
 * <pre>
 * args: &lt;regionBytes&gt; &lt;shm|tcp&gt; [loader options: --provider, --library, --api, --read-strategy]
 * (start)                              -> READY &lt;endpointHex&gt; &lt;listenPort&gt; &lt;exportHex&gt; &lt;address&gt; &lt;size&gt; &lt;crc32&gt;
 * connect &lt;readerEndpointHex&gt; &lt;name&gt; -> CHANNEL READY &lt;path&gt; | CHANNEL FAILED &lt;reason&gt;
 * (stdin closed)                       -> closes everything and exits 0
 * </pre>
 * Failures answer {@code ERROR <text>}. Logs go to stderr.
 */
public final class ReadSourceOwner {
    private ReadSourceOwner() {}

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (args.length < 2) {
            out.println("ERROR usage: ReadSourceOwner <regionBytes> <shm|tcp> [loader options]");
            System.exit(2);
        }
        long size = Long.parseLong(args[0]);
        boolean tcp = "tcp".equals(args[1]);
        if (!HcommNative.load(LoadOptions.fromArgs(List.of(args).subList(2, args.length)))) {
            out.println("ERROR unavailable " + oneLine(String.valueOf(HcommNative.unavailabilityCause())));
            System.exit(2);
        }
        if (tcp) {
            SoftHcomm.configure("force_tcp", "1"); // before any channel exists
        }
        HexFormat hex = HexFormat.of();
        ChannelSet channels = null;
        try (Endpoint endpoint = Endpoint.create(InetAddress.getByName("127.0.0.1"));
                RegisteredMemory region = endpoint.allocate("bench-src", size)) {
            long crc = fillRandom(region.buffer(), System.nanoTime());
            out.println("READY " + hex.formatHex(endpoint.descriptor()) + " " + endpoint.listenPort() + " "
                    + hex.formatHex(region.export()) + " " + region.address() + " " + region.size() + " " + crc);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] w = line.trim().split(" ");
                try {
                    if (w[0].equals("connect") && w.length == 3) {
                        if (channels != null) {
                            channels.close();
                            channels = null;
                        }
                        channels = endpoint.createChannels(
                                List.of(ChannelSpec.server(hex.parseHex(w[1]), w[2], endpoint.listenPort())));
                        try {
                            channels.awaitReady(Duration.ofSeconds(60));
                            out.println("CHANNEL READY " + channels.channel(0).dataPath());
                        } catch (ChannelSetupException e) {
                            out.println("CHANNEL FAILED " + oneLine(e.getMessage()));
                        }
                    } else {
                        out.println("ERROR unknown command " + oneLine(line));
                    }
                } catch (RuntimeException e) {
                    out.println("ERROR " + oneLine(e.toString()));
                }
            }
            // stdin closed: the benchmark JVM is done (or gone)
            if (channels != null) {
                channels.close();
            }
        }
        System.exit(0);
    }

    /** Fills the whole buffer with random bytes and returns their CRC32. */
    static long fillRandom(ByteBuffer region, long seed) {
        ByteBuffer b = region.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        SplittableRandom r = new SplittableRandom(seed);
        int words = b.capacity() / 8;
        for (int i = 0; i < words; i++) {
            b.putLong(i * 8, r.nextLong());
        }
        for (int p = words * 8; p < b.capacity(); p++) {
            b.put(p, (byte) r.nextInt());
        }
        return crc32(region, 0, region.capacity());
    }

    static long crc32(ByteBuffer buffer, int offset, int length) {
        CRC32 crc = new CRC32();
        ByteBuffer b = buffer.duplicate();
        b.limit(offset + length).position(offset);
        crc.update(b);
        return crc.getValue();
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
    }
}
