package org.hcomm.shuffle.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The main job: a feature-engineering ETL pipeline of the kind that feeds an ML model, run twice on the same
 * generated data — once with Spark's built-in shuffle, once with the HComm shuffle — on an embedded cluster of
 * executor JVMs. It checks that both answers are identical and prints both times and the plugin's metrics.
 *
 * <p>Stages: (1) per-user aggregates of click events (reduceByKey), (2) the events joined with an item catalogue
 * (join), (3) per-category revenue and the distinct users per category (groupByKey), (4) the users ranked by spend
 * (sortByKey). Every stage boundary is a shuffle.
 *
 * <p>Arguments: {@code [master] [events]}; defaults {@code local-cluster[2,1,1024]} and 2,000,000 events. Under
 * spark-submit: {@code --submitted [events] [executors]} runs once with the configuration spark-submit gave, once
 * that many executors (default 2) have registered.
 */
public final class EtlPipelineJob {
    static final int USERS = 50_000;
    static final int ITEMS = 5_000;
    static final int CATEGORIES = 40;
    static final int PARTITIONS = 8;

    private EtlPipelineJob() {
    }

    public static void main(String[] args) throws Exception {
        ClusterSupport.JobArguments arguments = ClusterSupport.JobArguments.parse(args, 2_000_000);
        if (arguments.submitted()) {
            submitted(arguments.events(), arguments.executors());
            return;
        }
        String master = arguments.master();
        int events = arguments.events();
        Result builtin = run(master, events, false);
        Result hcomm = run(master, events, true);
        System.out.println();
        System.out.println("=== HComm shuffle example: feature ETL pipeline, " + events + " events on " + master + " ===");
        System.out.printf("built-in shuffle : %6.2f s  checksum %016x%n", builtin.seconds, builtin.checksum);
        System.out.printf("HComm shuffle    : %6.2f s  checksum %016x%n", hcomm.seconds, hcomm.checksum);
        System.out.printf("time ratio hcomm/builtin: %.2f%n", hcomm.seconds / builtin.seconds);
        System.out.println("HComm shuffle metrics (cluster totals reported by the executors):");
        ClusterSupport.printMetrics(hcomm.metrics);
        if (builtin.checksum != hcomm.checksum || !builtin.summary.equals(hcomm.summary)) {
            System.out.println("ANSWERS DIFFER\nbuilt-in: " + builtin.summary + "\nhcomm:    " + hcomm.summary);
            System.exit(1);
        }
        if (hcomm.metrics.getOrDefault("bytesReadOneSided", 0L) <= 0) {
            System.out.println("HComm shuffle did not read anything one-sidedly");
            System.exit(1);
        }
        System.out.println("answers identical: OK");
    }

    /**
     * Under spark-submit: one run with the configuration spark-submit gave (the HComm shuffle when its two settings
     * are there); fails when the HComm shuffle was expected but read nothing one-sidedly.
     */
    static void submitted(int events, int executors) throws InterruptedException {
        SparkConf conf = new SparkConf().setAppName("hcomm-example-etl-submitted");
        boolean hcomm = ClusterSupport.selectsHcomm(conf);
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            ClusterSupport.awaitExecutorCount(sc.sc(), executors);
            long t0 = System.nanoTime();
            Tuple2<Long, String> answer = pipeline(sc, events);
            System.out.printf("%n=== feature ETL pipeline under spark-submit (%s shuffle): %.2f s, checksum %016x ===%n%s%n",
                    hcomm ? "HComm" : "built-in", (System.nanoTime() - t0) / 1e9, answer._1(), answer._2());
            if (hcomm) {
                Map<String, Long> metrics = ClusterSupport.hcommMetrics(sc.sc());
                ClusterSupport.printMetrics(metrics);
                if (metrics.getOrDefault("bytesReadOneSided", 0L) <= 0) {
                    throw new IllegalStateException("the HComm shuffle read nothing one-sidedly");
                }
            }
        }
    }

    /** What one run produced. */
    record Result(double seconds, long checksum, String summary, Map<String, Long> metrics) {
    }

    static Result run(String master, int events, boolean hcomm) throws InterruptedException {
        try (JavaSparkContext sc = new JavaSparkContext(ClusterSupport.conf("hcomm-example-etl", master, hcomm))) {
            ClusterSupport.awaitExecutors(sc.sc(), master);
            long t0 = System.nanoTime();
            Tuple2<Long, String> answer = pipeline(sc, events);
            double seconds = (System.nanoTime() - t0) / 1e9;
            Map<String, Long> metrics = hcomm ? ClusterSupport.hcommMetrics(sc.sc()) : Map.of();
            return new Result(seconds, answer._1(), answer._2(), metrics);
        }
    }

    /** The pipeline; returns an order-independent checksum of every output and a short readable summary. */
    static Tuple2<Long, String> pipeline(JavaSparkContext sc, int events) {
        int perPartition = events / PARTITIONS;
        List<Integer> seeds = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            seeds.add(p);
        }
        // (user, (item, price cents)), users Zipf-like skewed
        JavaPairRDD<Integer, Tuple2<Integer, Long>> clicks = sc.parallelize(seeds, PARTITIONS).flatMapToPair(p -> {
            Random rnd = new Random(1000L + p);
            List<Tuple2<Integer, Tuple2<Integer, Long>>> out = new ArrayList<>(perPartition);
            for (int i = 0; i < perPartition; i++) {
                int user = (int) (USERS * Math.pow(rnd.nextDouble(), 2.5));
                out.add(new Tuple2<>(user, new Tuple2<>(rnd.nextInt(ITEMS), 100L + rnd.nextInt(10_000))));
            }
            return out.iterator();
        }).cache();
        JavaPairRDD<Integer, Integer> catalogue = sc.parallelize(seeds, 4).flatMapToPair(p -> {
            List<Tuple2<Integer, Integer>> out = new ArrayList<>();
            for (int item = p; item < ITEMS; item += PARTITIONS) {
                out.add(new Tuple2<>(item, (item * 7919) % CATEGORIES));
            }
            return out.iterator();
        });

        // (1) per-user features: clicks and spend
        JavaPairRDD<Integer, long[]> perUser = clicks.mapValues(v -> new long[] {1, v._2()})
                .reduceByKey((a, b) -> new long[] {a[0] + b[0], a[1] + b[1]}, 6);
        // (2) clicks joined with the catalogue: (category, (user, price))
        JavaPairRDD<Integer, Tuple2<Integer, Long>> byCategory = clicks
                .mapToPair(c -> new Tuple2<>(c._2()._1(), new Tuple2<>(c._1(), c._2()._2())))
                .join(catalogue, 6)
                .mapToPair(j -> new Tuple2<>(j._2()._2(), j._2()._1()));
        // (3) per-category revenue and distinct users
        JavaPairRDD<Integer, long[]> categoryStats = byCategory.groupByKey(5).mapValues(it -> {
            long revenue = 0;
            java.util.HashSet<Integer> users = new java.util.HashSet<>();
            for (Tuple2<Integer, Long> t : it) {
                revenue += t._2();
                users.add(t._1());
            }
            return new long[] {revenue, users.size()};
        });
        // (4) users ranked by spend
        JavaRDD<Integer> ranked = perUser.mapToPair(u -> new Tuple2<>(-u._2()[1] * 100_000L - u._1(), u._1()))
                .sortByKey(true, 4).values();

        long checksum = 17;
        for (Tuple2<Integer, long[]> u : perUser.collect()) {
            checksum += mix(u._1(), u._2()[0] * 1_000_003L + u._2()[1]);
        }
        TreeMap<Integer, long[]> cats = new TreeMap<>(categoryStats.collectAsMap());
        for (Map.Entry<Integer, long[]> c : cats.entrySet()) {
            checksum += mix(c.getKey() + 1_000_000, c.getValue()[0] * 31 + c.getValue()[1]);
        }
        List<Integer> top = ranked.take(5);
        long rank = 0;
        for (Integer user : ranked.collect()) {
            checksum += mix(2_000_000 + rank++, user);
        }
        clicks.unpersist(true);
        String summary = "users=" + perUser.count() + " categories=" + cats.size() + " top5=" + top;
        return new Tuple2<>(checksum, summary);
    }

    static long mix(long a, long b) {
        long h = a * 0x9E3779B97F4A7C15L ^ b;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        return h ^ (h >>> 29);
    }
}
