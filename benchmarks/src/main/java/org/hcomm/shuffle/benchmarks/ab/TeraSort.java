package org.hcomm.shuffle.benchmarks.ab;

import java.io.Serializable;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * TeraSort-style: 100-byte records (10-byte random key, 90-byte random value) sorted by key with
 * {@code sortByKey} (a sampling job for the range partitioner, then the sort). The answer is validated as sorted
 * (within every partition and across partition boundaries) and summarised by an order-independent checksum.
 */
final class TeraSort implements Workload {
    static final int KEY_BYTES = 10;
    static final int VALUE_BYTES = 90;
    static final long DATA_SET = 0x7e7a5027L;

    @Override
    public String name() {
        return "terasort";
    }

    @Override
    public String describe(long targetMb) {
        int parts = Workload.partitions(targetMb);
        return String.format("sortByKey of %,d records of 100 bytes (10-byte key), %d maps x %d reduces",
                Generators.perPart(targetMb, parts, 100) * parts, parts, parts);
    }

    /** Unsigned lexicographic order of byte keys, as TeraSort defines it. */
    static final class KeyOrder implements Comparator<byte[]>, Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public int compare(byte[] a, byte[] b) {
            return java.util.Arrays.compareUnsigned(a, b);
        }
    }

    @Override
    public Answer run(SparkSession spark, long targetMb) {
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int parts = Workload.partitions(targetMb);
        long perPart = Generators.perPart(targetMb, parts, KEY_BYTES + VALUE_BYTES);
        JavaPairRDD<byte[], byte[]> data = Generators.parts(sc, 0, parts).flatMapToPair(part ->
                Generators.lazily(perPart, Generators.random(DATA_SET, part),
                        rnd -> new Tuple2<>(Generators.bytes(rnd, KEY_BYTES), Generators.bytes(rnd, VALUE_BYTES))));
        // Per output partition: [index, records, checksum, sorted?] and its first and last key.
        List<Tuple2<long[], byte[][]>> summaries = data.sortByKey(new KeyOrder(), true, parts)
                .mapPartitionsWithIndex((index, it) -> summarise(index, it), false).collect();
        KeyOrder order = new KeyOrder();
        long checksum = 0;
        long records = 0;
        byte[] previousLast = null;
        for (Tuple2<long[], byte[][]> s : summaries.stream().sorted(Comparator.comparingLong(t -> t._1()[0])).toList()) {
            if (s._1()[3] != 1) {
                throw new IllegalStateException("terasort: partition " + s._1()[0] + " is not sorted");
            }
            records += s._1()[1];
            checksum += s._1()[2];
            byte[] first = s._2()[0];
            if (first != null) {
                if (previousLast != null && order.compare(previousLast, first) > 0) {
                    throw new IllegalStateException("terasort: partition " + s._1()[0] + " starts below its predecessor");
                }
                previousLast = s._2()[1];
            }
        }
        if (records != perPart * parts) {
            throw new IllegalStateException("terasort: " + records + " records out, " + perPart * parts + " in");
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("partitions", parts);
        detail.put("validatedSorted", true);
        return new Answer(checksum, records, detail);
    }

    static Iterator<Tuple2<long[], byte[][]>> summarise(int index, Iterator<Tuple2<byte[], byte[]>> it) {
        KeyOrder order = new KeyOrder();
        long n = 0;
        long sum = 0;
        boolean sorted = true;
        byte[] first = null;
        byte[] last = null;
        while (it.hasNext()) {
            Tuple2<byte[], byte[]> t = it.next();
            if (first == null) {
                first = t._1();
            } else if (order.compare(last, t._1()) > 0) {
                sorted = false;
            }
            last = t._1();
            n++;
            sum += Hashing.combine(Hashing.bytes(t._1()), Hashing.bytes(t._2()));
        }
        return List.of(new Tuple2<>(new long[] {index, n, sum, sorted ? 1 : 0}, new byte[][] {first, last}))
                .iterator();
    }
}
