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
 * Runs {@link ReadThroughputBenchmark} and {@link NettyFetchBenchmark} in one JMH run (JSON results) and prints a
 * Markdown table: size, mode, shm / tcp / Netty / memcpy GB/s, each transport as a ratio of memcpy, shm over Netty,
 * and whether the two targets of issue 4 hold for reads of at least 1 MiB: shm at least 80% of memcpy, and at least
 * 5x Netty's fetch throughput. GB = 10^9 bytes.
 *
 * <p>Arguments are JMH's own ({@code -f 1 -wi 2 -i 3 -w 1s -r 1s -p size=1048576 -rff out.json ...}). Without a
 * benchmark pattern it runs both benchmarks — {@code NettyFetchBenchmark} only when Spark is on the class path,
 * i.e. from the Maven class path ({@code mvn -o -B -Pread-bench -pl benchmarks -am -DskipTests verify}), not from
 * the shaded {@code benchmarks.jar}, which leaves Spark out; without {@code -rf}/{@code -rff} it writes JSON to
 * {@code read-throughput.json}. The table is also written next to the JSON file ({@code .md}).
 */
public final class ReadThroughputReport {
    static final double TARGET = 0.80;
    static final int TARGET_MIN_SIZE = 1 << 20;
    static final double NETTY_TARGET = 5.0;

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
            if (sparkPresent()) {
                options.include(NettyFetchBenchmark.class.getName() + "\\.");
            } else {
                System.err.println("Spark is not on the class path (the shaded benchmarks.jar leaves it out): "
                        + "skipping NettyFetchBenchmark; run mvn -o -B -Pread-bench -pl benchmarks -am -DskipTests "
                        + "verify for it");
            }
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

    private static boolean sparkPresent() {
        try {
            Class.forName("org.apache.spark.network.netty.NettyBlockTransferService", false,
                    ReadThroughputReport.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
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
            String column = method.equals("memcpy") ? "memcpy"
                    : method.equals("nettyFetch") ? "netty" : rr.getParams().getParam("path");
            rows.computeIfAbsent(size, k -> new TreeMap<>(ReadThroughputReport::modeOrder))
                    .computeIfAbsent(mode, k -> new TreeMap<>()).put(column, bytesPerSecond(rr, size, mode));
        }
        StringBuilder sb = new StringBuilder();
        sb.append("| size | mode | shm GB/s | tcp GB/s | Netty GB/s | memcpy GB/s | shm/memcpy | tcp/memcpy "
                + "| Netty/memcpy | shm/Netty | target (>= 1 MiB): shm >= 80% memcpy | target (>= 1 MiB): shm >= 5x "
                + "Netty |\n");
        sb.append("|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|:---|:---|\n");
        for (Map.Entry<Integer, Map<String, Map<String, Score>>> bySize : rows.entrySet()) {
            int size = bySize.getKey();
            for (Map.Entry<String, Map<String, Score>> byMode : bySize.getValue().entrySet()) {
                Map<String, Score> cols = byMode.getValue();
                Score shm = cols.get("shm");
                Score tcp = cols.get("tcp");
                Score netty = cols.get("netty");
                Score memcpy = cols.get("memcpy");
                double shmMemcpy = ratio(shm, memcpy);
                double shmNetty = ratio(shm, netty);
                sb.append("| ").append(sizeName(size)).append(" | ").append(byMode.getKey()).append(" | ")
                        .append(gb(shm)).append(" | ").append(gb(tcp)).append(" | ").append(gb(netty)).append(" | ")
                        .append(gb(memcpy)).append(" | ").append(percent(shmMemcpy)).append(" | ")
                        .append(percent(ratio(tcp, memcpy))).append(" | ").append(percent(ratio(netty, memcpy)))
                        .append(" | ").append(times(shmNetty)).append(" | ")
                        .append(target(size, shmMemcpy, TARGET)).append(" | ")
                        .append(target(size, shmNetty, NETTY_TARGET)).append(" |\n");
            }
        }
        return sb.toString();
    }

    /** a / b, NaN when either is missing. */
    static double ratio(Score a, Score b) {
        if (a == null || b == null || !(b.bytesPerSecond() > 0)) {
            return Double.NaN;
        }
        return a.bytesPerSecond() / b.bytesPerSecond();
    }

    static String percent(double r) {
        if (Double.isNaN(r)) {
            return "-";
        }
        return r >= 0.0995 ? String.format(Locale.ROOT, "%.0f%%", r * 100) : String.format(Locale.ROOT, "%.2f%%",
                r * 100);
    }

    static String times(double r) {
        return Double.isNaN(r) ? "-" : String.format(Locale.ROOT, r >= 9.95 ? "%.0fx" : "%.1fx", r);
    }

    static String target(int size, double r, double goal) {
        if (size < TARGET_MIN_SIZE) {
            return "n/a";
        }
        return Double.isNaN(r) ? "-" : r >= goal ? "met" : "MISSED";
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
