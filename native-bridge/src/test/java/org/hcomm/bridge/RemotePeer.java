package org.hcomm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.hcomm.bridge.endpoint.SocketRole;

/** Test side of {@link PeerProcess}: a second JVM with the same java binary and class path, driven by lines. */
final class RemotePeer implements AutoCloseable {
    private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(90);
    private static final String EOF = "\u0000EOF";

    /** A region the peer allocated, registered and exported. */
    record Memory(int index, byte[] descriptor, long address, long size) {}

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final byte[] endpointDescriptor;
    private final int listenPort;
    private boolean exited;

    private RemotePeer(Process process) throws Exception {
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::pump, "peer-" + process.pid() + "-stdout");
        reader.setDaemon(true);
        reader.start();
        String[] ready = expect("READY").split(" ");
        this.endpointDescriptor = Hex.parse(ready[1]);
        this.listenPort = Integer.parseInt(ready[2]);
    }

    /** Starts a peer with extra environment variables (e.g. HCOMM_SOFT_FORCE_TCP=1). */
    static RemotePeer start(Map<String, String> env) throws Exception {
        return new RemotePeer(launch(env, List.of()));
    }

    /** Launches {@link PeerProcess} with the given extra JVM options ({@code -D}, {@code -X}) and arguments. */
    static Process launch(Map<String, String> env, List<String> jvmOptionsAndArgs) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.add("-Xmx256m");
        String jnaPath = System.getProperty("jna.library.path");
        if (jnaPath != null) {
            cmd.add("-Djna.library.path=" + jnaPath);
        }
        List<String> args = new ArrayList<>();
        for (String o : jvmOptionsAndArgs) {
            (o.startsWith("-D") || o.startsWith("-X") ? cmd : args).add(o);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(PeerProcess.class.getName());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        return pb.start();
    }

    private void pump() {
        try (BufferedReader r = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException ignored) {
            // the process went away; EOF below tells the waiter
        }
        lines.add(EOF);
    }

    byte[] endpointDescriptor() {
        return endpointDescriptor.clone();
    }

    int listenPort() {
        return listenPort;
    }

    long pid() {
        return process.pid();
    }

    /** Sends a command without waiting for its answer. */
    void send(String command) throws IOException {
        stdin.write(command + "\n");
        stdin.flush();
    }

    /** The next line, which must start with {@code prefix}. */
    String expect(String prefix) throws InterruptedException {
        String line = lines.poll(REPLY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            fail("peer " + process.pid() + " sent nothing within " + REPLY_TIMEOUT + " (expected " + prefix + ")");
        }
        if (line.equals(EOF)) {
            lines.add(EOF);
            fail("peer " + process.pid() + " exited (expected " + prefix + ")");
        }
        if (!line.startsWith(prefix)) {
            fail("peer " + process.pid() + " answered '" + line + "', expected " + prefix);
        }
        return line;
    }

    Memory alloc(String tag, long size) throws Exception {
        send("alloc " + tag + " " + size);
        String[] w = expect("MEM ").split(" ");
        return new Memory(Integer.parseInt(w[1]), Hex.parse(w[2]), Long.parseLong(w[3]), Long.parseLong(w[4]));
    }

    void fill(Memory m, long seed) throws Exception {
        send("fill " + m.index() + " " + seed);
        expect("OK");
    }

    void configure(String key, String value) throws Exception {
        send("configure " + key + " " + value);
        expect("OK");
    }

    /** Starts the peer's side of {@code count} channels; answer with {@link #awaitChannels()}. */
    void connect(SocketRole role, byte[] remoteEndpoint, int port, String name, int count) throws IOException {
        send("connect " + role + " " + Hex.of(remoteEndpoint) + " " + port + " " + name + " " + count);
    }

    /** "CHANNELS READY path" or "CHANNELS FAILED index status". */
    String awaitChannels() throws InterruptedException {
        return expect("CHANNELS ");
    }

    /** Clean exit; asserts the peer had no live HComm objects left. */
    void exit() throws Exception {
        send("exit");
        String bye = expect("BYE ");
        assertTrue(bye.startsWith("BYE true"), "peer leaked HComm objects: " + bye);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "peer did not exit");
        assertEquals(0, process.exitValue());
        exited = true;
    }

    /** Kills the peer abruptly (SIGKILL) and waits for it to be gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        exited = true;
    }

    @Override
    public void close() throws Exception {
        if (!exited && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        stdin.close();
    }
}
