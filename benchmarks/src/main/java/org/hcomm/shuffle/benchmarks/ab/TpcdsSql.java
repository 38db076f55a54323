package org.hcomm.shuffle.benchmarks.ab;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.plans.logical.GlobalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LocalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.WithCTE;
import org.apache.spark.sql.types.StructField;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A TPC-DS power run: the 103 queries of Spark's own TPC-DS suite (the {@code tpcds/q*.sql} resources of Spark's
 * spark-sql test jar, read at run time) one after the other in natural order (q1, q2, ..., q14a, q14b, ...) in one
 * application, over {@link TpcdsTables} at scale factor size / 1 GB (TPC-DS's scale factor is its raw data in GB).
 * AQE stays at Spark's default (on); ANSI mode is off ({@link #sparkConf}). Workload {@code tpcds} keeps Spark's
 * broadcast joins; {@code tpcds-nobroadcast} turns them off ({@code spark.sql.autoBroadcastJoinThreshold=-1}), so
 * every join shuffles both sides.
 *
 * <p>Timed: the queries (parse, plan, run, collect), not the generation of the tables ({@link #prepare}). Per query
 * it reports the seconds, the rows and Spark's shuffle bytes written and read by that query's jobs (job group = the
 * query); the plugin's one-sided and fallback bytes are per run (its counters settle only after a job). Each
 * query's answer goes to the run's answers file ({@link QueryAnswers}) with the ORDER BY keys and LIMIT of Spark's
 * analyzed plan, and the suite compares it with builtin's; the checksum covers only the row counts, which ties and
 * rounding cannot change.
 */
final class TpcdsSql implements Workload {
    /** The 103 query names in natural order. */
    static final List<String> QUERIES = queryNames();

    private final boolean broadcast;
    private Map<String, Long> tableRows = Map.of();

    TpcdsSql(boolean broadcast) {
        this.broadcast = broadcast;
    }

    private static List<String> queryNames() {
        List<String> out = new ArrayList<>();
        for (int i = 1; i <= 99; i++) {
            if (List.of(14, 23, 24, 39).contains(i)) {
                out.add("q" + i + "a");
                out.add("q" + i + "b");
            } else {
                out.add("q" + i);
            }
        }
        return List.copyOf(out);
    }

    @Override
    public String name() {
        return broadcast ? "tpcds" : "tpcds-nobroadcast";
    }

    static double scaleFactor(long targetMb) {
        return Math.max(0.01, Math.round(targetMb / 1024.0 * 100) / 100.0);
    }

    @Override
    public String describe(long targetMb) {
        return String.format(java.util.Locale.ROOT, "TPC-DS power run, %d queries (Spark %s's texts), at scale "
                + "factor %.2f, %s, AQE at Spark's default; tables generated once in the executors into Parquet (not "
                + "timed)", QUERIES.size(), org.apache.spark.package$.MODULE$.SPARK_VERSION(), scaleFactor(targetMb),
                broadcast ? "broadcast joins at Spark's default" : "broadcast joins off");
    }

    /**
     * ANSI mode off: the query texts assume SQL's usual semantics (a division by zero is null; q12, q20 and q98
     * divide by a window sum that is zero in some partitions at small scales).
     */
    @Override
    public Map<String, String> sparkConf() {
        Map<String, String> conf = new LinkedHashMap<>();
        conf.put("spark.sql.ansi.enabled", "false");
        if (!broadcast) {
            conf.put("spark.sql.autoBroadcastJoinThreshold", "-1");
        }
        return conf;
    }

    @Override
    public void prepare(SparkSession spark, long targetMb) throws IOException {
        tableRows = TpcdsTables.register(spark, scaleFactor(targetMb), Workload.partitions(targetMb));
    }

    static String text(String query) throws IOException {
        try (InputStream in = TpcdsSql.class.getClassLoader().getResourceAsStream("tpcds/" + query + ".sql")) {
            if (in == null) {
                throw new IOException("tpcds/" + query + ".sql not on the class path (Spark's spark-sql test jar)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Override
    public Answer run(SparkSession spark, long targetMb) throws Exception {
        StageMetricsListener listener = new StageMetricsListener();
        spark.sparkContext().addSparkListener(listener);
        Map<String, Object> perQuery = new LinkedHashMap<>();
        List<QueryAnswers.Answer> answers = new ArrayList<>();
        long checksum = 0;
        long records = 0;
        try {
            for (String q : QUERIES) {
                String sql = text(q);
                spark.sparkContext().setJobGroup(q, "TPC-DS " + q, false);
                long t0 = System.nanoTime();
                Dataset<Row> df = spark.sql(sql);
                List<Row> rows = df.collectAsList();
                double sec = (System.nanoTime() - t0) / 1e9;
                answers.add(answer(q, df, rows));
                checksum += Hashing.combine(Hashing.string(q), rows.size());
                records += rows.size();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("seconds", sec);
                m.put("rows", rows.size());
                perQuery.put(q, m);
            }
        } finally {
            spark.sparkContext().clearJobGroup();
            listener.awaitQuiet(10_000);
            spark.sparkContext().removeSparkListener(listener);
        }
        for (StageMetricsListener.Stage s : listener.stages()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) perQuery.get(s.group);
            if (m != null) {
                m.merge("shuffleWriteBytes", s.writeBytes, (a, b) -> (Long) a + (Long) b);
                m.merge("shuffleReadBytes", s.remoteBytes + s.localBytes, (a, b) -> (Long) a + (Long) b);
            }
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("scaleFactor", scaleFactor(targetMb));
        detail.put("broadcastJoins", broadcast);
        detail.put("tableRows", tableRows);
        detail.put("queries", perQuery);
        return new Answer(checksum, records, detail, QueryAnswers.format(answers));
    }

    /** The answer with its column types, and the ORDER BY keys and LIMIT of the analyzed plan. */
    static QueryAnswers.Answer answer(String query, Dataset<Row> df, List<Row> rows) {
        List<String> types = new ArrayList<>();
        for (StructField f : df.schema().fields()) {
            types.add(f.dataType().simpleString());
        }
        List<List<String>> values = new ArrayList<>();
        for (Row r : rows) {
            List<String> v = new ArrayList<>(r.size());
            for (int i = 0; i < r.size(); i++) {
                Object o = r.get(i);
                v.add(o == null ? null : o instanceof BigDecimal d ? d.toPlainString() : String.valueOf(o));
            }
            values.add(v);
        }
        LogicalPlan plan = df.queryExecution().analyzed();
        // what each output column is at the level of the plan reached so far (an alias of a Project below the
        // output is followed to the expression it names)
        List<Expression> columns = new ArrayList<>(CollectionConverters.asJava(plan.output()));
        long limit = -1;
        LogicalPlan p = plan;
        while (true) {
            if (p instanceof WithCTE w) {
                p = w.plan();
            } else if (p instanceof GlobalLimit g) {
                limit = g.maxRows().isDefined() ? ((Number) g.maxRows().get()).longValue() : -1;
                p = child(p);
            } else if (p instanceof Project project) {
                columns = unaliased(columns, project);
                p = child(p);
            } else if (p instanceof LocalLimit || p instanceof SubqueryAlias) {
                p = child(p);
            } else {
                break;
            }
        }
        List<Integer> keys = List.of();
        if (p instanceof Sort s && s.global()) {
            // a key the select list renames is resolved below the sort, in the Project the analyzer adds there
            keys = keys(s, columns, s.child() instanceof Project below ? unaliased(columns, below) : columns);
        }
        return new QueryAnswers.Answer(query, types, keys, limit, values);
    }

    /** The columns with each attribute that {@code project} defines by an alias replaced by the aliased expression. */
    private static List<Expression> unaliased(List<Expression> columns, Project project) {
        List<Expression> out = new ArrayList<>(columns);
        for (NamedExpression e : CollectionConverters.asJava(project.projectList())) {
            if (e instanceof Alias alias) {
                out.replaceAll(c -> c instanceof Attribute a && a.exprId().equals(alias.exprId()) ? alias.child() : c);
            }
        }
        return out;
    }

    private static LogicalPlan child(LogicalPlan p) {
        return p.children().head();
    }

    /**
     * The sort's keys as output column indexes: the column a key is (as the output names it, or as the Project under
     * the sort defines it), or else all the columns its expression is made of (rows equal in all of them are equal
     * in the key, so this finds no tie that is not one, only perhaps fewer: a difference is then reported, never
     * hidden); null when a key needs something that is no column.
     */
    private static List<Integer> keys(Sort sort, List<Expression> columns, List<Expression> belowSort) {
        List<Integer> keys = new ArrayList<>();
        for (SortOrder o : CollectionConverters.asJava(sort.order())) {
            int index = indexOf(columns, belowSort, o.child());
            if (index >= 0) {
                keys.add(index);
                continue;
            }
            for (Attribute a : CollectionConverters.asJava(o.child().references().toSeq())) {
                int i = indexOf(columns, belowSort, a);
                if (i < 0) {
                    return null;
                }
                keys.add(i);
            }
        }
        return keys;
    }

    private static int indexOf(List<Expression> columns, List<Expression> belowSort, Expression e) {
        for (int i = 0; i < columns.size(); i++) {
            if (columns.get(i).semanticEquals(e) || belowSort.get(i).semanticEquals(e)) {
                return i;
            }
        }
        return -1;
    }
}
