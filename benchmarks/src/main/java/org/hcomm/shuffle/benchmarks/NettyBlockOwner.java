package org.hcomm.shuffle.benchmarks;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.network.BlockDataManager;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.buffer.NioManagedBuffer;
import org.apache.spark.network.client.StreamCallbackWithID;
import org.apache.spark.network.netty.NettyBlockTransferService;
import org.apache.spark.network.shuffle.checksum.Cause;
import org.apache.spark.serializer.JavaSerializer;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.storage.StorageLevel;
import scala.Option;
import scala.reflect.ClassTag;

/**
 * The server process of {@link NettyFetchBenchmark}: a second JVM running Spark's own
 * {@link NettyBlockTransferService} (the executor's block server: {@code NettyBlockRpcServer} on a
 * {@code TransportServer}) whose {@link BlockDataManager} serves slices of one direct buffer of random data.
 *
 * <p>Block ids are shuffle block ids {@code shuffle_0_<size>_<slot>}: the map id carries the block size and the
 * reduce id the slot, so the block is the {@code size} bytes at {@code slot * size} — a {@link NioManagedBuffer}
 * over a slice of the buffer, as a zero-copy stand-in for a slice of a committed shuffle file.
 *
 * <pre>
 * args: &lt;regionBytes&gt;
 * (start)        -> READY &lt;port&gt; &lt;size&gt; &lt;crc32&gt;
 * (stdin closed) -> closes the service and exits 0
 * </pre>
 */
public final class NettyBlockOwner {
    /** What Spark needs opened on JDK 17 (the list Spark's launcher passes), for this process and the client fork. */
    static final List<String> JAVA_OPENS = List.of("--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED", "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
            "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED", "-Dio.netty.tryReflectionSetAccessible=true");

    private NettyBlockOwner() {}

    public static void main(String[] args) throws Exception {
        // stdout carries the line protocol; anything a library prints (Spark's log4j warns on stdout, e.g. that the
        // host name resolves to a loopback address) goes to stderr, so it cannot come before READY.
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        System.setOut(System.err);
        int size = Integer.parseInt(args[0]);
        ByteBuffer region = ByteBuffer.allocateDirect(size);
        long crc = ReadSourceOwner.fillRandom(region, System.nanoTime());
        NettyBlockTransferService service = service(2);
        service.init(new SliceServer(region));
        out.println("READY " + service.port() + " " + size + " " + crc);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            // no commands: stdin closing is the signal to exit
        }
        service.close();
        System.exit(0);
    }

    /** A block transfer service bound to 127.0.0.1 on an ephemeral port, configured like an executor's. */
    static NettyBlockTransferService service(int numCores) {
        SparkConf conf = new SparkConf(false).set("spark.app.id", "hcomm-netty-bench");
        return new NettyBlockTransferService(conf, new SecurityManager(conf, Option.empty(),
                org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE()),
                new SerializerManager(new JavaSerializer(conf), conf), "127.0.0.1", "127.0.0.1", 0, numCores, null);
    }

    /** The command line of a child JVM running this class on this JVM's class path. */
    static List<String> command(long regionBytes) {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.add("-Xmx512m");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        cmd.add("-Dorg.apache.logging.log4j.level=WARN"); // Spark brings log4j2; keep its INFO lines out
        cmd.addAll(JAVA_OPENS);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(NettyBlockOwner.class.getName());
        cmd.add(Long.toString(regionBytes));
        return cmd;
    }

    /** Serves {@code shuffle_<any>_<size>_<slot>} as a slice of the region; nothing else. */
    static final class SliceServer implements BlockDataManager {
        private final ByteBuffer region;

        SliceServer(ByteBuffer region) {
            this.region = region;
        }

        @Override
        public ManagedBuffer getLocalBlockData(BlockId blockId) {
            if (!(blockId instanceof ShuffleBlockId s)) {
                throw new IllegalArgumentException("not a shuffle block: " + blockId);
            }
            long size = s.mapId();
            long offset = size * s.reduceId();
            if (size <= 0 || offset + size > region.capacity()) {
                throw new IllegalArgumentException("block " + blockId + " outside the " + region.capacity()
                        + "-byte region");
            }
            ByteBuffer slice = region.duplicate();
            slice.limit((int) (offset + size)).position((int) offset);
            return new NioManagedBuffer(slice.slice());
        }

        @Override
        public Cause diagnoseShuffleBlockCorruption(BlockId blockId, long checksumByReader, String algorithm) {
            return Cause.UNKNOWN_ISSUE;
        }

        @Override
        public String[] getLocalDiskDirs() {
            return new String[0];
        }

        @Override
        public ManagedBuffer getHostLocalShuffleData(BlockId blockId, String[] dirs) {
            throw new UnsupportedOperationException("host-local reads are not part of the benchmark");
        }

        @Override
        public boolean putBlockData(BlockId blockId, ManagedBuffer data, StorageLevel level, ClassTag<?> classTag) {
            throw new UnsupportedOperationException("uploads are not part of the benchmark");
        }

        @Override
        public StreamCallbackWithID putBlockDataAsStream(BlockId blockId, StorageLevel level, ClassTag<?> classTag) {
            throw new UnsupportedOperationException("uploads are not part of the benchmark");
        }

        @Override
        public void releaseLock(BlockId blockId, Option<TaskContext> taskContext) {
            // nothing is locked
        }
    }
}
