package org.hcomm.shuffle.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import com.codahale.metrics.Gauge;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;
import scala.Tuple2;
import scala.collection.Seq;

/**
 * First Spark A/B run: the same generated data shuffled by Spark's built-in shuffle (host-local disk reads on, its
 * best case on one host), the built-in shuffle with {@code spark.shuffle.readHostLocalDisk=false} (blocks through
 * Netty, as between hosts) and the HComm shuffle, alternating configurations in one run, on
 * {@code local-cluster[2,1,1024]}. Reports medians with min/max of the job time, the reduce stage's time, fetch wait
 * and executor CPU time of the reduce stage, and the answer's checksum (identical across configurations, or the run
 * fails).
 *
 * <p>Arguments: {@code reps megabytes outputDir}.
 */
public final class ShuffleAbRun {
    static final int MAPS = 16;
    static final int REDUCES = 16;
    static final int VALUE_BYTES = 90;

    private ShuffleAbRun() {
    }

    record Sample(String config, double jobSec, double reduceSec, double fetchWaitSec, double reduceCpuSec,
            long shuffleBytes, long oneSided, long fallback, long checksum) {
    }

    public static void main(String[] args) throws Exception {
        int reps = Integer.parseInt(args[0]);
        long megabytes = Long.parseLong(args[1]);
        Path out = Path.of(args[2]);
        List<String> configs = List.of("builtin", "builtin-network", "hcomm");
        List<Sample> samples = new ArrayList<>();
        for (int r = 0; r < reps; r++) {
            for (String c : configs) {
                Sample s = runOnce(c, megabytes);
                System.out.printf(Locale.ROOT, "rep %d %-16s job %6.2f s  reduce %6.2f s  fetch wait %5.2f s  cpu %5.2f s%n",
                        r, c, s.jobSec, s.reduceSec, s.fetchWaitSec, s.reduceCpuSec);
                samples.add(s);
            }
        }
        long checksum = samples.get(0).checksum;
        for (Sample s : samples) {
            if (s.checksum != checksum) {
                throw new IllegalStateException("answers differ: " + s.config + " " + s.checksum + " vs " + checksum);
            }
        }
        String table = table(samples, configs, megabytes, reps);
        System.out.println(table);
        Files.writeString(out.resolve("shuffle-ab.md"), table, StandardCharsets.UTF_8);
        Files.writeString(out.resolve("shuffle-ab.json"), json(samples), StandardCharsets.UTF_8);
    }

    static SparkConf conf(String config) {
        SparkConf conf = new SparkConf().setMaster("local-cluster[2,1,1024]").setAppName("shuffle-ab-" + config)
                .set("spark.ui.enabled", "false");
        switch (config) {
            case "builtin" -> { }
            case "builtin-network" -> conf.set("spark.shuffle.readHostLocalDisk", "false");
            case "hcomm" -> conf.set("spark.plugins", "org.apache.spark.shuffle.hcomm.HcommShufflePlugin")
                    .set("spark.shuffle.manager", "org.apache.spark.shuffle.hcomm.HcommShuffleManager")
                    .set("spark.shuffle.hcomm.fallback", "never");
            default -> throw new IllegalArgumentException(config);
        }
        return conf;
    }

    static Sample runOnce(String config, long megabytes) throws Exception {
        try (JavaSparkContext sc = new JavaSparkContext(conf(config))) {
            while (sc.sc().statusTracker().getExecutorInfos().length < 3) {
                Thread.sleep(100);
            }
            AtomicLong fetchWaitMs = new AtomicLong();
            AtomicLong cpuNs = new AtomicLong();
            AtomicLong bytes = new AtomicLong();
            Map<Integer, StageInfo> done = new java.util.concurrent.ConcurrentHashMap<>();
            sc.sc().addSparkListener(new SparkListener() {
                @Override
                public void onTaskEnd(SparkListenerTaskEnd e) {
                    if (e.taskMetrics() != null && e.taskMetrics().shuffleReadMetrics().totalBytesRead() > 0) {
                        fetchWaitMs.addAndGet(e.taskMetrics().shuffleReadMetrics().fetchWaitTime());
                        cpuNs.addAndGet(e.taskMetrics().executorCpuTime());
                        bytes.addAndGet(e.taskMetrics().shuffleReadMetrics().totalBytesRead());
                    }
                }

                @Override
                public void onStageCompleted(SparkListenerStageCompleted e) {
                    done.put(e.stageInfo().stageId(), e.stageInfo());
                }
            });
            long records = megabytes * 1_000_000L / (VALUE_BYTES + 10);
            long perMap = records / MAPS;
            List<Integer> seeds = new ArrayList<>();
            for (int i = 0; i < MAPS; i++) {
                seeds.add(i);
            }
            long t0 = System.nanoTime();
            JavaPairRDD<Integer, byte[]> data = sc.parallelize(seeds, MAPS).flatMapToPair(seed -> {
                Random rnd = new Random(seed);
                List<Tuple2<Integer, byte[]>> recs = new ArrayList<>((int) perMap);
                for (long i = 0; i < perMap; i++) {
                    byte[] v = new byte[VALUE_BYTES];
                    rnd.nextBytes(v);
                    recs.add(new Tuple2<>(rnd.nextInt(), v));
                }
                return recs.iterator();
            });
            long checksum = data.partitionBy(new HashPartitioner(REDUCES)).mapPartitions(it -> {
                long sum = 0;
                while (it.hasNext()) {
                    Tuple2<Integer, byte[]> t = it.next();
                    sum += t._1() * 31L + Arrays.hashCode(t._2());
                }
                return List.of(sum).iterator();
            }).reduce(Long::sum);
            double jobSec = (System.nanoTime() - t0) / 1e9;
            Thread.sleep(300); // the listener bus delivers the last events
            StageInfo reduce = done.values().stream().filter(s -> !s.parentIds().isEmpty()).findFirst().orElseThrow();
            double reduceSec = ((Long) reduce.completionTime().get() - (Long) reduce.submissionTime().get()) / 1e3;
            Map<String, Long> plugin = pluginMetrics();
            return new Sample(config, jobSec, reduceSec, fetchWaitMs.get() / 1e3, cpuNs.get() / 1e9, bytes.get(),
                    plugin.getOrDefault("bytesReadOneSided", 0L), plugin.getOrDefault("bytesReadFallback", 0L),
                    checksum);
        }
    }

    @SuppressWarnings("rawtypes")
    static Map<String, Long> pluginMetrics() throws InterruptedException {
        Map<String, Long> out = new LinkedHashMap<>();
        for (int attempt = 0; attempt < 50; attempt++) {
            Seq<Source> sources = SparkEnv.get().metricsSystem().getSourcesByName("HcommShuffle");
            if (sources.isEmpty()) {
                return out;
            }
            for (Map.Entry<String, Gauge> g : sources.head().metricRegistry().getGauges().entrySet()) {
                out.put(g.getKey(), ((Number) g.getValue().getValue()).longValue());
            }
            if (out.getOrDefault("bytesReadOneSided", 0L) > 0) {
                return out;
            }
            Thread.sleep(100);
        }
        return out;
    }

    static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    static String table(List<Sample> samples, List<String> configs, long megabytes, int reps) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Shuffle of %d MB (%d maps x %d reduces, random 90-byte values), "
                + "local-cluster[2,1,1024], %d repetitions alternating configurations; median (min-max).%n%n",
                megabytes, MAPS, REDUCES, reps));
        sb.append("| configuration | job s | reduce stage s | fetch wait s | reduce CPU s | shuffle MB read | "
                + "one-sided MB | reduce time / builtin | reduce time / builtin-network |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|\n");
        Map<String, Double> reduceMedian = new LinkedHashMap<>();
        for (String c : configs) {
            reduceMedian.put(c, median(samples.stream().filter(s -> s.config.equals(c)).map(Sample::reduceSec)
                    .toList()));
        }
        for (String c : configs) {
            List<Sample> mine = samples.stream().filter(s -> s.config.equals(c)).toList();
            sb.append("| ").append(c)
                    .append(" | ").append(stat(mine.stream().map(Sample::jobSec).toList()))
                    .append(" | ").append(stat(mine.stream().map(Sample::reduceSec).toList()))
                    .append(" | ").append(stat(mine.stream().map(Sample::fetchWaitSec).toList()))
                    .append(" | ").append(stat(mine.stream().map(Sample::reduceCpuSec).toList()))
                    .append(String.format(Locale.ROOT, " | %.0f | %.0f | %.2f | %.2f |%n",
                            median(mine.stream().map(s -> s.shuffleBytes / 1e6).toList()),
                            median(mine.stream().map(s -> s.oneSided / 1e6).toList()),
                            reduceMedian.get(c) / reduceMedian.get("builtin"),
                            reduceMedian.get(c) / reduceMedian.get("builtin-network")));
        }
        return sb.toString();
    }

    static String stat(List<Double> v) {
        return String.format(Locale.ROOT, "%.2f (%.2f-%.2f)", median(v), v.stream().mapToDouble(d -> d).min()
                .orElse(0), v.stream().mapToDouble(d -> d).max().orElse(0));
    }

    static String json(List<Sample> samples) {
        StringBuilder sb = new StringBuilder("[\n");
        for (int i = 0; i < samples.size(); i++) {
            Sample s = samples.get(i);
            sb.append(String.format(Locale.ROOT, "  {\"config\":\"%s\",\"jobSec\":%.3f,\"reduceSec\":%.3f,"
                    + "\"fetchWaitSec\":%.3f,\"reduceCpuSec\":%.3f,\"shuffleBytes\":%d,\"bytesReadOneSided\":%d,"
                    + "\"bytesReadFallback\":%d,\"checksum\":%d}%s%n", s.config, s.jobSec, s.reduceSec,
                    s.fetchWaitSec, s.reduceCpuSec, s.shuffleBytes, s.oneSided, s.fallback, s.checksum,
                    i + 1 < samples.size() ? "," : ""));
        }
        return sb.append("]\n").toString();
    }
}
