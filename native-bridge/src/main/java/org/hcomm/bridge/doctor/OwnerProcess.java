package org.hcomm.bridge.doctor;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.LoadOptions;

/**
 * The second process of an end-to-end check (the owner of the bytes read), started from this class path to load
 * the library as this process did (its loader's options follow the main class's arguments), and the lines it
 * printed, read by a thread of their own so that every wait has a deadline. One line each way; the owner answers
 * {@code ERROR <what>} on any failure.
 */
final class OwnerProcess {
    private static final String END = "\u0000end";
    private final Process process;
    private final PrintWriter in;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private OwnerProcess(Process process) {
        this.process = process;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    if (l.startsWith("ERROR")) {
                        errors.add(l.substring("ERROR".length()).trim());
                    }
                    lines.add(l);
                }
            } catch (IOException e) {
                errors.add("its output could not be read: " + e);
            } finally {
                lines.add(END);
            }
        }, "hcomm-doctor-owner-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * {@code java -cp <this class path> <main> <args> <this process's LoadOptions as options>}, stderr to the
     * doctor's; {@link #load} reads the options back in the owner.
     */
    static OwnerProcess start(Class<?> main, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path")));
        String jnaPath = System.getProperty("jna.library.path");
        if (jnaPath != null) {
            cmd.add("-Djna.library.path=" + jnaPath);
        }
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        cmd.addAll(HcommNative.options().toArgs());
        return new OwnerProcess(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
    }

    /** In the owner: loads the library as the doctor's process did, from the arguments after the first {@code n}. */
    static void load(String[] args, int n) {
        HcommNative.load(LoadOptions.fromArgs(List.of(args).subList(n, args.length)));
    }

    void send(String line) {
        in.println(line);
    }

    /** The owner's next line, which must start with {@code word}, within {@code deadline}. */
    String[] expect(String word, Duration deadline) throws IOException, InterruptedException {
        String line = lines.poll(deadline.toSeconds(), TimeUnit.SECONDS);
        if (line == null) {
            throw new IOException("the owner process did not answer " + word + " within " + deadline.toSeconds()
                    + " s");
        }
        if (line.equals(END)) {
            throw new IOException("the owner process ended before " + word);
        }
        String[] w = line.split(" ");
        if (w[0].equals("ERROR")) {
            throw new IOException("the owner process failed instead of answering " + word);
        }
        if (!w[0].equals(word)) {
            throw new IOException("the owner process answered '" + line + "' instead of " + word);
        }
        return w;
    }

    /** What the owner reported with {@code ERROR} lines (read to the end once {@link #stop()} returned). */
    String errors() {
        return String.join("; ", errors);
    }

    /** Closes its input (it exits on end of input), waits a little, then kills it; idempotent. */
    void stop() {
        in.close();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            reader.join(TimeUnit.SECONDS.toMillis(5)); // its output read to the end
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
