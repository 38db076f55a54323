package org.hcomm.shuffle.benchmarks.ab;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * Join of two large RDDs on a long key: a dimension side with unique keys and an equally large fact side whose keys
 * are drawn uniformly from the dimension's, both with 40-byte values; {@code join} shuffles both sides. Each fact
 * record matches exactly one dimension record.
 */
final class Join implements Workload {
    static final int VALUE_BYTES = 40;
    static final long LEFT = 0x1ef7L;
    static final long RIGHT = 0x7164L;

    @Override
    public String name() {
        return "join";
    }

    @Override
    public String describe(long targetMb) {
        int parts = Workload.partitions(targetMb);
        long perSide = Generators.perPart(targetMb / 2, parts, VALUE_BYTES + 8) * parts;
        return String.format("join of %,d x %,d records (long key, 40-byte value), %d x %d", perSide, perSide,
                parts, parts);
    }

    @Override
    public Answer run(SparkSession spark, long targetMb) {
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int parts = Workload.partitions(targetMb);
        long perPart = Generators.perPart(targetMb / 2, parts, VALUE_BYTES + 8);
        long keys = perPart * parts;
        JavaPairRDD<Long, byte[]> left = Generators.parts(sc, 0, parts).flatMapToPair(part -> {
            long[] next = {(long) part * perPart};
            return Generators.lazily(perPart, Generators.random(LEFT, part),
                    rnd -> new Tuple2<>(next[0]++, Generators.bytes(rnd, VALUE_BYTES)));
        });
        JavaPairRDD<Long, byte[]> right = Generators.parts(sc, 0, parts).flatMapToPair(part ->
                Generators.lazily(perPart, Generators.random(RIGHT, part),
                        rnd -> new Tuple2<>(rnd.nextLong(keys), Generators.bytes(rnd, VALUE_BYTES))));
        List<long[]> summaries = left.join(right, parts).mapPartitions(it -> {
            long n = 0;
            long sum = 0;
            while (it.hasNext()) {
                Tuple2<Long, Tuple2<byte[], byte[]>> t = it.next();
                n++;
                sum += Hashing.combine(Hashing.combine(t._1(), Hashing.bytes(t._2()._1())),
                        Hashing.bytes(t._2()._2()));
            }
            return List.of(new long[] {n, sum}).iterator();
        }).collect();
        long records = 0;
        long checksum = 0;
        for (long[] s : summaries) {
            records += s[0];
            checksum += s[1];
        }
        if (records != keys) {
            throw new IllegalStateException("join: " + records + " joined records, expected " + keys);
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("partitions", parts);
        detail.put("recordsPerSide", keys);
        return new Answer(checksum, records, detail);
    }
}
