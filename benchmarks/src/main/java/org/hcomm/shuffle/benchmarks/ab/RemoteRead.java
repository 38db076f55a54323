package org.hcomm.shuffle.benchmarks.ab;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.HashPartitioner;
import org.apache.spark.Partition;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.rdd.ShuffledRDD;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.BlockManagerId;
import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Every block remote, one executor only serving: all map tasks run on the first executor (the owner), all reduce
 * tasks on the second (the reader), pinned with executor locality preferences and a long locality wait. While the
 * reduce stage runs the owner runs no task, so its process CPU (from {@link ProcessCpuPlugin}) is exactly what
 * serving the reader costs it: Netty's block server for builtin-network, soft HComm's TCP soft NIC for hcomm-tcp,
 * and — the point of one-sided reads — nothing for hcomm on shared memory (and for builtin, whose reader opens the
 * owner's files itself because both are on one host). Records of an int key and a 1,000-byte random value; the
 * reducer hashes every byte, little else, so the transport is a large part of the reduce stage.
 */
final class RemoteRead implements Workload {
    static final int VALUE_BYTES = 1000;
    static final long DATA_SET = 0x5e7eL;

    @Override
    public String name() {
        return "remote-read";
    }

    @Override
    public String describe(long targetMb) {
        int parts = Workload.partitions(targetMb);
        return String.format("partitionBy of %,d records (int key, 1,000-byte value), %d x %d; all maps on one executor, "
                + "all reduces on another (every block remote; the owner runs no task while it is read)",
                Generators.perPart(targetMb, parts, VALUE_BYTES + 4) * parts, parts, parts);
    }

    @Override
    public Map<String, String> sparkConf() {
        // Tasks wait for their preferred executor instead of spilling over to the other one.
        return Map.of("spark.locality.wait", "300s");
    }

    @Override
    public Answer run(SparkSession spark, long targetMb) {
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int parts = Workload.partitions(targetMb);
        long perPart = Generators.perPart(targetMb, parts, VALUE_BYTES + 4);
        List<BlockManagerId> executors = executors(sc);
        if (executors.size() < 2) {
            throw new IllegalStateException("remote-read needs two executors, found " + executors);
        }
        String owner = location(executors.get(0));
        // between hosts (the suite's multi-host mode) the reader is on another host than the owner
        String reader = location(executors.stream().filter(e -> !e.host().equals(executors.get(0).host()))
                .findFirst().orElse(executors.get(1)));

        List<Tuple2<Integer, Seq<String>>> placed = new ArrayList<>();
        for (int i = 0; i < parts; i++) {
            placed.add(new Tuple2<>(i, CollectionConverters.asScala(List.of(owner)).toList()));
        }
        RDD<Integer> partIds = sc.sc().makeRDD(CollectionConverters.asScala(placed).toList(), tag(Integer.class));
        JavaRDD<Tuple2<Integer, byte[]>> data = new JavaRDD<>(partIds, tag(Integer.class)).flatMap(part ->
                Generators.lazily(perPart, Generators.random(DATA_SET, part),
                        rnd -> new Tuple2<>(rnd.nextInt(), Generators.bytes(rnd, VALUE_BYTES))));
        RDD<Tuple2<Integer, byte[]>> shuffled = new PinnedShuffle(data.rdd(), new HashPartitioner(parts), reader);
        List<long[]> sums = new JavaRDD<>(shuffled, tag(Tuple2.class)).mapPartitions(it -> {
            long records = 0;
            long sum = 0;
            while (it.hasNext()) {
                Tuple2<?, ?> t = it.next();
                records++;
                sum += Hashing.combine((Integer) t._1(), Hashing.bytes((byte[]) t._2()));
            }
            return List.of(new long[] {records, sum}).iterator();
        }).collect();
        long records = 0;
        long checksum = 0;
        for (long[] s : sums) {
            records += s[0];
            checksum += s[1];
        }
        if (records != perPart * parts) {
            throw new IllegalStateException("remote-read: " + records + " records read, " + perPart * parts + " written");
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("partitions", parts);
        detail.put("owner", owner);
        detail.put("reader", reader);
        return new Answer(checksum, records, detail);
    }

    /** Map stages must have run on one executor and the reduce stage on another, else the owner CPU means nothing. */
    @Override
    public void checkPlacement(List<StageMetricsListener.Stage> stages) {
        Map<String, Long> maps = new TreeMap<>();
        Map<String, Long> reduces = new TreeMap<>();
        for (StageMetricsListener.Stage s : stages) {
            s.byExecutor.forEach((id, v) -> (s.readsShuffle() ? reduces : maps).merge(id, v[0], Long::sum));
        }
        if (maps.size() != 1 || reduces.size() != 1 || maps.keySet().equals(reduces.keySet())) {
            throw new IllegalStateException("remote-read: tasks not where pinned (map tasks by executor " + maps
                    + ", reduce tasks by executor " + reduces + ")");
        }
    }

    /** The executors' block managers (not the driver's), by executor id. */
    static List<BlockManagerId> executors(JavaSparkContext sc) {
        List<BlockManagerId> out = new ArrayList<>();
        for (BlockManagerId id : CollectionConverters.asJava(
                sc.sc().env().blockManager().master().getMemoryStatus()).keySet()) {
            if (!id.isDriver()) {
                out.add(id);
            }
        }
        out.sort((a, b) -> a.executorId().compareTo(b.executorId()));
        return out;
    }

    /** Spark's executor-level location string (a TaskLocation of one executor). */
    static String location(BlockManagerId id) {
        return "executor_" + id.host() + "_" + id.executorId();
    }

    @SuppressWarnings("unchecked")
    static <T> ClassTag<T> tag(Class<?> c) {
        return (ClassTag<T>) ClassTag$.MODULE$.apply(c);
    }

    /** Spark's plain shuffle (no aggregation, no ordering) whose reduce tasks all prefer one executor. */
    static final class PinnedShuffle extends ShuffledRDD<Integer, byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final String location;

        PinnedShuffle(RDD<Tuple2<Integer, byte[]>> prev, Partitioner partitioner, String location) {
            super(prev, partitioner, tag(Integer.class), tag(byte[].class), tag(byte[].class));
            this.location = location;
        }

        @Override
        public scala.collection.immutable.Seq<String> getPreferredLocations(Partition split) {
            return CollectionConverters.asScala(List.of(location)).toList();
        }
    }
}
