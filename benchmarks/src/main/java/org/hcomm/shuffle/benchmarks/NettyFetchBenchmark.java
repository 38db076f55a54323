package org.hcomm.shuffle.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.netty.NettyBlockTransferService;
import org.apache.spark.network.shuffle.BlockFetchingListener;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Spark's own block fetch between two processes, for the same sizes and modes as {@link ReadThroughputBenchmark}
 * (it uses that class's {@code Shape} and {@code Bytes} states, so one JMH run puts both in one table).
 *
 * <p>The server is a {@link NettyBlockOwner} child JVM (one per fork): Spark's {@link NettyBlockTransferService}
 * serving {@code NioManagedBuffer} slices of a {@value ReadThroughputBenchmark#REGION_MIB} MiB direct buffer of
 * random data, bound to 127.0.0.1. A child JVM rather than a second service in this JVM, because the hcomm numbers
 * are between two processes too, and a same-JVM server would share this JVM's Netty allocator, GC and JIT.
 *
 * <p>This JVM is the reducer: {@link NettyBlockTransferService#fetchBlocks} with a {@link BlockFetchingListener}
 * (the call Spark's {@code ShuffleBlockFetcherIterator} makes), shuffle block ids, Spark's default transport
 * settings (no auth, no encryption, no retries involved). {@code mode=single}: one fetch of one block of
 * {@code size} bytes, walking the region; {@code mode=batched}: one {@code fetchBlocks} of the whole region as
 * blocks of {@code size} bytes (one FetchShuffleBlocks request, then one chunk fetch per block, pipelined), waiting
 * for every callback. The bytes land in Netty's (pooled, direct) buffers, which is where Spark's reducer
 * deserialises from; the benchmark does not copy them again. Set-up checks the CRC32 of the whole region fetched
 * in 1 MiB blocks against the server's.
 *
 * <p>Spark is not in the shaded {@code benchmarks.jar} (it is provided scope), so this benchmark runs from the Maven
 * class path: {@code mvn -o -B -Pread-bench -pl benchmarks -am -DskipTests verify} (see {@link ReadThroughputReport}).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.apache.logging.log4j.level=WARN",
    "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED", "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED", "-Dio.netty.tryReflectionSetAccessible=true"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class NettyFetchBenchmark {
    private static final long WAIT_SECONDS = 120;

    /** The reducer's transfer service, connected to a {@link NettyBlockOwner} child. */
    @State(Scope.Thread)
    public static class Client {
        private Process owner;
        private NettyBlockTransferService service;
        int port;
        long crc32;
        String[] all;
        private int allSize = -1;

        @Setup(Level.Trial)
        public void setUp(ReadThroughputBenchmark.Shape shape) throws Exception {
            try {
                ProcessBuilder pb = new ProcessBuilder(NettyBlockOwner.command(ReadThroughputBenchmark.REGION));
                pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1"); // the service binds there anyway
                pb.redirectError(ProcessBuilder.Redirect.INHERIT);
                owner = pb.start();
                BufferedReader r = new BufferedReader(new InputStreamReader(owner.getInputStream(),
                        StandardCharsets.UTF_8));
                String line = r.readLine();
                if (line == null || !line.startsWith("READY ")) {
                    throw new IOException("Netty block owner answered '" + line + "'");
                }
                String[] w = line.split(" ");
                port = Integer.parseInt(w[1]);
                crc32 = Long.parseLong(w[3]);
                service = NettyBlockOwner.service(2);
                service.init(new NettyBlockOwner.SliceServer(ByteBuffer.allocateDirect(1)));
                verify(shape);
                all = ids(shape.size);
            } catch (Exception | Error e) {
                try {
                    tearDown();
                } catch (Exception | Error suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }

        /** Fetches the whole region in 1 MiB blocks and compares its CRC32 with the owner's. */
        private void verify(ReadThroughputBenchmark.Shape shape) throws Exception {
            int block = 1 << 20;
            String[] ids = ids(block);
            ByteBuffer copy = ByteBuffer.allocateDirect(ReadThroughputBenchmark.REGION);
            Waiter w = new Waiter(ids.length) {
                @Override
                public void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
                    int slot = Integer.parseInt(blockId.substring(blockId.lastIndexOf('_') + 1));
                    try {
                        ByteBuffer b = data.nioByteBuffer();
                        ByteBuffer dst = copy.duplicate();
                        dst.position(slot * block);
                        dst.put(b);
                    } catch (IOException e) {
                        onBlockFetchFailure(blockId, e);
                        return;
                    }
                    super.onBlockFetchSuccess(blockId, data);
                }
            };
            service.fetchBlocks("127.0.0.1", port, "owner", ids, w, null);
            w.await();
            CRC32 crc = new CRC32();
            crc.update(copy.duplicate().clear());
            if (crc.getValue() != crc32) {
                throw new IllegalStateException("fetched CRC32 " + crc.getValue() + " != owner's " + crc32);
            }
        }

        String[] ids(int size) {
            int n = ReadThroughputBenchmark.REGION / size;
            String[] ids = new String[n];
            for (int i = 0; i < n; i++) {
                ids[i] = "shuffle_0_" + size + "_" + i;
            }
            return ids;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            try {
                if (service != null) {
                    service.close();
                    service = null;
                }
            } finally {
                if (owner != null) {
                    owner.getOutputStream().close();
                    if (!owner.waitFor(30, TimeUnit.SECONDS)) {
                        owner.destroyForcibly();
                    }
                    owner = null;
                }
            }
        }
    }

    /** Counts callbacks of one fetch; fails with the first failure. */
    static class Waiter implements BlockFetchingListener {
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private int left;
        long bytes;

        Waiter(int blocks) {
            this.left = blocks;
        }

        @Override
        public synchronized void onBlockFetchSuccess(String blockId, ManagedBuffer data) {
            bytes += data.size();
            if (--left == 0) {
                notifyAll();
            }
        }

        @Override
        public synchronized void onBlockFetchFailure(String blockId, Throwable e) {
            failure.compareAndSet(null, e);
            left = 0;
            notifyAll();
        }

        synchronized void await() throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (left > 0) {
                long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (ms <= 0) {
                    throw new IllegalStateException(left + " blocks not fetched within " + WAIT_SECONDS + " s");
                }
                wait(ms);
            }
            Throwable t = failure.get();
            if (t != null) {
                throw new IllegalStateException("fetch failed", t);
            }
        }
    }

    @Benchmark
    public void nettyFetch(Client c, ReadThroughputBenchmark.Shape s, ReadThroughputBenchmark.Bytes b)
            throws Exception {
        String[] ids = s.batched ? c.all : new String[] {c.all[s.nextOffset() / s.size]};
        Waiter w = new Waiter(ids.length);
        c.service.fetchBlocks("127.0.0.1", c.port, "owner", ids, w, null);
        w.await();
        if (w.bytes != s.bytesPerInvocation) {
            throw new IllegalStateException("fetched " + w.bytes + " bytes, expected " + s.bytesPerInvocation);
        }
        b.bytes += s.bytesPerInvocation;
    }
}
