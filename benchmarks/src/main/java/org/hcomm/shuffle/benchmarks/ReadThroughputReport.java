package org.hcomm.shuffle.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link ReadThroughputBenchmark} (JSON results) and prints a Markdown table: size, mode, shm GB/s, tcp GB/s,
 * memcpy GB/s, shm/memcpy, and whether the project target holds (reads of at least 1 MiB on the shm path reach at
 * least 80% of memcpy). GB = 10^9 bytes.
 *
 * <p>Arguments are JMH's own ({@code -f 1 -wi 2 -i 3 -w 1s -r 1s -p size=1048576 -rff out.json ...}). Without a
 * benchmark pattern it runs {@code ReadThroughputBenchmark}; without {@code -rf}/{@code -rff} it writes JSON to
 * {@code read-throughput.json}. The table is also written next to the JSON file ({@code .md}).
 */
public final class ReadThroughputReport {
    static final double TARGET = 0.80;
    static final int TARGET_MIN_SIZE = 1 << 20;

    private ReadThroughputReport() {}

    public static void main(String[] args) throws Exception {
        CommandLineOptions cmd = new CommandLineOptions(args);
        if (cmd.shouldHelp()) {
            cmd.showHelp();
            return;
        }
        ChainedOptionsBuilder options = new OptionsBuilder().parent(cmd);
        if (cmd.getIncludes().isEmpty()) {
            options.include(ReadThroughputBenchmark.class.getName() + "\\.");
        }
        if (!cmd.getResultFormat().hasValue()) {
            options.resultFormat(ResultFormatType.JSON);
        }
        String json = cmd.getResult().orElse("read-throughput.json");
        options.result(json);
        Collection<RunResult> results = new Runner(options.build()).run();
        String table = markdown(results);
        System.out.println();
        System.out.println(table);
        Path md = Path.of(json.endsWith(".json") ? json.substring(0, json.length() - 5) + ".md" : json + ".md");
        try {
            Files.writeString(md, table, StandardCharsets.UTF_8);
            System.out.println("JSON: " + Path.of(json).toAbsolutePath() + "\nTable: " + md.toAbsolutePath());
        } catch (IOException e) {
            System.err.println("could not write " + md + ": " + e);
        }
    }

    /** One score in bytes/s with its error (99.9% half-width, NaN when there are too few samples). */
    record Score(double bytesPerSecond, double error) {}

    /** The table for the results of one run (rows: size then mode; missing cells are "-"). */
    static String markdown(Collection<RunResult> results) {
        // key: size, mode -> column -> score
        Map<Integer, Map<String, Map<String, Score>>> rows = new TreeMap<>();
        for (RunResult rr : results) {
            String bench = rr.getParams().getBenchmark();
            String method = bench.substring(bench.lastIndexOf('.') + 1);
            int size = Integer.parseInt(rr.getParams().getParam("size"));
            String mode = rr.getParams().getParam("mode");
            String column = method.equals("memcpy") ? "memcpy" : rr.getParams().getParam("path");
            rows.computeIfAbsent(size, k -> new TreeMap<>(ReadThroughputReport::modeOrder))
                    .computeIfAbsent(mode, k -> new TreeMap<>()).put(column, bytesPerSecond(rr, size, mode));
        }
        StringBuilder sb = new StringBuilder();
        sb.append("| size | mode | shm GB/s | tcp GB/s | memcpy GB/s | shm/memcpy | target (>= 1 MiB: shm >= 80% memcpy) |\n");
        sb.append("|---:|:---|---:|---:|---:|---:|:---|\n");
        for (Map.Entry<Integer, Map<String, Map<String, Score>>> bySize : rows.entrySet()) {
            int size = bySize.getKey();
            for (Map.Entry<String, Map<String, Score>> byMode : bySize.getValue().entrySet()) {
                Map<String, Score> cols = byMode.getValue();
                Score shm = cols.get("shm");
                Score memcpy = cols.get("memcpy");
                String ratio = "-";
                String target = size < TARGET_MIN_SIZE ? "n/a" : "-";
                if (shm != null && memcpy != null && memcpy.bytesPerSecond() > 0) {
                    double r = shm.bytesPerSecond() / memcpy.bytesPerSecond();
                    ratio = String.format(Locale.ROOT, "%.0f%%", r * 100);
                    if (size >= TARGET_MIN_SIZE) {
                        target = r >= TARGET ? "met" : "MISSED";
                    }
                }
                sb.append("| ").append(sizeName(size)).append(" | ").append(byMode.getKey()).append(" | ")
                        .append(gb(shm)).append(" | ").append(gb(cols.get("tcp"))).append(" | ").append(gb(memcpy))
                        .append(" | ").append(ratio).append(" | ").append(target).append(" |\n");
            }
        }
        return sb.toString();
    }

    private static int modeOrder(String a, String b) {
        return Integer.compare(rank(a), rank(b)) != 0 ? Integer.compare(rank(a), rank(b)) : a.compareTo(b);
    }

    private static int rank(String mode) {
        return mode.equals("single") ? 0 : mode.equals("batched") ? 1 : 2;
    }

    /** The {@code bytes} aux counter (bytes/s); falls back to invocations/s times bytes per invocation. */
    static Score bytesPerSecond(RunResult rr, int size, String mode) {
        Result<?> bytes = rr.getSecondaryResults().get("bytes");
        if (bytes != null) {
            return new Score(bytes.getScore(), bytes.getScoreError());
        }
        long perInvocation = mode.equals("batched") ? (long) ReadThroughputBenchmark.REGION : size;
        Result<?> primary = rr.getPrimaryResult();
        return new Score(primary.getScore() * perInvocation, primary.getScoreError() * perInvocation);
    }

    static String gb(Score s) {
        if (s == null) {
            return "-";
        }
        double v = s.bytesPerSecond() / 1e9;
        double e = s.error() / 1e9;
        String f = v >= 0.995 ? "%.2f" : v >= 0.00995 ? "%.3f" : "%.6f"; // small scores keep 2-3 digits
        return Double.isNaN(e) ? String.format(Locale.ROOT, f, v)
                : String.format(Locale.ROOT, f + " ±" + f, v, e);
    }

    static String sizeName(int size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return (size >> 20) + " MiB";
        }
        if (size >= 1 << 10 && size % (1 << 10) == 0) {
            return (size >> 10) + " KiB";
        }
        return size + " B";
    }
}
