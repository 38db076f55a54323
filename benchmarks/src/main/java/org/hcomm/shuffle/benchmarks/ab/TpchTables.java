package org.hcomm.shuffle.benchmarks.ab;

import static org.hcomm.shuffle.benchmarks.ab.Generators.map;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

import io.trino.tpch.CustomerGenerator;
import io.trino.tpch.Distributions;
import io.trino.tpch.LineItemGenerator;
import io.trino.tpch.NationGenerator;
import io.trino.tpch.OrderGenerator;
import io.trino.tpch.PartGenerator;
import io.trino.tpch.PartSupplierGenerator;
import io.trino.tpch.RegionGenerator;
import io.trino.tpch.SupplierGenerator;
import io.trino.tpch.TextPool;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The TPC-H tables as temporary views over DataFrames whose rows the executors generate with the
 * {@code io.trino.tpch} generators: the driver parallelises part numbers and each task generates its part, so the
 * driver never holds the data. Only the columns that Q3, Q5, Q9 and Q18 use are materialised; money and quantities
 * are exact decimals (so sums do not depend on the order rows arrive in) and dates are dates.
 */
final class TpchTables {
    /** dbgen's text pool is 300 MB per JVM; comments are not queried here, so a small pool does. */
    private static final int TEXT_POOL_BYTES = 4 << 20;
    private static final DataType MONEY = DataTypes.createDecimalType(15, 2);

    private TpchTables() {
    }

    /** One small text pool per executor JVM. */
    private static final class Pool {
        static final TextPool TEXT = new TextPool(TEXT_POOL_BYTES, Distributions.getDefaultDistributions());
    }

    static void register(SparkSession spark, double scaleFactor, int parts) {
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int small = Math.max(1, parts / 4);
        view(spark, sc, "lineitem", parts, schema(
                "l_orderkey", DataTypes.LongType, "l_partkey", DataTypes.LongType, "l_suppkey", DataTypes.LongType,
                "l_quantity", MONEY, "l_extendedprice", MONEY, "l_discount", MONEY, "l_shipdate", DataTypes.DateType),
                part -> map(new LineItemGenerator(scaleFactor, part, parts, Distributions.getDefaultDistributions(),
                        Pool.TEXT).iterator(), l -> RowFactory.create(l.getOrderKey(), l.getPartKey(),
                        l.getSupplierKey(), money(l.getQuantity() * 100), money(l.getExtendedPriceInCents()),
                        money(l.getDiscountPercent()), LocalDate.ofEpochDay(l.getShipDate()))));
        view(spark, sc, "orders", parts, schema(
                "o_orderkey", DataTypes.LongType, "o_custkey", DataTypes.LongType, "o_totalprice", MONEY,
                "o_orderdate", DataTypes.DateType, "o_shippriority", DataTypes.IntegerType),
                part -> map(new OrderGenerator(scaleFactor, part, parts, Distributions.getDefaultDistributions(),
                        Pool.TEXT).iterator(), o -> RowFactory.create(o.getOrderKey(), o.getCustomerKey(),
                        money(o.getTotalPriceInCents()), LocalDate.ofEpochDay(o.getOrderDate()),
                        o.getShipPriority())));
        view(spark, sc, "customer", small, schema(
                "c_custkey", DataTypes.LongType, "c_name", DataTypes.StringType, "c_nationkey", DataTypes.LongType,
                "c_mktsegment", DataTypes.StringType),
                part -> map(new CustomerGenerator(scaleFactor, part, small, Distributions.getDefaultDistributions(),
                        Pool.TEXT).iterator(), c -> RowFactory.create(c.getCustomerKey(), c.getName(),
                        c.getNationKey(), c.getMarketSegment())));
        view(spark, sc, "part", small, schema("p_partkey", DataTypes.LongType, "p_name", DataTypes.StringType),
                part -> map(new PartGenerator(scaleFactor, part, small, Distributions.getDefaultDistributions(),
                        Pool.TEXT).iterator(), p -> RowFactory.create(p.getPartKey(), p.getName())));
        view(spark, sc, "partsupp", small, schema(
                "ps_partkey", DataTypes.LongType, "ps_suppkey", DataTypes.LongType, "ps_supplycost", MONEY),
                part -> map(new PartSupplierGenerator(scaleFactor, part, small, Pool.TEXT).iterator(),
                        ps -> RowFactory.create(ps.getPartKey(), ps.getSupplierKey(),
                                money(ps.getSupplyCostInCents()))));
        view(spark, sc, "supplier", 1, schema("s_suppkey", DataTypes.LongType, "s_nationkey", DataTypes.LongType),
                part -> map(new SupplierGenerator(scaleFactor, part, 1, Distributions.getDefaultDistributions(),
                        Pool.TEXT).iterator(), s -> RowFactory.create(s.getSupplierKey(), s.getNationKey())));
        view(spark, sc, "nation", 1, schema(
                "n_nationkey", DataTypes.LongType, "n_name", DataTypes.StringType, "n_regionkey", DataTypes.LongType),
                part -> map(new NationGenerator(Distributions.getDefaultDistributions(), Pool.TEXT).iterator(),
                        n -> RowFactory.create(n.getNationKey(), n.getName(), n.getRegionKey())));
        view(spark, sc, "region", 1, schema("r_regionkey", DataTypes.LongType, "r_name", DataTypes.StringType),
                part -> map(new RegionGenerator(Distributions.getDefaultDistributions(), Pool.TEXT).iterator(),
                        r -> RowFactory.create(r.getRegionKey(), r.getName())));
    }

    private static void view(SparkSession spark, JavaSparkContext sc, String name, int parts, StructType schema,
            FlatMapFunction<Integer, Row> generatePart) {
        // dbgen's part numbers start at 1.
        JavaRDD<Row> rows = Generators.parts(sc, 1, parts).flatMap(generatePart);
        spark.createDataFrame(rows, schema).createOrReplaceTempView(name);
    }

    private static StructType schema(Object... nameTypePairs) {
        List<StructField> fields = new ArrayList<>();
        for (int i = 0; i < nameTypePairs.length; i += 2) {
            fields.add(DataTypes.createStructField((String) nameTypePairs[i], (DataType) nameTypePairs[i + 1], false));
        }
        return DataTypes.createStructType(fields);
    }

    private static BigDecimal money(long hundredths) {
        return BigDecimal.valueOf(hundredths, 2);
    }
}
