package org.hcomm.shuffle.benchmarks.ab;

import java.io.File;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.trino.tpcds.Results;
import io.trino.tpcds.Session;
import io.trino.tpcds.Table;
import io.trino.tpcds.column.Column;
import io.trino.tpcds.column.ColumnType;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The 24 TPC-DS tables as temporary views over Parquet files that the executors generate with the {@code
 * io.trino.tpcds} generator (dsdgen's Java port): the driver parallelises chunk numbers and each task generates its
 * chunk ({@code Session.withParallelism(n).withChunkNumber(i)}), so the driver never holds the data. Schemas come
 * from the library's own columns (three renamed to the queries' names, {@link #QUERY_NAMES}): identifiers are
 * longs, integers ints, decimals keep their precision and scale, dates are dates, char, varchar and time are
 * strings, and dsdgen's nulls are nulls.
 *
 * <p>Unlike TPC-H's tables, which are generated again by every scan (the generation is part of TPC-H's timed
 * queries), the TPC-DS tables are written once, by the first application that needs them, to {@code
 * target/tpcds-data/sf<scale>-<chunks>-tpcds<generator version>} (a table is complete when its {@code _ROWS} file,
 * its row count, is there; another version of the generator writes its own)
 * and read from there by every later run: 103 queries would otherwise time the generator more than the shuffle.
 * Writing them is not timed; the timed queries read Parquet.
 */
final class TpcdsTables {
    /**
     * The library's column names that differ from those of the queries (Spark's TPC-DS schema, from the spec's
     * earlier versions and without the library's two misspellings): the library's name to the queries'.
     */
    static final Map<String, String> QUERY_NAMES = Map.of("c_last_review_date_sk", "c_last_review_date",
            "p_response_targe", "p_response_target", "s_tax_precentage", "s_tax_percentage");

    private TpcdsTables() {
    }

    /** The 24 tables of the benchmark (the library's base tables but dbgen_version, which is about the run). */
    static List<Table> tables() {
        return Table.getBaseTables().stream().filter(t -> t != Table.DBGEN_VERSION).toList();
    }

    /**
     * The data directory of one scale and chunk count (the same rows whatever the chunks; the files differ) and
     * generator version (tables of another version are never reused as this one's).
     */
    static File dataDir(double scale, int chunks) {
        return new File("target/tpcds-data/sf" + scale + "-" + chunks + "-tpcds" + generatorVersion())
                .getAbsoluteFile();
    }

    /** The {@code io.trino.tpcds} version on the class path (its jar's Implementation-Version), or "unknown". */
    static String generatorVersion() {
        String v = Table.class.getPackage().getImplementationVersion();
        return v == null ? "unknown" : v;
    }

    /**
     * Generates what is missing at {@code scale} into {@link #dataDir} and registers every table as a view; returns
     * each table's row count.
     */
    static Map<String, Long> register(SparkSession spark, double scale, int chunks) throws IOException {
        File dir = dataDir(scale, chunks);
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Map<String, Long> rows = new LinkedHashMap<>();
        for (Table table : tables()) {
            File tableDir = new File(dir, table.getName());
            File count = new File(tableDir, "_ROWS");
            if (!count.exists()) {
                generate(spark, sc, table, scale, table.isSmall() ? 1 : chunks).write().mode(SaveMode.Overwrite)
                        .parquet(tableDir.getPath());
                // counted without a shuffle (an RDD count), so the runs' shuffle counters hold the queries alone
                long n = spark.read().parquet(tableDir.getPath()).javaRDD().count();
                Files.writeString(count.toPath(), Long.toString(n));
            }
            spark.read().parquet(tableDir.getPath()).createOrReplaceTempView(table.getName());
            rows.put(table.getName(), Long.parseLong(Files.readString(count.toPath()).trim()));
        }
        return rows;
    }

    private static org.apache.spark.sql.Dataset<Row> generate(SparkSession spark, JavaSparkContext sc, Table table,
            double scale, int chunks) {
        StructType schema = schema(table);
        // dsdgen's chunk numbers start at 1.
        JavaRDD<Row> rows = Generators.parts(sc, 1, chunks).flatMap(chunk -> {
            Session session = Session.getDefaultSession().withScale(scale).withParallelism(chunks)
                    .withChunkNumber(chunk).withTable(table);
            // A result is a row with its child rows; generating a table yields that table's rows alone, one each.
            return Generators.map(Results.constructResults(table, session).iterator(),
                    parentAndChildren -> row(table, parentAndChildren.get(0)));
        });
        return spark.createDataFrame(rows, schema);
    }

    static StructType schema(Table table) {
        List<StructField> fields = new ArrayList<>();
        for (Column c : table.getColumns()) {
            fields.add(DataTypes.createStructField(QUERY_NAMES.getOrDefault(c.getName(), c.getName()),
                    sparkType(c.getType()), true));
        }
        return DataTypes.createStructType(fields);
    }

    static DataType sparkType(ColumnType type) {
        return switch (type.getBase()) {
            case IDENTIFIER -> DataTypes.LongType;
            case INTEGER -> DataTypes.IntegerType;
            case DECIMAL -> DataTypes.createDecimalType(type.getPrecision().orElseThrow(),
                    type.getScale().orElseThrow());
            case DATE -> DataTypes.DateType;
            case CHAR, VARCHAR, TIME -> DataTypes.StringType;
        };
    }

    private static Row row(Table table, List<String> values) {
        Column[] columns = table.getColumns();
        Object[] out = new Object[columns.length];
        for (int i = 0; i < columns.length; i++) {
            String v = values.get(i);
            out[i] = v == null ? null : switch (columns[i].getType().getBase()) {
                case IDENTIFIER -> Long.parseLong(v);
                case INTEGER -> Integer.parseInt(v);
                case DECIMAL -> new BigDecimal(v);
                case DATE -> LocalDate.parse(v);
                case CHAR, VARCHAR, TIME -> v;
            };
        }
        return RowFactory.create(out);
    }
}
