package org.hcomm.shuffle.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lag;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.rank;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.xxhash64;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Map;

import org.apache.spark.SparkConf;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.evaluation.RegressionEvaluator;
import org.apache.spark.ml.feature.OneHotEncoder;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.feature.StringIndexer;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.recommendation.ALS;
import org.apache.spark.ml.recommendation.ALSModel;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.expressions.Window;
import org.apache.spark.sql.expressions.WindowSpec;

/**
 * The ML example: a recommender and click-through-rate pipeline on DataFrames and MLlib, run twice on the same
 * generated data — once with Spark's built-in shuffle, once with the HComm shuffle — on an embedded cluster of
 * executor JVMs. It checks that the features are identical and that the models' metrics agree within a tolerance,
 * and prints both times and the plugin's metrics.
 *
 * <p>Stages, most of them shuffles:
 * <ol>
 *   <li>users, items and four weeks of events generated inside the executors from {@code spark.range} by seeded
 *       hashes of the row ids ({@code xxhash64}), so every run and every partitioning gives the same rows; users and
 *       items are skewed (a few heavy users and popular items), a user's events come in bursts within the hour;</li>
 *   <li>the events joined with users and items (sort-merge joins: broadcast joins are off so that they shuffle), which
 *       decides each event's click and rating from hidden user and item tastes;</li>
 *   <li>sessionisation over the first three weeks (the history): a window per user ordered by time starts a new
 *       session after {@value #SESSION_GAP_SECONDS} s without an event; per-user features (events, clicks,
 *       purchases, spend, sessions, events per session, distinct items, click rate) and per-item features (views,
 *       clicks, distinct users, click rate, rank by clicks within the category, another window);</li>
 *   <li>the feature table: every event of the last week with its user's and item's history features, and the
 *       ratings table: the mean rating per (user, item) pair of the history;</li>
 *   <li>an MLlib {@link Pipeline} ({@link StringIndexer}, {@link OneHotEncoder}, {@link VectorAssembler},
 *       {@link StandardScaler}, {@link LogisticRegression}) trained on 80 % of the feature table to predict a click,
 *       evaluated by the area under the ROC curve on the other 20 %; and {@link ALS} (whose training shuffles the
 *       rating blocks every iteration) trained on 80 % of the ratings, evaluated by the RMSE on the other 20 %. The
 *       splits are by a hash of the row's key, not {@code randomSplit}, so they do not depend on row order.</li>
 * </ol>
 *
 * <p><b>Features are exact.</b> Every feature is a long, a string, or a decimal ratio of two exact longs (Spark's
 * decimal division, the same digits every run), and each mean rating is one double division of two exact longs (a
 * correctly rounded result, the same every run). No feature sums doubles, because a sum of doubles depends on the order
 * in which the shuffle delivered them, and that order varies from run to run with any shuffle. So the feature checksum
 * (an order-independent sum of a hash of every row of both tables) must be identical between the two shuffles.
 *
 * <p><b>Model metrics agree within a tolerance.</b> The models themselves sum doubles in an order that depends on
 * fetch order (the scaler's and the logistic regression's tree aggregates, ALS's normal equations), so their metrics
 * may differ in the last bits between any two runs, with either shuffle. Measured on this project's 2-core machine at
 * 1,000,000 events (the README's ML job paragraph has the numbers): the ALS RMSE was the same to the last printed
 * digit (15) in all six runs (four built-in, two HComm), and the AUC differed by at most 3e-15 (5e-15 relative),
 * between two built-in runs as between built-in and HComm. The check allows a relative difference of {@value #METRIC_TOLERANCE}: far above that, and
 * above what an optimiser that stops one iteration earlier or later (a convergence test decided by a last bit; the
 * logistic regression's tolerance is 1e-6) could do to the AUC, yet small beside what a lost, duplicated or corrupted
 * block of a model's training shuffles would do (a block carries hundreds to thousands of ratings or a partition's
 * partial sums: whole per-mille of the data, not last bits; not measured here). The evaluator computes the exact ROC curve
 * ({@code numBins} 0): its default bins scores by bounds sampled from row order, which moved the AUC by 7e-6
 * relative between two runs of 200,000 events.
 *
 * <p>Arguments: {@code [master] [events]}; defaults {@code local-cluster[2,1,1024]} and {@value #DEFAULT_EVENTS}
 * events. Under spark-submit: {@code --submitted [events] [executors]} runs once with the configuration spark-submit
 * gave, once that many executors (default 2) have registered.
 */
public final class MlPipelineJob {
    static final int DEFAULT_EVENTS = 1_000_000;
    static final int DAYS = 28;
    static final int HISTORY_DAYS = 21;
    static final int SESSION_GAP_SECONDS = 30 * 60;
    static final int PARTITIONS = 8;
    static final long SEED = 19;
    /** The relative difference allowed between two runs' model metrics; the class comment says why. */
    static final double METRIC_TOLERANCE = 1e-6;

    private MlPipelineJob() {
    }

    public static void main(String[] args) throws Exception {
        ClusterSupport.JobArguments arguments = ClusterSupport.JobArguments.parse(args, DEFAULT_EVENTS);
        if (arguments.submitted()) {
            submitted(arguments.events(), arguments.executors());
            return;
        }
        String master = arguments.master();
        int events = arguments.events();
        Result builtin = run(ClusterSupport.conf("hcomm-example-ml", master, false), Size.of(events));
        Result hcomm = run(ClusterSupport.conf("hcomm-example-ml", master, true), Size.of(events));
        System.out.println();
        System.out.println("=== HComm shuffle example: ML pipeline (features, CTR model, ALS), " + events + " events on "
                + master + " ===");
        System.out.println("built-in shuffle : " + builtin.answer);
        System.out.println("HComm shuffle    : " + hcomm.answer);
        System.out.printf("time ratio hcomm/builtin: %.2f%n", hcomm.answer.seconds() / builtin.answer.seconds());
        System.out.println("HComm shuffle metrics (cluster totals reported by the executors):");
        ClusterSupport.printMetrics(hcomm.metrics);
        String problem = builtin.answer.disagreement(hcomm.answer);
        if (problem == null) {
            problem = ClusterSupport.metricsProblem(hcomm.metrics, true);
        }
        if (problem != null) {
            System.out.println("FAILED: " + problem);
            System.exit(1);
        }
        System.out.printf("features identical, model metrics within %.0e relative: OK%n", METRIC_TOLERANCE);
    }

    /**
     * Under spark-submit: one run with the configuration spark-submit gave (the HComm shuffle when its two settings
     * are there); fails when the HComm shuffle was expected but read nothing one-sidedly.
     */
    static void submitted(int events, int executors) throws InterruptedException {
        SparkConf conf = new SparkConf().setAppName("hcomm-example-ml-submitted");
        boolean hcomm = ClusterSupport.selectsHcomm(conf);
        SparkSession spark = session(conf);
        try {
            ClusterSupport.awaitExecutorCount(spark.sparkContext(), executors);
            Answer answer = pipeline(spark, Size.of(events));
            // the line examples/cluster-lib.sh reads the checksum and the time from, as for the ETL job
            System.out.printf("%n=== ML pipeline under spark-submit (%s shuffle): %.2f s, checksum %016x ===%n%s%n",
                    hcomm ? "HComm" : "built-in", answer.seconds(), answer.featureChecksum(), answer.modelLine());
            if (hcomm) {
                Map<String, Long> metrics = ClusterSupport.hcommMetrics(spark.sparkContext());
                ClusterSupport.printMetrics(metrics);
                String problem = ClusterSupport.metricsProblem(metrics, true);
                if (problem != null) {
                    throw new IllegalStateException(problem);
                }
            }
        } finally {
            spark.stop();
        }
    }

    /**
     * The data's size and the models' iterations: {@code events} events over four weeks, a user per 40 events and an
     * item per 200 (at least 1,000 and 200).
     */
    record Size(int events, int clickModelIterations, int alsIterations) {
        /** The job's: 30 iterations of the logistic regression, 8 of ALS. */
        static Size of(int events) {
            return new Size(events, 30, 8);
        }

        int users() {
            return Math.max(1_000, events / 40);
        }

        int items() {
            return Math.max(200, events / 200);
        }
    }

    /** What one run produced: its answer and, with the HComm shuffle, the plugin's metrics. */
    record Result(Answer answer, Map<String, Long> metrics) {
    }

    /** The pipeline's answer: the features' checksum and row count, the models' metrics, and its time. */
    record Answer(long featureChecksum, long featureRows, double rmse, double auc, double[] times) {
        /** The whole pipeline's time. */
        double seconds() {
            return times[0];
        }

        /** What differs between this answer and another beyond {@link #METRIC_TOLERANCE}, or null. */
        String disagreement(Answer other) {
            if (featureChecksum != other.featureChecksum || featureRows != other.featureRows) {
                return "features differ: " + this + " vs " + other;
            }
            if (relativeDifference(rmse, other.rmse) > METRIC_TOLERANCE
                    || relativeDifference(auc, other.auc) > METRIC_TOLERANCE) {
                return "model metrics differ by more than " + METRIC_TOLERANCE + " relative: " + modelLine() + " vs "
                        + other.modelLine();
            }
            return null;
        }

        String modelLine() {
            return String.format("model metrics: ALS RMSE %.15f, CTR AUC %.15f", rmse, auc);
        }

        @Override
        public String toString() {
            return String.format("%6.2f s (features %.1f s, CTR model %.1f s, ALS %.1f s)  features %016x (%d rows)%n"
                    + "                   %s", times[0], times[1], times[2], times[3], featureChecksum, featureRows,
                    modelLine());
        }
    }

    static double relativeDifference(double a, double b) {
        return a == b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
    }

    /**
     * The session for a configuration: 8 shuffle partitions (2 executors of 1 core; Spark's 200 would be mostly
     * scheduling) and no broadcast joins, so that every join shuffles, unless the configuration says otherwise.
     */
    static SparkSession session(SparkConf conf) {
        conf.setIfMissing("spark.sql.shuffle.partitions", String.valueOf(PARTITIONS))
                .setIfMissing("spark.sql.autoBroadcastJoinThreshold", "-1");
        return SparkSession.builder().config(conf).getOrCreate();
    }

    /** One run on a context of its own, timed once its executors registered. */
    static Result run(SparkConf conf, Size size) throws InterruptedException {
        SparkSession spark = session(conf);
        try {
            ClusterSupport.awaitExecutors(spark.sparkContext(), conf.get("spark.master"));
            Answer answer = pipeline(spark, size);
            boolean hcomm = ClusterSupport.selectsHcomm(conf);
            return new Result(answer, hcomm ? ClusterSupport.hcommMetrics(spark.sparkContext()) : Map.of());
        } finally {
            spark.stop();
        }
    }

    /** A uniform double in [0, 1) from a seeded hash of the given SQL expressions (the same for the same values). */
    static String uniform(String exprs, int salt) {
        return "(pmod(xxhash64(" + exprs + ", " + (SEED * 1000 + salt) + "L), 1000000007L) / 1000000007D)";
    }

    /** The pipeline; returns the features' checksum, the models' metrics and the time it took. */
    static Answer pipeline(SparkSession spark, Size size) {
        long t0 = System.nanoTime();
        Dataset<Row> eventsTable = generate(spark, size.events, size.users(), size.items());
        Dataset<Row> history = eventsTable.where("day < " + HISTORY_DAYS);

        Dataset<Row> features = featureTable(eventsTable.where("day >= " + HISTORY_DAYS),
                userFeatures(history), itemFeatures(history)).cache();
        // the mean rating of each (user, item) pair of the history: one division of two exact longs
        Dataset<Row> ratings = grouped(history, new String[] {"user_id", "item_id"}, "sum(rating) as rating_sum",
                "count(*) as n").selectExpr("user_id", "item_id", "cast(rating_sum as double) / n as rating").cache();

        Row featureSum = checksum(features);
        Row ratingSum = checksum(ratings);
        long checksum = EtlPipelineJob.mix(featureSum.getDecimal(0).toBigInteger().longValue(),
                ratingSum.getDecimal(0).toBigInteger().longValue());
        long rows = featureSum.getLong(1) + ratingSum.getLong(1);

        long t1 = System.nanoTime();
        double auc = clickModelAuc(features, size.clickModelIterations);
        long t2 = System.nanoTime();
        double rmse = alsRmse(ratings, size.alsIterations);
        long t3 = System.nanoTime();
        features.unpersist(true);
        ratings.unpersist(true);
        return new Answer(checksum, rows, rmse, auc, new double[] {(t3 - t0) / 1e9, (t1 - t0) / 1e9, (t2 - t1) / 1e9,
            (t3 - t2) / 1e9});
    }

    /** Users, items and events joined: one row per event with its day, click, purchase and rating. */
    static Dataset<Row> generate(SparkSession spark, int events, int users, int items) {
        Dataset<Row> userTable = spark.range(0, users, 1, PARTITIONS).selectExpr(
                "cast(id as int) as user_id",
                "element_at(array('DE', 'FR', 'ES', 'IT', 'PL', 'NL', 'SE', 'US', 'BR', 'IN', 'JP', 'KR'), cast(12 * "
                        + uniform("id", 1) + " as int) + 1) as country",
                "concat('age_', cast(cast(6 * " + uniform("id", 2) + " as int) as string)) as age_band",
                uniform("id", 3) + " * 2 - 1 as user_taste_1",
                uniform("id", 4) + " * 2 - 1 as user_taste_2");
        Dataset<Row> itemTable = spark.range(0, items, 1, PARTITIONS).selectExpr(
                "cast(id as int) as item_id",
                "concat('cat_', cast(cast(30 * " + uniform("id", 5) + " as int) as string)) as category",
                "100 + cast(20000 * " + uniform("id", 6) + " as long) as price_cents",
                uniform("id", 7) + " * 2 - 1 as item_taste_1",
                uniform("id", 8) + " * 2 - 1 as item_taste_2",
                uniform("id", 9) + " as quality");
        // skewed: user u with probability ~ u^-1/2 (low ids are heavy users), item i ~ i^-2/3 (popular items);
        // a user's events of a day fall into one of three hour-long bursts, so they form sessions
        Dataset<Row> raw = spark.range(0, events, 1, PARTITIONS).selectExpr(
                "id as event_id",
                "cast(" + users + " * pow(" + uniform("id", 10) + ", 2) as int) as user_id",
                "cast(" + items + " * pow(" + uniform("id", 11) + ", 3) as int) as item_id",
                "cast(" + DAYS + " * " + uniform("id", 12) + " as int) as day",
                "cast(3 * " + uniform("id", 13) + " as int) as burst",
                "cast(3600 * " + uniform("id", 14) + " as long) as offset_seconds",
                "element_at(array('mobile', 'desktop', 'tablet'), cast(3 * " + uniform("id", 15)
                        + " as int) + 1) as device");
        return raw.join(userTable, "user_id").join(itemTable, "item_id").selectExpr(
                "event_id", "user_id", "item_id", "day", "device", "country", "age_band", "category", "price_cents",
                "cast(day as long) * 86400 + cast(79200 * " + uniform("user_id, day, burst", 16)
                        + " as long) + offset_seconds as ts",
                "user_taste_1 * item_taste_1 + user_taste_2 * item_taste_2 as affinity",
                "quality").selectExpr(
                "*",
                // the click probability rises with the hidden affinity and the item's quality; mobile clicks more
                "case when " + uniform("event_id", 17) + " < 0.02 + 0.06 * (affinity + 2) * quality"
                        + " + case when device = 'mobile' then 0.02 else 0 end then 1 else 0 end as clicked",
                "cast(least(5, greatest(1, round(3 + 1.5 * affinity + " + uniform("event_id", 18)
                        + " - 0.5))) as int) as rating").selectExpr(
                "*",
                "case when clicked = 1 and " + uniform("event_id", 19) + " < 0.1 then 1 else 0 end as purchased")
                .drop("affinity", "quality");
    }

    /**
     * Per-user features of the history: sessions (a new one after {@value #SESSION_GAP_SECONDS} s without an event,
     * by a window per user ordered by time) and counts, all longs or decimal ratios of longs.
     */
    static Dataset<Row> userFeatures(Dataset<Row> history) {
        WindowSpec byTime = Window.partitionBy("user_id").orderBy("ts", "event_id");
        Dataset<Row> sessionised = history
                .withColumn("gap", col("ts").minus(lag("ts", 1).over(byTime)))
                .withColumn("new_session", expr(
                        "case when gap is null or gap > " + SESSION_GAP_SECONDS + " then 1 else 0 end"))
                .withColumn("session_no", sum("new_session").over(byTime));
        Dataset<Row> sessions = grouped(sessionised, new String[] {"user_id", "session_no"},
                "count(*) as session_events", "max(ts) - min(ts) as session_seconds");
        Dataset<Row> perSession = grouped(sessions, new String[] {"user_id"}, "count(*) as sessions",
                "sum(session_seconds) as session_seconds", "max(session_events) as user_longest_session");
        Dataset<Row> perUser = grouped(history, new String[] {"user_id"},
                "count(*) as user_events", "sum(clicked) as user_clicks", "sum(purchased) as user_purchases",
                "sum(case when purchased = 1 then price_cents else 0 end) as user_spend_cents",
                "count(distinct item_id) as user_distinct_items");
        return perUser.join(perSession, "user_id").selectExpr("*",
                "cast(user_events as decimal(20, 0)) / sessions as user_events_per_session",
                "cast(session_seconds as decimal(20, 0)) / sessions as user_session_seconds",
                "cast(user_clicks as decimal(20, 0)) / user_events as user_ctr").drop("session_seconds");
    }

    /** Per-item features of the history, with the item's rank by clicks within its category (a window). */
    static Dataset<Row> itemFeatures(Dataset<Row> history) {
        Dataset<Row> perItem = grouped(history, new String[] {"item_id"},
                "count(*) as item_views", "sum(clicked) as item_clicks",
                "count(distinct user_id) as item_distinct_users",
                "cast(sum(clicked) as decimal(20, 0)) / count(*) as item_ctr");
        Dataset<Row> categories = history.select("item_id", "category").distinct();
        WindowSpec byClicks = Window.partitionBy("category").orderBy(col("item_clicks").desc(), col("item_id"));
        return perItem.join(categories, "item_id")
                .withColumn("item_rank_in_category", rank().over(byClicks))
                .drop("category");
    }

    /** Every event of the label window with its user's and item's history features (zero when it had none). */
    static Dataset<Row> featureTable(Dataset<Row> labelled, Dataset<Row> userFeatures, Dataset<Row> itemFeatures) {
        // the feature tables' keys renamed: both sides descend from the same events, so labelled.col("user_id") and
        // userFeatures.col("user_id") would be one column to Spark (a trivially true condition it has to repair)
        Dataset<Row> joined = labelled
                .select("event_id", "user_id", "item_id", "device", "country", "age_band", "category", "price_cents",
                        "ts", "clicked")
                .join(userFeatures.withColumnRenamed("user_id", "feature_user_id"),
                        col("user_id").equalTo(col("feature_user_id")), "left")
                .drop("feature_user_id")
                .join(itemFeatures.withColumnRenamed("item_id", "feature_item_id"),
                        col("item_id").equalTo(col("feature_item_id")), "left")
                .drop("feature_item_id");
        return joined.na().fill(0).withColumn("hour", expr("cast(ts % 86400 / 3600 as int)"));
    }

    /** {@code table} grouped by {@code keys}, with the aggregates given as SQL expressions. */
    static Dataset<Row> grouped(Dataset<Row> table, String[] keys, String... aggregates) {
        Column[] columns = Arrays.stream(aggregates).map(a -> expr(a)).toArray(Column[]::new);
        return table.groupBy(Arrays.stream(keys).map(k -> col(k)).toArray(Column[]::new))
                .agg(columns[0], Arrays.copyOfRange(columns, 1, columns.length));
    }

    /** An order-independent checksum: the sum of a hash of every row (as a decimal: no overflow), and the rows. */
    static Row checksum(Dataset<Row> table) {
        Column[] columns = Arrays.stream(table.columns()).map(c -> col(c)).toArray(Column[]::new);
        return table.select(xxhash64(columns).cast("decimal(38, 0)").as("h"))
                .agg(sum("h").cast("decimal(38, 0)"), count(lit(1))).head();
    }

    /** The click model: the MLlib pipeline trained on 80 % of the feature table, its AUC on the rest. */
    static double clickModelAuc(Dataset<Row> features, int iterations) {
        String[] categorical = {"device", "country", "age_band", "category"};
        String[] indexed = Arrays.stream(categorical).map(c -> c + "_idx").toArray(String[]::new);
        String[] encoded = Arrays.stream(categorical).map(c -> c + "_vec").toArray(String[]::new);
        String[] numeric = {"price_cents", "hour", "user_events", "user_clicks", "user_purchases", "user_spend_cents",
                "user_distinct_items", "sessions", "user_longest_session", "user_events_per_session", "user_session_seconds", "user_ctr",
                "item_views", "item_clicks", "item_distinct_users", "item_ctr", "item_rank_in_category"};
        String[] assembled = Arrays.copyOf(encoded, encoded.length + numeric.length);
        System.arraycopy(numeric, 0, assembled, encoded.length, numeric.length);
        Dataset<Row> data = features.selectExpr("*", "cast(clicked as double) as label",
                "pmod(xxhash64(event_id, " + SEED + "L), 10) < 8 as train");
        Pipeline pipeline = new Pipeline().setStages(new PipelineStage[] {
            new StringIndexer().setInputCols(categorical).setOutputCols(indexed).setHandleInvalid("keep"),
            new OneHotEncoder().setInputCols(indexed).setOutputCols(encoded),
            new VectorAssembler().setInputCols(assembled).setOutputCol("raw_features"),
            new StandardScaler().setInputCol("raw_features").setOutputCol("features"),
            new LogisticRegression().setMaxIter(iterations).setRegParam(0.001).setLabelCol("label")});
        PipelineModel model = pipeline.fit(data.where("train"));
        // numBins 0: the exact curve; its default (1000 bins) groups scores into bins whose bounds depend on row order
        return new BinaryClassificationEvaluator().setLabelCol("label").setMetricName("areaUnderROC").setNumBins(0)
                .evaluate(model.transform(data.where("not train")));
    }

    /** ALS on 80 % of the (user, item) ratings; the RMSE of its predictions on the rest. */
    static double alsRmse(Dataset<Row> ratings, int iterations) {
        Dataset<Row> data = ratings.selectExpr("*", "pmod(xxhash64(user_id, item_id, " + SEED + "L), 10) < 8 as train");
        ALSModel model = new ALS().setRank(10).setMaxIter(iterations).setRegParam(0.05).setSeed(SEED)
                .setNumUserBlocks(4).setNumItemBlocks(4).setUserCol("user_id").setItemCol("item_id")
                .setRatingCol("rating").setColdStartStrategy("drop").fit(data.where("train"));
        return new RegressionEvaluator().setMetricName("rmse").setLabelCol("rating").setPredictionCol("prediction")
                .evaluate(model.transform(data.where("not train")));
    }
}
