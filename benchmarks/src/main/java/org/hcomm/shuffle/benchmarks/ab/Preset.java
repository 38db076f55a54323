package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * What one invocation of the suite runs: the matrix (workloads x sizes x executor counts x serializers), the
 * configurations alternated within each cell, and the repetitions. Chosen with {@code -Dab.preset=smoke|quick|full};
 * any dimension can be overridden with {@code -Dab.workloads=}, {@code -Dab.sizes=} (e.g. {@code 512m,1g}),
 * {@code -Dab.executors=}, {@code -Dab.serializers=}, {@code -Dab.configs=}, {@code -Dab.reps=},
 * {@code -Dab.warmup=}, {@code -Dab.hcommConf=} (hcomm configurations only, comma-separated) and
 * {@code -Dab.sparkConf=} (every configuration, {@code ;}-separated), and {@code -Dab.warmExecutors=true|false} (an unmeasured run at an eighth of the size in the same application
 * first, see {@link #warmMb}), and {@code -Dab.jfr=true} (executors record
 * with Java Flight Recorder; each run reports where its reduce stages spent the task threads, see {@link JfrProfile}).
 */
record Preset(String name, List<String> workloads, List<Long> sizesMb, List<Integer> executors,
        List<String> serializers, List<ShuffleConfig> configs, int reps, boolean warmup,
        Map<String, String> hcommConf, Map<String, String> sparkConf, boolean jfr, boolean warmExecutors) {

    /**
     * Size of the in-application warm-up with {@code warmExecutors}: the same workload at an eighth of the size
     * (at least 16 MB) in the same executors, unmeasured, so the measured run sees JIT-compiled executors as a
     * long-running cluster would instead of paying each fresh JVM's compilation of the read path.
     */
    static long warmMb(long targetMb) {
        return Math.max(16, targetMb / 8);
    }


    /**
     * Extra settings of the hcomm configurations: none, the plugin's defaults ({@code -Dab.hcommConf=key=value,...}
     * sets some). Until commit 6209bde this was {@code receiveBufferSize=256m}, a workaround for a reduce task with
     * three shuffle readers starving on receive-buffer chunks; the reader's fair borrowing fixed that.
     */
    static final Map<String, String> DEFAULT_HCOMM_CONF = Map.of();

    static final List<String> ALL_WORKLOADS = List.of("terasort", "aggregation", "join", "tpch",
            "remote-read");
    /**
     * The presets' configurations: every one but {@link ShuffleConfig#HCOMM_COMMUNICATOR}, which is chosen with
     * {@code -Dab.configs} (e.g. {@code builtin,hcomm,hcomm-communicator}), so the presets' matrix, run counts and
     * resumable settings stay what sections 5–12 of docs/BENCHMARKS.md measured.
     */
    static final List<ShuffleConfig> ALL_CONFIGS = List.of(ShuffleConfig.BUILTIN, ShuffleConfig.BUILTIN_NETWORK,
            ShuffleConfig.HCOMM, ShuffleConfig.HCOMM_TCP);
    /**
     * The TPC-DS preset's size: scale factor 1 (see {@link TpcdsSql#scaleFactor}; store_sales 2.9 million rows,
     * 352 MB of Parquet). Its power run of 103 queries took 281 s in builtin on this machine (about 0.9 GB of
     * shuffle written), so 4 configurations x 2 repetitions, the driver's warm-up and the one-off generation (3.5
     * min) fit in about 45 minutes, 3 repetitions in about an hour. The TPC-DS workloads are in no other preset (add
     * them with {@code -Dab.workloads=}).
     */
    static final long TPCDS_MB = 1024;

    static Preset named(String name) {
        return switch (name) {
            case "smoke" -> new Preset("smoke", ALL_WORKLOADS, List.of(24L), List.of(2), List.of("kryo"),
                    ALL_CONFIGS, 1, false, DEFAULT_HCOMM_CONF, Map.of(), false, false);
            case "quick" -> new Preset("quick", ALL_WORKLOADS, List.of(512L), List.of(2), List.of("kryo"),
                    ALL_CONFIGS, 3, true, DEFAULT_HCOMM_CONF, Map.of(), false, true);
            case "full" -> new Preset("full", ALL_WORKLOADS, List.of(1024L, 4096L), List.of(2, 4),
                    List.of("java", "kryo"), ALL_CONFIGS, 3, true, DEFAULT_HCOMM_CONF, Map.of(), false, true);
            case "tpcds" -> new Preset("tpcds", List.of("tpcds"), List.of(TPCDS_MB), List.of(2), List.of("kryo"),
                    ALL_CONFIGS, 2, true, DEFAULT_HCOMM_CONF, Map.of(), false, false);
            default -> throw new IllegalArgumentException("unknown preset '" + name + "' (smoke, quick, full, tpcds)");
        };
    }

    /** The preset named by {@code ab.preset} (default quick) with the {@code ab.*} overrides applied. */
    static Preset fromSystemProperties() {
        Preset p = named(prop("ab.preset", "quick"));
        List<String> workloads = list("ab.workloads", p.workloads, s -> {
            Workload.of(s);
            return s;
        });
        List<Long> sizes = list("ab.sizes", p.sizesMb, Preset::parseMb);
        List<Integer> executors = list("ab.executors", p.executors, Integer::parseInt);
        List<String> serializers = list("ab.serializers", p.serializers, s -> {
            if (!s.equals("java") && !s.equals("kryo")) {
                throw new IllegalArgumentException("ab.serializers: '" + s + "' (allowed: java, kryo)");
            }
            return s;
        });
        List<ShuffleConfig> configs = list("ab.configs", p.configs, ShuffleConfig::of);
        int reps = Integer.parseInt(prop("ab.reps", String.valueOf(p.reps)));
        boolean warmup = Boolean.parseBoolean(prop("ab.warmup", String.valueOf(p.warmup)));
        String extra = prop("ab.hcommConf", "");
        Map<String, String> hcommConf = extra.equals("none") ? Map.of()
                : extra.isEmpty() ? p.hcommConf : settings("ab.hcommConf", extra, ",");
        String spark = prop("ab.sparkConf", "");
        Map<String, String> sparkConf = spark.isEmpty() ? p.sparkConf : settings("ab.sparkConf", spark, ";");
        boolean jfr = Boolean.parseBoolean(prop("ab.jfr", String.valueOf(p.jfr)));
        boolean warmExecutors = Boolean.parseBoolean(prop("ab.warmExecutors", String.valueOf(p.warmExecutors)));
        return new Preset(p.name, workloads, sizes, executors, serializers, configs, reps, warmup, hcommConf,
                sparkConf, jfr, warmExecutors);
    }

    /** {@code key=value} pairs separated by {@code separator}; every key must be a Spark setting. */
    static Map<String, String> settings(String property, String text, String separator) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String kv : text.split(java.util.regex.Pattern.quote(separator))) {
            int eq = kv.indexOf('=');
            if (eq <= 0 || !kv.trim().startsWith("spark.")) {
                throw new IllegalArgumentException(property + ": '" + kv + "' is not spark.key=value");
            }
            out.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
        }
        return out;
    }

    /**
     * The cells in run order: smaller sizes first, and every workload at one size, executor count and serializer
     * before the next, so a partial (resumable) run of a large preset covers whole slices of the matrix.
     */
    List<Cell> cells() {
        List<Cell> out = new ArrayList<>();
        for (long mb : sizesMb) {
            for (int n : executors) {
                for (String s : serializers) {
                    for (String w : workloads) {
                        out.add(new Cell(w, mb, n, s));
                    }
                }
            }
        }
        return out;
    }

    int runs() {
        return cells().size() * configs.size() * reps;
    }

    static long parseMb(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("g")) {
            return Long.parseLong(t.substring(0, t.length() - 1)) * 1024;
        }
        if (t.endsWith("m")) {
            return Long.parseLong(t.substring(0, t.length() - 1));
        }
        return Long.parseLong(t);
    }

    static String formatMb(long mb) {
        return mb % 1024 == 0 ? (mb / 1024) + " GB" : mb + " MB";
    }

    private static String prop(String key, String dflt) {
        String v = System.getProperty(key);
        return v == null || v.isBlank() || v.startsWith("${") ? dflt : v.trim();
    }

    private static <T> List<T> list(String key, List<T> dflt, Function<String, T> parse) {
        String v = System.getProperty(key);
        if (v == null || v.isBlank() || v.startsWith("${")) {
            return dflt;
        }
        return Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).map(parse).toList();
    }

    /**
     * "" when this covers its named preset's whole matrix, else "-" and the slice it was narrowed to, in the run
     * files' spelling (e.g. "-1024m-4x-java"): the summary and chart of a slice then do not overwrite those of the
     * whole matrix or of another slice in the same output directory.
     */
    String sliceSuffix() {
        Preset whole = named(name);
        StringBuilder b = new StringBuilder();
        if (!sizesMb.equals(whole.sizesMb)) {
            sizesMb.forEach(mb -> b.append('-').append(mb).append('m'));
        }
        if (!executors.equals(whole.executors)) {
            executors.forEach(n -> b.append('-').append(n).append('x'));
        }
        if (!serializers.equals(whole.serializers)) {
            serializers.forEach(x -> b.append('-').append(x));
        }
        if (!workloads.equals(whole.workloads)) {
            workloads.forEach(w -> b.append('-').append(w));
        }
        return b.toString();
    }

    /** One cell of the matrix: the configurations alternate within it. */
    record Cell(String workload, long targetMb, int executors, String serializer) {
        String label() {
            return workload + " " + formatMb(targetMb) + ", " + executors + " executors, " + serializer;
        }

        String fileStem() {
            return workload + "-" + targetMb + "m-" + executors + "x-" + serializer;
        }
    }
}
