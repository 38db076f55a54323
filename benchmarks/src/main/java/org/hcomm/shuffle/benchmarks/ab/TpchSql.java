package org.hcomm.shuffle.benchmarks.ab;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A TPC-H subset with large shuffles — Q3, Q5, Q9 and Q18 as Spark SQL over {@link TpchTables} — run one after the
 * other in one application. The scale factor follows the target shuffle size (about {@link #MB_PER_SF} MB of
 * shuffle for the four queries per unit of scale factor, measured on this suite). ORDER BY clauses get a unique
 * tie-breaker so that LIMIT picks the same rows every time; the checksum is the sum of the result rows' hashes.
 */
final class TpchSql implements Workload {
    /** Shuffle bytes written by Q3+Q5+Q9+Q18 per unit of scale factor (measured; used to size the data). */
    static final double MB_PER_SF = 450;

    static final Map<String, String> QUERIES = new LinkedHashMap<>();

    static {
        QUERIES.put("q3", """
                select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
                from customer, orders, lineitem
                where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
                  and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
                group by l_orderkey, o_orderdate, o_shippriority
                order by revenue desc, o_orderdate, l_orderkey
                limit 10""");
        QUERIES.put("q5", """
                select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
                from customer, orders, lineitem, supplier, nation, region
                where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey
                  and c_nationkey = s_nationkey and s_nationkey = n_nationkey and n_regionkey = r_regionkey
                  and r_name = 'ASIA' and o_orderdate >= date '1994-01-01' and o_orderdate < date '1995-01-01'
                group by n_name
                order by revenue desc, n_name""");
        QUERIES.put("q9", """
                select nation, o_year, sum(amount) as sum_profit
                from (select n_name as nation, year(o_orderdate) as o_year,
                             l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
                      from part, supplier, lineitem, partsupp, orders, nation
                      where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey
                        and p_partkey = l_partkey and o_orderkey = l_orderkey and s_nationkey = n_nationkey
                        and p_name like '%green%') as profit
                group by nation, o_year
                order by nation, o_year desc""");
        QUERIES.put("q18", """
                select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) as quantity
                from customer, orders, lineitem
                where o_orderkey in (select l_orderkey from lineitem group by l_orderkey
                                     having sum(l_quantity) > 300)
                  and c_custkey = o_custkey and o_orderkey = l_orderkey
                group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
                order by o_totalprice desc, o_orderdate, o_orderkey
                limit 100""");
    }

    @Override
    public String name() {
        return "tpch";
    }

    static double scaleFactor(long targetMb) {
        return Math.max(0.01, Math.round(targetMb / MB_PER_SF * 100) / 100.0);
    }

    @Override
    public String describe(long targetMb) {
        return String.format("TPC-H Q3, Q5, Q9, Q18 (Spark SQL, AQE on) at scale factor %.2f, tables generated "
                + "in the executors in %d parts", scaleFactor(targetMb), Workload.partitions(targetMb));
    }

    @Override
    public Answer run(SparkSession spark, long targetMb) {
        double sf = scaleFactor(targetMb);
        TpchTables.register(spark, sf, Workload.partitions(targetMb));
        long checksum = 0;
        long records = 0;
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("scaleFactor", sf);
        Map<String, Object> perQuery = new LinkedHashMap<>();
        for (Map.Entry<String, String> q : QUERIES.entrySet()) {
            spark.sparkContext().setJobGroup(q.getKey(), "TPC-H " + q.getKey(), false);
            long t0 = System.nanoTime();
            List<Row> rows = spark.sql(q.getValue()).collectAsList();
            double sec = (System.nanoTime() - t0) / 1e9;
            long sum = 0;
            for (Row r : rows) {
                sum += Hashing.string(r.toString());
            }
            checksum += Hashing.combine(Hashing.string(q.getKey()), sum);
            records += rows.size();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("seconds", sec);
            m.put("rows", rows.size());
            m.put("checksum", Long.toHexString(sum));
            perQuery.put(q.getKey(), m);
        }
        spark.sparkContext().clearJobGroup();
        detail.put("queries", perQuery);
        return new Answer(checksum, records, detail);
    }
}
