package org.hcomm.shuffle.benchmarks;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.hcomm.bridge.HcommNative;

/** The benchmark JVM's handle on a {@link ReadSourceOwner} child: same java binary and class path, line protocol. */
final class OwnerProcess implements AutoCloseable {
    private static final long REPLY_TIMEOUT_SECONDS = 120;
    private static final String EOF = "\u0000EOF";

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final byte[] endpointDescriptor;
    final int listenPort;
    final byte[] memoryDescriptor;
    final long address;
    final long size;
    final long crc32;

    private OwnerProcess(Process process) throws IOException, InterruptedException {
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread pump = new Thread(this::pump, "owner-" + process.pid() + "-stdout");
        pump.setDaemon(true);
        pump.start();
        String[] w = expect("READY ").split(" ");
        HexFormat hex = HexFormat.of();
        this.endpointDescriptor = hex.parseHex(w[1]);
        this.listenPort = Integer.parseInt(w[2]);
        this.memoryDescriptor = hex.parseHex(w[3]);
        this.address = Long.parseLong(w[4]);
        this.size = Long.parseLong(w[5]);
        this.crc32 = Long.parseLong(w[6]);
    }

    /** Starts the owner of a {@code regionBytes} random region on {@code path} ("shm" or "tcp"). */
    static OwnerProcess start(long regionBytes, String path) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.add("-Xmx128m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        String jnaPath = System.getProperty("jna.library.path");
        if (jnaPath != null) {
            cmd.add("-Djna.library.path=" + jnaPath);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ReadSourceOwner.class.getName());
        cmd.add(Long.toString(regionBytes));
        cmd.add(path);
        cmd.addAll(HcommNative.options().toArgs()); // the owner loads the library as this JVM did
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if ("tcp".equals(path)) {
            pb.environment().put("HCOMM_SOFT_FORCE_TCP", "1");
        }
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        try {
            return new OwnerProcess(p);
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /** Asks the owner to create and await the SERVER end of channel {@code name}; answer with {@link #awaitChannel}. */
    void connect(byte[] readerEndpoint, String name) throws IOException {
        send("connect " + HexFormat.of().formatHex(readerEndpoint) + " " + name);
    }

    /** The data path the owner's channel reports once READY. */
    String awaitChannel() throws IOException, InterruptedException {
        String line = expect("CHANNEL ");
        if (!line.startsWith("CHANNEL READY ")) {
            throw new IOException("owner " + process.pid() + ": " + line);
        }
        return line.substring("CHANNEL READY ".length());
    }

    private void send(String command) throws IOException {
        stdin.write(command + "\n");
        stdin.flush();
    }

    private String expect(String prefix) throws IOException, InterruptedException {
        String line = lines.poll(REPLY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (line == null) {
            throw new IOException("owner " + process.pid() + " sent nothing within " + REPLY_TIMEOUT_SECONDS
                    + " s (expected " + prefix + ")");
        }
        if (line.equals(EOF)) {
            lines.add(EOF);
            throw new IOException("owner " + process.pid() + " exited (expected " + prefix + ")");
        }
        if (!line.startsWith(prefix)) {
            throw new IOException("owner " + process.pid() + " answered '" + line + "', expected " + prefix);
        }
        return line;
    }

    private void pump() {
        try (BufferedReader r = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException ignored) {
            // the process went away; EOF tells the waiter
        }
        lines.add(EOF);
    }

    /** Closes the owner's stdin (it cleans up and exits), waits for it, kills it if it hangs. */
    @Override
    public void close() throws IOException, InterruptedException {
        try {
            stdin.close();
        } catch (IOException ignored) {
            // already gone
        }
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new IOException("owner " + process.pid() + " did not exit after stdin closed; killed");
        }
        if (process.exitValue() != 0) {
            throw new IOException("owner " + process.pid() + " exited with " + process.exitValue());
        }
    }
}
