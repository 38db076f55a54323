package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * The Markdown summary: an overview of reduce-stage ratios and of map stage, whole job and reduce stage beside each
 * other, then one table per cell with medians and min–max.
 */
final class SummaryReport {
    /** The plugin's split of the one-sided fetch wait (metric names, then labels). */
    private static final List<String> WAIT_SPLIT = List.of("fetchWaitIndexMicros", "fetchWaitFirstWaveMicros",
            "fetchWaitLaterWavesMicros");
    private static final List<String> WAIT_SPLIT_LABELS = List.of("index", "first wave", "later waves");
    private static final String REFAULTS = "workingset_refault_file";

    private SummaryReport() {
    }

    /** The repetitions' orders, e.g. "builtin → hcomm; hcomm → builtin". */
    private static String orders(Preset preset) {
        List<String> reps = new ArrayList<>();
        for (int[] order : RunOrder.of(preset.configs().size(), preset.reps())) {
            reps.add(String.join(" → ", Arrays.stream(order)
                    .mapToObj(i -> preset.configs().get(i).label()).toList()));
        }
        return String.join("; ", reps);
    }

    static String markdown(Preset preset, List<RunResult> results, Map<Preset.Cell, String> checks,
            List<String> warnings, double wallSec, String machine) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Shuffle A/B suite — preset `").append(preset.name()).append("`\n\n");
        sb.append(String.format(Locale.ROOT, "%s. %d runs in %.1f min; %d repetition(s) per cell, configurations "
                + "alternating within each repetition, in the orders %s (balanced so that a drift of the host's "
                + "speed during a cell costs every configuration alike); a fresh application (%s, "
                + "executors of %d MB, 1 core each) per run. Values are the median over the repetitions with "
                + "(min–max).%n%n",
                machine, results.size(), wallSec / 60, preset.reps(), orders(preset),
                Hosts.count() == 0 ? "local-cluster" : "standalone, " + Hosts.describe(), Runner.EXECUTOR_MB));
        if (preset.warmExecutors()) {
            sb.append("Each application first ran the same workload unmeasured at an eighth of the size (at least 16 "
                    + "MB), so the measured run meets executors whose read path is already JIT-compiled, as in a "
                    + "long-running cluster; the plugin's counters below are the measured run's alone.\n\n");
        }
        sb.append("The hcomm configurations ran with `spark.shuffle.hcomm.fallback=never`");
        preset.hcommConf().forEach((k, v) -> sb.append(", `").append(k).append('=').append(v).append('`'));
        preset.sparkConf().forEach((k, v) -> sb.append(" (every configuration: `").append(k).append('=').append(v)
                .append("`)"));
        sb.append("; hcomm-tcp also with `spark.executorEnv.HCOMM_SOFT_FORCE_TCP=1` (checked in the executors)");
        if (preset.configs().contains(ShuffleConfig.HCOMM_COMMUNICATOR)) {
            sb.append("; hcomm-communicator with `spark.executorEnv." + ShuffleConfig.SOC_ENV + "="
                    + ShuffleConfig.A2_SOC + "` (soft HComm as an Atlas A2 server: `api=auto` takes the HCCL "
                    + "communicator path) and `spark.shuffle.hcomm.communicator.settle="
                    + ShuffleConfig.COMMUNICATOR_SETTLE + "`, each run timed only after the driver's communicator of "
                    + "all executors formed; with the path's defaults every remote byte is streamed by its owner "
                    + "through a window of its HCCL buffer and the reader's (host to device, a one-sided read, device "
                    + "to host), which on soft HComm (device memory is host memory) is two extra copies of every "
                    + "byte");
        }
        if (preset.configs().contains(ShuffleConfig.HCOMM_WINDOW)) {
            sb.append("; hcomm-window as hcomm-communicator, with `spark.shuffle.hcomm.communicator.transfer=window` "
                    + "set explicitly (the path's only transfer): nothing is staged at commit, every remote byte is "
                    + "streamed by its owner through a window of its HCCL buffer and the reader's (host to device, a "
                    + "one-sided read, device to host)");
        }
        sb.append(". Shuffle data of the SQL workload is serialised by Spark SQL's row serializer whatever "
                        + "`spark.serializer` says.\n\n");
        sb.append("*Reduce-stage time* is the wall time during which a stage that reads shuffle data was running "
                + "(the union of those stages' intervals when a job has several); *fetch wait share* is Spark's fetch wait time over those stages' task time. *One-sided* "
                + "and *fallback* are the plugin's `bytesReadOneSided` / `bytesReadFallback` (remote bytes only; "
                + "executor-local blocks are read from the local file in every configuration). *Non-task CPU* is the "
                + "executors' process CPU (all threads, sampled every " + ProcessCpuPlugin.PERIOD_MS + " ms) during the "
                + "reduce stages minus the CPU of their task threads in the same intervals: transport threads, serving "
                + "other executors, GC, JIT. *Owner CPU* is the process CPU, during the reduce stage, of the executor whose "
                + "map outputs are being read (workload remote-read; other workloads have none).\n\n");
        sb.append("*Map-stage time* is the wall time during which a stage that writes shuffle data and reads none was "
                + "running (the union of those stages' intervals, as for the reduce stages). *Job* is the wall time of "
                + "the workload's timed run on the driver (all its Spark jobs, from the call to the answer). "
                + "*Executors' CPU* is the "
                + "process CPU of every executor (all threads) during the job's stages (the union of all stages' "
                + "intervals), summed over the executors; *per GB shuffled* divides it by the shuffle bytes read "
                + "(remote and local). The ratios of map stage and job to a base configuration, and all the ratios "
                + "of the second overview table, are the median over the repetitions of the ratio within each "
                + "repetition (both configurations successful, a few minutes apart); the reduce ratios of the first "
                + "overview table and of the cells' *reduce /* columns are the ratio of the two medians.\n\n");

        sb.append("## Checks\n\n");
        if (warnings.isEmpty()) {
            sb.append("All runs succeeded; answers identical across configurations; the hcomm configurations read "
                    + "every remote byte one-sidedly (no fallback bytes) and ended with no live channels.\n\n");
        } else {
            for (String w : warnings) {
                sb.append("- ").append(w).append('\n');
            }
            sb.append('\n');
        }
        sb.append("## Reduce-stage time relative to builtin\n\n");
        sb.append("| workload | size | executors | serializer |");
        for (ShuffleConfig c : preset.configs()) {
            sb.append(' ').append(c.label()).append(" |");
        }
        sb.append(" answers |\n|---|---|---|---|");
        sb.append("---|".repeat(preset.configs().size())).append("---|\n");
        for (Preset.Cell cell : preset.cells()) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell)).toList();
            Map<ShuffleConfig, Stats> reduce = reduceStats(preset, mine);
            double base = reduce.containsKey(ShuffleConfig.BUILTIN) ? reduce.get(ShuffleConfig.BUILTIN).median()
                    : Double.NaN;
            sb.append("| ").append(cell.workload()).append(" | ").append(Preset.formatMb(cell.targetMb()))
                    .append(" | ").append(cell.executors()).append(" | ").append(cell.serializer()).append(" |");
            for (ShuffleConfig c : preset.configs()) {
                Stats s = reduce.get(c);
                if (s.n() == 0) {
                    sb.append(" failed |");
                } else if (c == ShuffleConfig.BUILTIN || Double.isNaN(base)) {
                    sb.append(String.format(Locale.ROOT, " %.2f s |", s.median()));
                } else {
                    sb.append(String.format(Locale.ROOT, " **%.2f×** (%.2f s) |", s.median() / base, s.median()));
                }
            }
            sb.append(' ').append(checks.getOrDefault(cell, "?").startsWith("identical") ? "identical" : "**DIFFER**")
                    .append(" |\n");
        }
        overviewBeside(sb, preset, results);

        for (Preset.Cell cell : preset.cells()) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell)).toList();
            sb.append("\n## ").append(cell.label()).append("\n\n");
            sb.append(Workload.of(cell.workload()).describe(cell.targetMb())).append(". Answers: ")
                    .append(checks.getOrDefault(cell, "?")).append(".\n\n");
            boolean owners = mine.stream().anyMatch(r -> r.ok() && !Double.isNaN(r.ownerCpuSec()));
            sb.append("| configuration | job s | map stage s | reduce stage s | fetch wait s | fetch wait share | "
                    + "reduce CPU s | non-task CPU s | " + (owners ? "owner CPU s | " : "")
                    + "executors' CPU s | executors' CPU s / GB shuffled | "
                    + "shuffle MB written | one-sided MB | fallback MB | channels created / destroyed | "
                    + "reduce / builtin | reduce / builtin-network | map / builtin | map / builtin-network | "
                    + "job / builtin | job / builtin-network |\n");
            sb.append("|---".repeat(owners ? 21 : 20)).append("|\n");
            Map<ShuffleConfig, Stats> reduce = reduceStats(preset, mine);
            for (ShuffleConfig c : preset.configs()) {
                List<RunResult> rc = mine.stream().filter(r -> r.config() == c).toList();
                sb.append("| ").append(c.label());
                long failed = rc.stream().filter(r -> !r.ok()).count();
                if (failed > 0) {
                    sb.append(" (").append(failed).append(" failed)");
                }
                sb.append(" | ").append(Stats.of(rc, RunResult::jobSec).format("%.2f"))
                        .append(" | ").append(Stats.ofKnown(rc, RunResult::mapSec).format("%.2f"))
                        .append(" | ").append(Stats.of(rc, RunResult::reduceSec).format("%.2f"))
                        .append(" | ").append(Stats.of(rc, RunResult::fetchWaitSec).format("%.2f"))
                        .append(" | ").append(Stats.of(rc, r -> 100 * r.fetchWaitShare()).format("%.0f%%"))
                        .append(" | ").append(Stats.of(rc, RunResult::reduceCpuSec).format("%.2f"))
                        .append(" | ").append(Stats.of(rc, RunResult::nonTaskCpuSec).format("%.2f"))
                        .append(owners ? " | " + Stats.of(rc, RunResult::ownerCpuSec).format("%.2f") : "")
                        .append(" | ").append(Stats.ofKnown(rc, RunResult::jobProcessCpuSec).format("%.2f"))
                        .append(" | ").append(Stats.ofKnown(rc, RunResult::jobCpuSecPerGbShuffled).format("%.2f"))
                        .append(" | ").append(Stats.of(rc, r -> r.shuffleWriteBytes() / 1e6).format("%.0f"))
                        .append(" | ").append(c.isHcomm()
                                ? Stats.of(rc, r -> r.oneSidedBytes() / 1e6).format("%.0f") : "–")
                        .append(" | ").append(c.isHcomm()
                                ? Stats.of(rc, r -> r.fallbackBytes() / 1e6).format("%.0f") : "–")
                        .append(" | ").append(c.isHcomm() ? Stats.of(rc,
                                r -> r.hcomm().getOrDefault("channelsCreated", 0L)).format("%.0f") + " / "
                                + Stats.of(rc, r -> r.hcomm().getOrDefault("channelsDestroyed", 0L)).format("%.0f")
                                : "–")
                        .append(" | ").append(ratio(reduce, c, ShuffleConfig.BUILTIN))
                        .append(" | ").append(ratio(reduce, c, ShuffleConfig.BUILTIN_NETWORK));
                for (ToDoubleFunction<RunResult> metric : List.<ToDoubleFunction<RunResult>>of(RunResult::mapSec,
                        RunResult::jobSec)) {
                    for (ShuffleConfig base : List.of(ShuffleConfig.BUILTIN, ShuffleConfig.BUILTIN_NETWORK)) {
                        sb.append(" | ").append(repetitionRatio(mine, c, base, preset.reps(), metric, "%.2f"));
                    }
                }
                sb.append(" |\n");
            }
            waitSplit(sb, preset, mine);
            roundTrips(sb, preset, mine);
            perGbAndRoundTrips(sb, preset, mine);
            communicator(sb, preset, mine);
            refaults(sb, preset, mine);
            perRepetition(sb, preset, mine);
            drift(sb, preset, mine);
            for (RunResult r : mine) {
                if (!r.ok()) {
                    sb.append("\n- ").append(r.config().label()).append(" rep ").append(r.rep()).append(" failed: `")
                            .append(r.error().replace('\n', ' ').replace("`", "'")).append("`");
                }
            }
            if (mine.stream().anyMatch(r -> !r.ok())) {
                sb.append('\n');
            }
            if (mine.stream().anyMatch(r -> !r.profile().isEmpty())) {
                profileTable(sb, preset, mine);
            }
        }
        return sb.toString();
    }

    /** Round-trip times of the what-if: a rack (10 µs), a data centre (100 µs), across a region (1 ms). */
    static final double[] WHAT_IF_RTT_SEC = {10e-6, 100e-6, 1e-3};

    /**
     * CPU seconds per GB read from other executors, on the reading executors and on the owning one (only a workload
     * that names its owner, remote-read, has one), the round trips a reduce
     * task waits for (hcomm: the plugin's counters, over the tasks that read one-sidedly, {@code readTasks}, or in
     * run files from before that counter over all reduce tasks; Spark's fetch: a model,
     * {@link RunResult#roundTripsPerTask}), and what those would add to the reduce stage at 10 µs, 100 µs and 1 ms
     * of round-trip time
     * (round trips per task x RTT x the most reduce tasks one executor ran one after another; an upper bound, as
     * hcomm's two waves in flight can hide a round trip behind deserialisation). This machine cannot add delay to a
     * link (no netem), so the latency columns are computed, not measured.
     */
    static void perGbAndRoundTrips(StringBuilder sb, Preset preset, List<RunResult> mine) {
        if (mine.stream().noneMatch(r -> r.ok() && r.remoteBytes() > 0)) {
            return;
        }
        sb.append("\n| configuration | reader CPU s / GB | owner CPU s / GB | round trips per reduce task | "
                + "+ at 10 µs RTT | + at 100 µs | + at 1 ms |\n|---|---|---|---|---|---|---|\n");
        for (ShuffleConfig c : preset.configs()) {
            List<RunResult> rc = mine.stream().filter(r -> r.config() == c && r.ok() && r.remoteBytes() > 0).toList();
            if (rc.isEmpty()) {
                continue;
            }
            sb.append("| ").append(c.label())
                    .append(" | ").append(Stats.of(rc, r -> r.readerCpuSec() / (r.remoteBytes() / 1e9)).format("%.2f"))
                    .append(" | ").append(Double.isNaN(rc.get(0).ownerCpuSec()) ? "–"
                            : Stats.of(rc, r -> r.ownerCpuSec() / (r.remoteBytes() / 1e9)).format("%.2f"))
                    .append(" | ").append(Stats.of(rc, RunResult::roundTripsPerTask).format("%.1f")
                            + (c.isHcomm() ? "" : " (model)"));
            for (double rtt : WHAT_IF_RTT_SEC) {
                sb.append(" | ").append(Stats.of(rc, r -> 100 * r.roundTripsPerTask() * rtt
                        * r.mostReduceTasksOnOneExecutor() / r.reduceSec()).format("%.1f%%"));
            }
            sb.append(" |\n");
        }
        sb.append("\n(Round trips per reduce task: for hcomm `readRoundTrips` / `readTasks`, the plugin's "
                + "counters (run files from before `readRoundTrips`: (`indexRounds` + `readWaves`) / `readTasks`, the "
                + "batches waited for; from before `readTasks`: over all reduce tasks); for Spark's fetch a "
                + "model, one per 48 MB (`spark.reducer.maxSizeInFlight`) a task fetches, at least one. The + columns: "
                + "the reduce stage's added time at that round-trip time, as a share of the measured reduce stage; "
                + "computed from the round trips, not measured: this machine cannot delay a link.)\n");
    }

    /** The hcomm configurations' one-sided fetch wait by what the tasks waited for (runs that recorded it). */
    static void waitSplit(StringBuilder sb, Preset preset, List<RunResult> mine) {
        String line = perConfig(preset, mine, "; ", r -> r.hcomm().containsKey(WAIT_SPLIT.get(0)), runs -> {
            StringBuilder v = new StringBuilder(":");
            for (int i = 0; i < WAIT_SPLIT.size(); i++) {
                String key = WAIT_SPLIT.get(i);
                v.append(' ').append(WAIT_SPLIT_LABELS.get(i)).append(' ')
                        .append(Stats.of(runs, r -> r.hcomm().get(key) / 1e6).format("%.3f"));
            }
            return v.toString();
        });
        if (!line.isEmpty()) {
            sb.append("\nOne-sided fetch wait by what the reduce tasks waited for (s): ").append(line).append(".\n");
        }
    }

    /**
     * Each configuration's reduce-stage time over the base configuration's within each repetition (runs a few
     * minutes apart, so the host's speed cancels; the ratios to read when a resumed cell's repetitions ran in
     * different sittings), and their median; then the same for the job and the map stage.
     */
    static void perRepetition(StringBuilder sb, Preset preset, List<RunResult> mine) {
        ShuffleConfig base = preset.configs().get(0);
        Map<String, ToDoubleFunction<RunResult>> metrics = new LinkedHashMap<>();
        metrics.put("Reduce", RunResult::reduceSec);
        metrics.put("Job", RunResult::jobSec);
        metrics.put("Map stage", RunResult::mapSec);
        metrics.forEach((name, metric) -> {
            StringJoiner line = new StringJoiner("; ");
            for (ShuffleConfig c : preset.configs().subList(1, preset.configs().size())) {
                List<Double> ratios = repetitionRatios(mine, c, base, preset.reps(), metric);
                if (ratios.isEmpty()) {
                    continue;
                }
                StringJoiner each = new StringJoiner(", ");
                ratios.forEach(v -> each.add(String.format(Locale.ROOT, "%.2f×", v)));
                line.add(String.format(Locale.ROOT, "%s %s (median %.2f×)", c.label(), each,
                        Stats.ofValues(ratios).median()));
            }
            if (line.length() > 0) {
                sb.append('\n').append(name).append(" / ").append(base.label()).append(" within each repetition: ")
                        .append(line).append(".\n");
            }
        });
    }

    /** The ratios of {@code c}'s reduce-stage time to {@code base}'s, per repetition in which both succeeded. */
    static List<Double> repetitionRatios(List<RunResult> mine, ShuffleConfig c, ShuffleConfig base, int reps) {
        return repetitionRatios(mine, c, base, reps, RunResult::reduceSec);
    }

    /**
     * The ratios of {@code c}'s {@code metric} to {@code base}'s, per repetition in which both succeeded and the
     * ratio is a number (both known, the base's not 0).
     */
    static List<Double> repetitionRatios(List<RunResult> mine, ShuffleConfig c, ShuffleConfig base, int reps,
            ToDoubleFunction<RunResult> metric) {
        List<Double> ratios = new ArrayList<>();
        for (int rep = 0; rep < reps; rep++) {
            Optional<RunResult> a = RunResult.successful(mine, rep, c);
            Optional<RunResult> b = RunResult.successful(mine, rep, base);
            if (a.isPresent() && b.isPresent()) {
                double v = metric.applyAsDouble(a.get()) / metric.applyAsDouble(b.get());
                if (Double.isFinite(v)) {
                    ratios.add(v);
                }
            }
        }
        return ratios;
    }

    /** The median of {@link #repetitionRatios} in {@code pattern}, "–" when no repetition has one. */
    static String repetitionRatio(List<RunResult> mine, ShuffleConfig c, ShuffleConfig base, int reps,
            ToDoubleFunction<RunResult> metric, String pattern) {
        List<Double> ratios = repetitionRatios(mine, c, base, reps, metric);
        return ratios.isEmpty() ? "–" : String.format(Locale.ROOT, pattern, Stats.ofValues(ratios).median());
    }

    /**
     * The overview's second table: per cell and configuration the map stage, the job and the reduce stage (medians),
     * their ratios to builtin-network and builtin (whichever the preset runs; medians of the per-repetition ratios)
     * and the executors' CPU per GB shuffled.
     */
    static void overviewBeside(StringBuilder sb, Preset preset, List<RunResult> results) {
        List<ShuffleConfig> bases = List.of(ShuffleConfig.BUILTIN_NETWORK, ShuffleConfig.BUILTIN).stream()
                .filter(preset.configs()::contains).toList();
        Map<String, ToDoubleFunction<RunResult>> metrics = new LinkedHashMap<>();
        metrics.put("map", RunResult::mapSec);
        metrics.put("job", RunResult::jobSec);
        metrics.put("reduce", RunResult::reduceSec);
        sb.append("\nMap stage, whole job and reduce stage beside each other (medians, s), relative to ")
                .append(bases.isEmpty() ? "no base (the preset runs neither builtin-network nor builtin)"
                        : String.join(" and ", bases.stream().map(ShuffleConfig::label).toList()))
                .append(" by the median of the per-repetition ratios (for the reduce stage too, so it can differ "
                        + "from the ratio of the medians above), and the executors' CPU over the job per GB "
                        + "shuffled (median):\n\n| workload | size | executors | serializer | configuration | "
                        + "map stage s | job s | reduce stage s |");
        for (ShuffleConfig b : bases) {
            metrics.keySet().forEach(name -> sb.append(' ').append(name).append(" / ").append(b.label()).append(" |"));
        }
        sb.append(" executors' CPU s / GB shuffled |\n").append("|---".repeat(9 + 3 * bases.size())).append("|\n");
        for (Preset.Cell cell : preset.cells()) {
            List<RunResult> mine = results.stream().filter(r -> r.cell().equals(cell)).toList();
            for (ShuffleConfig c : preset.configs()) {
                List<RunResult> rc = mine.stream().filter(r -> r.config() == c).toList();
                sb.append("| ").append(cell.workload()).append(" | ").append(Preset.formatMb(cell.targetMb()))
                        .append(" | ").append(cell.executors()).append(" | ").append(cell.serializer()).append(" | ")
                        .append(c.label());
                metrics.values().forEach(m -> sb.append(" | ").append(median(Stats.ofKnown(rc, m))));
                for (ShuffleConfig b : bases) {
                    metrics.values().forEach(m -> sb.append(" | ")
                            .append(repetitionRatio(mine, c, b, preset.reps(), m, "%.2f×")));
                }
                sb.append(" | ").append(median(Stats.ofKnown(rc, RunResult::jobCpuSecPerGbShuffled))).append(" |\n");
            }
        }
    }

    /** The median with two decimals, "–" without a value. */
    private static String median(Stats s) {
        return s.n() == 0 ? "–" : String.format(Locale.ROOT, "%.2f", s.median());
    }

    /**
     * The hcomm configurations' round trips by the plugin's counters (runs that recorded {@code readTasks}): mean
     * round trips of a reduce task that read one-sidedly, tasks that waited for more than two, and publication
     * batches per map task.
     */
    static void roundTrips(StringBuilder sb, Preset preset, List<RunResult> mine) {
        String line = perConfig(preset, mine, "; ", r -> r.config().isHcomm() && r.readTasks() > 0,
                runs -> String.format(Locale.ROOT, ": mean round trips per task %s (of %s tasks; batches waited "
                        + "for %s), tasks over two round trips %s, publication batches per map task %s",
                        Stats.of(runs, RunResult::roundTripsPerReadTask).format("%.2f"),
                        Stats.of(runs, RunResult::readTasks).format("%.0f"),
                        Stats.of(runs, r -> r.hcomm().getOrDefault("readWaves", 0L) / (double) r.readTasks())
                                .format("%.2f"),
                        Stats.of(runs, r -> r.hcomm().getOrDefault("readTasksOverTwoRoundTrips", 0L)).format("%.0f"),
                        Stats.ofKnown(runs, RunResult::publicationBatchesPerMapTask).format("%.2f")));
        if (!line.isEmpty()) {
            sb.append("\nRound trips of the reduce tasks that read one-sidedly, by the plugin's counters (mean round "
                    + "trips per task = `readRoundTrips` / `readTasks`, batches waited for per task = `readWaves` / `readTasks`; "
                    + "tasks over two round trips = "
                    + "`readTasksOverTwoRoundTrips`; publication batches per map task = `publicationBatches` over the "
                    + "tasks of the stages that wrote shuffle data): ").append(line).append(".\n");
        }
    }

    /** The host's drift during the cell and the reduce-stage ratios with it taken out ({@link DriftFit}). */
    static void drift(StringBuilder sb, Preset preset, List<RunResult> mine) {
        DriftFit fit = DriftFit.of(mine, preset.configs(), RunResult::reduceSec);
        if (fit == null) {
            return;
        }
        ShuffleConfig base = preset.configs().get(0);
        StringJoiner ratios = new StringJoiner(", ");
        fit.ratios().forEach((c, v) -> {
            if (c != base) {
                ratios.add(String.format(Locale.ROOT, "%s %.2f×", c.label(), v));
            }
        });
        sb.append(String.format(Locale.ROOT, "%nHost drift during the cell: %+.1f %% per run (least-squares fit of "
                + "log reduce-stage time on the run's order and configuration, a check on the medians); with it "
                + "taken out, reduce / %s: %s.%n", 100 * fit.driftPerRun(), base.label(), ratios));
    }

    /** The communicator path's own counters (runs that used it): windows, forming, tasks that came before. */
    static void communicator(StringBuilder sb, Preset preset, List<RunResult> mine) {
        String line = perConfig(preset, mine, "; ", r -> r.config().isCommunicator(), runs -> String.format(
                Locale.ROOT, ": windows opened %s (shuffle written %s MB), copied device to host %s MB, "
                        + "communicators live %s, formed %s ms after the executors registered, reduce tasks before "
                        + "it %s",
                Stats.of(runs, r -> r.hcomm().getOrDefault("windowsOpened", 0L)).format("%.0f"),
                Stats.of(runs, r -> r.shuffleWriteBytes() / 1e6).format("%.0f"),
                runs.stream().allMatch(r -> r.hcomm().containsKey("bytesToHost"))
                        ? Stats.of(runs, r -> r.hcomm().get("bytesToHost") / 1e6).format("%.0f") : "(not reported)",
                Stats.of(runs, r -> r.hcomm().getOrDefault("communicatorsLive", 0L)).format("%.0f"),
                Stats.of(runs, r -> r.hcomm().getOrDefault(Runner.COMMUNICATOR_FORMED_MS, -1L)).format("%.0f"),
                Stats.of(runs, r -> r.hcomm().getOrDefault("tasksBeforeCommunicator", 0L)).format("%.0f")));
        if (!line.isEmpty()) {
            sb.append("\nCommunicator path: ").append(line).append(".\n");
        }
    }

    /** File pages the host read back after evicting them, during the measured job (runs that recorded it). */
    static void refaults(StringBuilder sb, Preset preset, List<RunResult> mine) {
        String line = perConfig(preset, mine, ", ", r -> r.host().containsKey(REFAULTS),
                runs -> " " + Stats.of(runs, r -> r.host().get(REFAULTS) * 4096 / 1e6).format("%.0f"));
        if (!line.isEmpty()) {
            sb.append("\nPage cache read back from disk during the measured job (MB of refaulted file pages, host "
                    + "counter): ").append(line).append(".\n");
        }
    }

    /**
     * Each configuration's label and {@code value} of its successful runs that {@code recorded} the measurement,
     * joined by {@code separator}; configurations without such runs are left out.
     */
    private static String perConfig(Preset preset, List<RunResult> mine, String separator,
            Predicate<RunResult> recorded, Function<List<RunResult>, String> value) {
        StringJoiner out = new StringJoiner(separator);
        for (ShuffleConfig c : preset.configs()) {
            List<RunResult> runs = mine.stream().filter(r -> r.config() == c && r.ok() && recorded.test(r)).toList();
            if (!runs.isEmpty()) {
                out.add(c.label() + value.apply(runs));
            }
        }
        return out.toString();
    }

    /** JFR: where the task threads were during the reduce stages (share of samples, median over repetitions). */
    static void profileTable(StringBuilder sb, Preset preset, List<RunResult> mine) {
        sb.append("\nTask threads during the reduce stages (JFR execution samples by innermost known component; "
                + "GC pauses and JIT compilations longer than JFR's 100 ms threshold in the same intervals; then the "
                + "executors' CPU in those intervals by thread group, from /proc, all threads including native "
                + "ones):\n\n| configuration | samples |");
        for (String c : JfrProfile.CATEGORIES) {
            sb.append(' ').append(c).append(" |");
        }
        sb.append(" GC pause ms | JIT ms |");
        for (String g : ProcessCpuPlugin.GROUPS) {
            sb.append(" CPU s: ").append(g).append(" |");
        }
        sb.append("\n|---|---|").append("---|".repeat(JfrProfile.CATEGORIES.size() + 2 + ProcessCpuPlugin.GROUPS.size()))
                .append('\n');
        for (ShuffleConfig c : preset.configs()) {
            List<RunResult> rc = mine.stream().filter(r -> r.config() == c && !r.profile().isEmpty()).toList();
            if (rc.isEmpty()) {
                continue;
            }
            sb.append("| ").append(c.label()).append(" | ")
                    .append(Stats.of(rc, r -> r.profile().get(JfrProfile.SAMPLES)).format("%.0f")).append(" |");
            for (String cat : JfrProfile.CATEGORIES) {
                sb.append(' ').append(Stats.of(rc, r -> 100.0 * r.profile().get(cat)
                        / Math.max(1, r.profile().get(JfrProfile.SAMPLES))).format("%.0f%%")).append(" |");
            }
            sb.append(' ').append(Stats.of(rc, r -> r.profile().get(JfrProfile.GC_PAUSE_MS)).format("%.0f"))
                    .append(" | ").append(Stats.of(rc, r -> r.profile().get(JfrProfile.JIT_MS)).format("%.0f"))
                    .append(" |");
            for (String g : ProcessCpuPlugin.GROUPS) {
                sb.append(' ').append(Stats.of(rc, r -> r.threadGroupSec(g)).format("%.2f")).append(" |");
            }
            sb.append('\n');
        }
    }

    static Map<ShuffleConfig, Stats> reduceStats(Preset preset, List<RunResult> cellRuns) {
        Map<ShuffleConfig, Stats> out = new LinkedHashMap<>();
        for (ShuffleConfig c : preset.configs()) {
            out.put(c, Stats.of(cellRuns.stream().filter(r -> r.config() == c).toList(), RunResult::reduceSec));
        }
        return out;
    }

    /** {@code c}'s median over {@code base}'s ("–" when either has no successful run). */
    static String ratio(Map<ShuffleConfig, Stats> reduce, ShuffleConfig c, ShuffleConfig base) {
        Stats b = reduce.get(base);
        Stats s = reduce.get(c);
        if (b == null || s == null || b.n() == 0 || s.n() == 0) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.2f", s.median() / b.median());
    }
}
