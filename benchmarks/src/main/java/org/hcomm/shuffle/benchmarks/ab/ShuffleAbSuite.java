package org.hcomm.shuffle.benchmarks.ab;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Spark shuffle A/B suite (issue 4 §1): every configuration on the same generated data in the same run,
 * alternating them within each cell of the matrix, each repetition in an order that {@link RunOrder} balances over
 * the repetitions, in the cells of workloads x sizes x executor counts x serializers. Writes one JSON file per run
 * ({@code <out>/ab/runs/}), {@code <out>/ab/summary.md} (medians with min–max, ratios to builtin and
 * builtin-network) and {@code <out>/ab/ratio.png} (named after the slice when {@code -Dab.*} narrowed the preset,
 * see {@link Preset#sliceSuffix}); fails (exit code 1) when a run failed or answers differ.
 *
 * <p>Arguments: {@code outputDir} (benchmarks/target); the matrix comes from {@code -Dab.preset} and the
 * overrides described in {@link Preset}.
 */
public final class ShuffleAbSuite {
    /** Rough cost model for the start-up estimate: seconds per run besides the data, and per MB of shuffle. */
    static final double SECONDS_PER_RUN = 7;
    /** Per workload: seconds of job time besides the data, and per MB of shuffle (measured on 2 cores, 2 executors). */
    static final Map<String, double[]> JOB_SECONDS = Map.of("terasort", new double[] {2, 0.02},
            "aggregation", new double[] {1.5, 0.016}, "join", new double[] {2, 0.027}, "tpch", new double[] {14, 0.07},
            "remote-read", new double[] {2, 0.015}, "tpcds", new double[] {150, 0.13},
            "tpcds-nobroadcast", new double[] {150, 0.13});
    static final long WARMUP_MB = 16;

    private ShuffleAbSuite() {
    }

    /** Set when the JVM begins to shut down (e.g. SIGTERM): runs after that fail for that reason alone. */
    private static final java.util.concurrent.atomic.AtomicBoolean STOPPING =
            new java.util.concurrent.atomic.AtomicBoolean();

    public static void main(String[] args) throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> STOPPING.set(true), "ab-stopping"));
        Preset preset = Preset.fromSystemProperties();
        String outProp = System.getProperty("ab.out", "");
        // A relative -Dab.out is relative to where Maven was started (ab.base), not to the module directory.
        Path out = outProp.isBlank() || outProp.startsWith("${")
                ? Path.of(args.length > 0 ? args[0] : "target").resolve("ab")
                : Path.of(System.getProperty("ab.base", ".")).resolve(outProp);
        Path runsDir = out.resolve("runs");
        Files.createDirectories(runsDir);
        boolean resume = Boolean.parseBoolean(System.getProperty("ab.resume", "false").replace("${ab.resume}", ""));
        List<RunResult> previous = resume ? resumable(out, runsDir, preset) : List.of();
        if (!resume) {
            deleteRuns(runsDir, "");
        }
        Files.writeString(out.resolve("settings.txt"), settingsLine(preset), StandardCharsets.UTF_8);
        String machine = String.format(Locale.ROOT, "%s, %d cores, Java %s, %s", hostName(),
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), Hosts.describe());
        Map<Preset.Cell, Integer> keptReps = keptRepetitions(previous, preset);
        printPlan(preset, keptReps, machine);

        long start = System.nanoTime();
        boolean pending = keptReps.values().stream().anyMatch(k -> k < preset.reps());
        if (preset.warmup() && pending) {
            System.out.println("warm-up (driver JVM only, discarded): each workload at " + WARMUP_MB + " MB, builtin");
            for (String w : preset.workloads()) {
                Preset.Cell cell = new Preset.Cell(w, WARMUP_MB, preset.executors().get(0),
                        preset.serializers().get(0));
                Runner.run(Workload.of(w), cell, ShuffleConfig.BUILTIN, preset, -1, -1, null, null);
            }
        }

        List<RunResult> results = new ArrayList<>();
        int total = preset.runs();
        int sequence = previous.stream().mapToInt(RunResult::sequence).max().orElse(0);
        int done = 0; // runs of the preset that exist, kept from an earlier invocation or run now
        int ranNow = 0;
        int[][] order = RunOrder.of(preset.configs().size(), preset.reps()); // the same in every cell
        for (Preset.Cell cell : preset.cells()) {
            Workload workload = Workload.of(cell.workload());
            int kept = keptReps.get(cell);
            List<RunResult> keptRuns = previous.stream().filter(r -> r.cell().equals(cell) && r.rep() < kept).toList();
            results.addAll(keptRuns);
            done += keptRuns.size();
            if (kept == preset.reps()) {
                System.out.println("== " + cell.label() + ": " + keptRuns.size() + " runs from an earlier invocation");
                continue;
            }
            for (int rep = kept; rep < preset.reps(); rep++) { // a repetition's runs alternate within one invocation
                deleteRuns(runsDir, "-" + cell.fileStem() + "-r" + rep + "-");
            }
            System.out.println("== " + cell.label() + ": " + workload.describe(cell.targetMb()) + (kept == 0 ? ""
                    : "; repetition(s) 0–" + (kept - 1) + " from an earlier invocation, the others run now"));
            for (int rep = kept; rep < preset.reps(); rep++) {
                for (int index : order[rep]) {
                    ShuffleConfig config = preset.configs().get(index);
                    if (STOPPING.get()) {
                        System.out.println("stopping: the JVM is shutting down; repetition " + rep + " of "
                                + cell.label() + " is incomplete and runs again on resume");
                        return;
                    }
                    sequence++;
                    done++;
                    ranNow++;
                    RunResult r;
                    String startedAt = java.time.Instant.now().toString();
                    RunResult planned = RunResult.failed(cell, config, rep, sequence, startedAt, "not run");
                    String stem = planned.fileStem();
                    try {
                        r = Runner.run(workload, cell, config, preset, rep, sequence,
                                preset.jfr() ? runsDir.resolve(stem + "-jfr") : null, planned.answersFile(runsDir));
                    } catch (Exception | OutOfMemoryError e) {
                        if (STOPPING.get()) {
                            return; // interrupted by the shutdown, not a result: write nothing
                        }
                        e.printStackTrace();
                        r = RunResult.failed(cell, config, rep, sequence, startedAt, e.toString());
                    }
                    results.add(r);
                    Files.writeString(runsDir.resolve(stem + ".json"), Json.write(r.toJson()), StandardCharsets.UTF_8);
                    double elapsed = (System.nanoTime() - start) / 1e9;
                    System.out.println(progressLine(r, done, total, elapsed, minutesLeft(elapsed, ranNow, total - done)));
                }
            }
        }
        double wall = (System.nanoTime() - start) / 1e9;

        Map<Preset.Cell, String> checks = new LinkedHashMap<>();
        List<String> warnings = new ArrayList<>();
        boolean failed = check(preset, results, checks, warnings);
        Map<Preset.Cell, AnswerCheck> answers = AnswerCheck.of(preset, results, runsDir);
        for (Map.Entry<Preset.Cell, AnswerCheck> a : answers.entrySet()) {
            for (String problem : a.getValue().realDifferences()) {
                failed = true;
                warnings.add("answers differ in " + a.getKey().label() + ": " + problem);
                checks.put(a.getKey(), "DIFFER: per-query answers, see the TPC-DS section");
            }
        }
        String md = SummaryReport.markdown(preset, results, checks, warnings, wall, machine)
                + TpcdsReport.markdown(preset, results, answers);
        Path summary = out.resolve("summary" + preset.sliceSuffix() + ".md");
        Path chart = out.resolve("ratio" + preset.sliceSuffix() + ".png");
        Files.writeString(summary, md, StandardCharsets.UTF_8);
        RatioChart.write(preset, results, chart);
        if (!answers.isEmpty()) {
            TpcdsChart.write(preset, results, out.resolve("tpcds" + preset.sliceSuffix() + ".png"));
        }
        System.out.println();
        System.out.println(md);
        System.out.printf(Locale.ROOT, "wall time %.1f min; wrote %s, %s and %d run files in %s%n", wall / 60,
                summary, chart, results.size(), runsDir);
        if (failed) {
            System.out.println("A/B SUITE FAILED: " + String.join("; ", warnings));
        }
        Hosts.close();
        System.exit(failed ? 1 : 0);
    }

    /** The settings that must not change between the invocations of a resumed suite. */
    static String settingsLine(Preset preset) {
        return "preset=" + preset.name() + " configs=" + preset.configs() + " reps=" + preset.reps() + " hcommConf="
                + preset.hcommConf() + " sparkConf=" + preset.sparkConf() + " jfr=" + preset.jfr() + " warmExecutors=" + preset.warmExecutors()
                + " order=balanced hosts=" + Hosts.count() + " linkRate=" + Hosts.linkRate() + " linkDelay="
                + Hosts.linkDelay() + "\n";
    }

    /**
     * The runs of an earlier invocation into the same output directory ({@code -Dab.resume=true}), all of
     * them; the suite keeps each cell's complete repetitions ({@link #completeRepetitions}) and runs the others again.
     * Fails when the earlier invocation used other settings.
     */
    static List<RunResult> resumable(Path out, Path runsDir, Preset preset) throws IOException {
        Path settings = out.resolve("settings.txt");
        if (Files.exists(settings) && !Files.readString(settings).equals(settingsLine(preset))) {
            throw new IllegalArgumentException("ab.resume: " + out + " holds runs made with other settings ("
                    + Files.readString(settings).trim() + "; now " + settingsLine(preset).trim()
                    + "); use another -Dab.out or the same settings");
        }
        List<RunResult> runs = new ArrayList<>();
        try (Stream<Path> files = Files.list(runsDir)) {
            for (Path p : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                @SuppressWarnings("unchecked")
                Map<String, Object> json = (Map<String, Object>) Json.read(Files.readString(p));
                runs.add(RunResult.fromJson(json));
            }
        }
        System.out.println("resuming: " + runs.size() + " run files in " + runsDir);
        return runs;
    }

    /**
     * How many of a cell's repetitions, counted from the first, an earlier invocation completed: every
     * configuration ran successfully in each. A resumed cell keeps those and runs the rest, so a cell longer than a
     * sitting can end in the next one; each repetition's runs still alternate within one invocation, which is what
     * the per-repetition ratios of the summary compare.
     */
    static int completeRepetitions(List<RunResult> earlier, Preset preset) {
        int rep = 0;
        while (rep < preset.reps() && complete(earlier, rep, preset)) {
            rep++;
        }
        return rep;
    }

    private static boolean complete(List<RunResult> earlier, int rep, Preset preset) {
        return preset.configs().stream().allMatch(c -> RunResult.successful(earlier, rep, c).isPresent());
    }

    /** {@link #completeRepetitions} of every cell of the preset, in the preset's order. */
    static Map<Preset.Cell, Integer> keptRepetitions(List<RunResult> previous, Preset preset) {
        Map<Preset.Cell, Integer> kept = new LinkedHashMap<>();
        for (Preset.Cell cell : preset.cells()) {
            kept.put(cell, completeRepetitions(previous.stream().filter(r -> r.cell().equals(cell)).toList(), preset));
        }
        return kept;
    }

    /** Deletes run files and recordings whose name contains {@code marker} (all of them for ""). */
    static void deleteRuns(Path runsDir, String marker) throws IOException {
        try (Stream<Path> all = Files.walk(runsDir)) {
            for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(runsDir) && runsDir.relativize(p).getName(0).toString().contains(marker)) {
                    Files.delete(p);
                }
            }
        }
    }

    /**
     * Answers must be identical across configurations (and across executor counts and serializers: the data
     * depends only on workload and size). Returns whether the suite failed; plugin anomalies become warnings.
     */
    static boolean check(Preset preset, List<RunResult> results, Map<Preset.Cell, String> checks,
            List<String> warnings) {
        boolean failed = false;
        Map<String, Long> reference = new LinkedHashMap<>();
        for (Preset.Cell cell : preset.cells()) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell)).toList();
            List<RunResult> ok = mine.stream().filter(RunResult::ok).toList();
            String key = cell.workload() + "/" + cell.targetMb();
            Map<Long, List<String>> byChecksum = new LinkedHashMap<>();
            for (RunResult r : ok) {
                byChecksum.computeIfAbsent(r.checksum(), k -> new ArrayList<>()).add(r.config().label() + "#" + r.rep());
            }
            Long ref = reference.get(key);
            if (ok.isEmpty()) {
                checks.put(cell, "no successful run");
            } else if (byChecksum.size() == 1 && (ref == null || ref.equals(ok.get(0).checksum()))) {
                reference.putIfAbsent(key, ok.get(0).checksum());
                checks.put(cell, String.format(Locale.ROOT, "identical in all %d successful runs (checksum %016x, "
                        + "%,d records)", ok.size(), ok.get(0).checksum(), ok.get(0).records()));
            } else {
                failed = true;
                StringBuilder sb = new StringBuilder("DIFFER:");
                byChecksum.forEach((c, who) -> sb.append(String.format(Locale.ROOT, " %016x in %s;", c, who)));
                if (ref != null) {
                    sb.append(String.format(Locale.ROOT, " other cells of %s: %016x", key, ref));
                }
                checks.put(cell, sb.toString());
                warnings.add("answers differ in " + cell.label() + ": " + sb);
            }
            for (RunResult r : mine) {
                String who = cell.label() + ", " + r.config().label() + " rep " + r.rep();
                if (!r.ok()) {
                    failed = true;
                    warnings.add("run failed: " + who + ": " + r.error());
                    continue;
                }
                if (r.failedTasks() > 0) {
                    warnings.add(who + ": " + r.failedTasks() + " failed task attempt(s) (the job still succeeded)");
                }
                if (r.config().isHcomm()) {
                    if (r.fallbackBytes() > 0) {
                        warnings.add(who + ": " + r.fallbackBytes() + " bytes read by fallback with fallback=never");
                    }
                    if (r.oneSidedBytes() == 0 && r.remoteBytes() > 0) {
                        warnings.add(who + ": no byte read one-sidedly although " + r.remoteBytes()
                                + " remote bytes were read");
                    }
                    if (r.hcomm().containsKey("notSettledAfterMs") || r.hcomm().getOrDefault("channelsLive", 0L) != 0) {
                        warnings.add(who + ": plugin metrics did not settle (channelsLive="
                                + r.hcomm().getOrDefault("channelsLive", -1L) + ")");
                    }
                    HcommMetrics.communicatorChecks(r, who, warnings);
                    long oneSided = r.oneSidedBytes();
                    if (oneSided > 0 && Math.abs(oneSided - r.remoteBytes()) > Math.max(1, r.remoteBytes() / 100)) {
                        warnings.add(String.format(Locale.ROOT, "%s: bytesReadOneSided %,d differs from Spark's "
                                + "remote bytes read %,d", who, oneSided, r.remoteBytes()));
                    }
                }
            }
        }
        return failed;
    }

    /** The plan, with the wall time of the runs still to run (a resumed cell's complete repetitions take none). */
    static void printPlan(Preset preset, Map<Preset.Cell, Integer> keptReps, String machine) {
        double seconds = 0;
        int toRun = 0;
        for (Preset.Cell cell : preset.cells()) {
            int reps = preset.reps() - keptReps.get(cell);
            toRun += preset.configs().size() * reps;
            seconds += preset.configs().size() * reps
                    * (SECONDS_PER_RUN + jobSeconds(cell.workload(), cell.targetMb())
                            + (preset.warmExecutors() ? jobSeconds(cell.workload(), Preset.warmMb(cell.targetMb())) : 0));
        }
        if (preset.warmup() && toRun > 0) {
            for (String w : preset.workloads()) {
                seconds += SECONDS_PER_RUN + jobSeconds(w, WARMUP_MB);
            }
        }
        System.out.printf(Locale.ROOT, "shuffle A/B suite, preset %s on %s%n  workloads %s; sizes %s; executors %s; "
                + "serializers %s; configurations %s; %d rep(s)%n  hcomm settings %s%n  %d cells, %d runs, %d of them "
                + "to run now; estimated wall time %.0f min (about %.0f s per run besides ~%.0f s start-up)%n",
                preset.name(), machine, preset.workloads(),
                preset.sizesMb().stream().map(Preset::formatMb).toList(), preset.executors(), preset.serializers(),
                preset.configs().stream().map(ShuffleConfig::label).toList(), preset.reps(),
                preset.hcommConf().isEmpty() ? "(plugin defaults)" : preset.hcommConf(), preset.cells().size(),
                preset.runs(), toRun, seconds / 60, Math.max(0, seconds / Math.max(1, toRun) - SECONDS_PER_RUN),
                SECONDS_PER_RUN);
    }

    static double jobSeconds(String workload, long mb) {
        double[] c = JOB_SECONDS.get(workload);
        return c[0] + c[1] * mb;
    }

    /**
     * Minutes the runs still to come will take at the pace of this invocation's: {@code elapsed} seconds for
     * {@code ranNow} runs. Runs kept from an earlier invocation took none of this invocation's time, so they do not
     * count (they made a resumed cell's estimate too short by the share of kept runs).
     */
    static double minutesLeft(double elapsed, int ranNow, int left) {
        return ranNow == 0 ? Double.NaN : elapsed / ranNow * left / 60;
    }

    static String progressLine(RunResult r, int done, int total, double elapsed, double minutesLeft) {
        if (!r.ok()) {
            return String.format(Locale.ROOT, "[%d/%d] %-16s rep %d FAILED: %s", done, total,
                    r.config().label(), r.rep(), r.error());
        }
        return String.format(Locale.ROOT, "[%d/%d] %-16s rep %d  job %6.2f s  reduce %6.2f s  fetch wait %5.2f s  "
                + "reduce cpu %5.2f s  non-task cpu %5.2f s  owner cpu %5.2f s  shuffle %5.0f MB  one-sided %5.0f MB  fallback %d  channels %d/%d  "
                + "checksum %016x  (elapsed %.1f min, ~%.1f min left)", done, total, r.config().label(), r.rep(),
                r.jobSec(), r.reduceSec(), r.fetchWaitSec(), r.reduceCpuSec(), r.nonTaskCpuSec(), r.ownerCpuSec(), r.shuffleWriteBytes() / 1e6,
                r.oneSidedBytes() / 1e6, r.fallbackBytes(), r.hcomm().getOrDefault("channelsCreated", 0L),
                r.hcomm().getOrDefault("channelsDestroyed", 0L), r.checksum(), elapsed / 60, minutesLeft)
                + (r.config().isCommunicator() ? String.format(Locale.ROOT, "  windows %d, communicator "
                        + "formed %d ms after the executors registered", r.hcomm().getOrDefault("windowsOpened", 0L),
                        r.hcomm().getOrDefault(Runner.COMMUNICATOR_FORMED_MS, -1L)) : "");
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
