package org.hcomm.shuffle.benchmarks;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.hcomm.bridge.CommThread;
import org.hcomm.bridge.Engine;
import org.hcomm.bridge.SoftCounters;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.endpoint.ChannelSpec;
import org.hcomm.bridge.endpoint.Endpoint;
import org.hcomm.bridge.endpoint.ImportedMemory;
import org.hcomm.bridge.endpoint.RegisteredMemory;
import org.hcomm.bridge.read.ReadStrategy;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Read throughput between two processes through the facade's {@code ReadStrategy.onThread(thread, DRAIN)}, against
 * an in-process memcpy of the same sizes.
 *
 * <ul>
 *   <li>{@link #hcommReadOnThread}: this JVM reads from a {@link ReadSourceOwner} child JVM (started in the trial
 *       set-up, one per fork) that owns a {@value #REGION_MIB} MiB registered region of random data and keeps the
 *       SERVER end of the channel. {@code path=shm}: the reader copies from the owner's memfd; {@code path=tcp}:
 *       {@code force_tcp=1} in both processes, the owner's soft NIC serves the reads.</li>
 *   <li>{@link #memcpy}: {@code ByteBuffer.put(ByteBuffer)} between two direct buffers over two regions registered
 *       in this process (the JVM copies direct-to-direct with a memcpy).</li>
 * </ul>
 * {@code mode=single}: one read of {@code size} bytes, then complete; successive invocations walk through the region
 * so small reads do not stay in the CPU caches. {@code mode=batched}: {@value #REGION_MIB} MiB in reads of
 * {@code size} bytes, all in one batch, then one complete. Source and destination offsets are equal, so the
 * destination stays a copy of the source; the trial checks its CRC32 after set-up and again at tear-down.
 *
 * <p>Throughput: the primary score is invocations/s; the {@code bytes} secondary metric ({@link Bytes}) is bytes/s.
 * {@link ReadThroughputReport} turns both into a Markdown table. Forks, iterations and times are the usual JMH
 * options ({@code -f -wi -w -i -r}); the defaults below keep a full run to a few minutes.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class ReadThroughputBenchmark {
    static final int REGION_MIB = 64;
    static final int REGION = REGION_MIB << 20;

    /** Read size and whether one invocation is one read or a batch covering the whole region. */
    @State(Scope.Thread)
    public static class Shape {
        @Param({"4096", "65536", "1048576", "16777216", "67108864"})
        public int size;

        @Param({"single", "batched"})
        public String mode;

        boolean batched;
        int readsPerInvocation;
        long bytesPerInvocation;
        private int slots;
        private int cursor;

        @Setup(Level.Trial)
        public void setUp() {
            if (size <= 0 || size > REGION || REGION % size != 0) {
                throw new IllegalArgumentException("size must divide " + REGION + ", got " + size);
            }
            batched = switch (mode) {
                case "single" -> false;
                case "batched" -> true;
                default -> throw new IllegalArgumentException("mode must be single or batched, got " + mode);
            };
            slots = REGION / size;
            readsPerInvocation = batched ? slots : 1;
            bytesPerInvocation = (long) readsPerInvocation * size;
        }

        /** single mode: the next offset of a walk through the region. */
        int nextOffset() {
            int off = cursor * size;
            cursor = cursor + 1 == slots ? 0 : cursor + 1;
            return off;
        }
    }

    /** Bytes moved; JMH reports the counter per second, i.e. bytes/s, as secondary metric {@code bytes}. */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    /** This JVM's reader end, connected to a {@link ReadSourceOwner} child. */
    @State(Scope.Thread)
    public static class Remote {
        private static final AtomicInteger NAMES = new AtomicInteger();

        @Param({"shm", "tcp"})
        public String path;

        private OwnerProcess owner;
        private Endpoint endpoint;
        private RegisteredMemory dst;
        private ChannelSet channels;
        private ImportedMemory src;
        private CommThread thread;
        ReadStrategy reads;
        ChannelSet.Channel channel;
        long dstAddress;
        long srcAddress;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            if (!path.equals("shm") && !path.equals("tcp")) {
                throw new IllegalArgumentException("path must be shm or tcp, got " + path);
            }
            SoftHcomm.configure("force_tcp", path.equals("tcp") ? "1" : "0"); // before the channel is created
            try {
                owner = OwnerProcess.start(REGION, path);
                endpoint = Endpoint.create(InetAddress.getByName("127.0.0.1"));
                dst = endpoint.allocate("bench-dst", REGION);
                touch(dst.buffer());
                String name = "bench-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
                owner.connect(endpoint.descriptor(), name);
                channels = endpoint.createChannels(List.of(ChannelSpec.client(owner.endpointDescriptor, name,
                        owner.listenPort)));
                channels.awaitReady(Duration.ofSeconds(60));
                String ownerPath = owner.awaitChannel();
                channel = channels.channel(0);
                if (!path.equals(channel.dataPath()) || !path.equals(ownerPath)) {
                    throw new IllegalStateException("wanted path " + path + ", reader has " + channel.dataPath()
                            + ", owner has " + ownerPath);
                }
                src = endpoint.importMemory(owner.memoryDescriptor);
                thread = CommThread.allocate(Engine.CPU, 0);
                reads = ReadStrategy.onThread(thread, ReadStrategy.Completion.DRAIN);
                dstAddress = dst.address();
                srcAddress = src.remoteAddress();
                // one full read: faults in the peer mapping and proves the data path
                reads.submit(channel, dstAddress, srcAddress, REGION);
                reads.complete();
                verify("after set-up");
            } catch (Exception | Error e) {
                try {
                    tearDown();
                } catch (Exception | Error suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }

        private void verify(String when) {
            long crc = ReadSourceOwner.crc32(dst.buffer(), 0, REGION);
            if (crc != owner.crc32) {
                throw new IllegalStateException("destination CRC32 " + crc + " != owner's " + owner.crc32 + " "
                        + when + " (path " + path + ")");
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException, InterruptedException {
            try {
                if (reads != null && dst != null && owner != null) {
                    verify("after the run");
                }
            } finally {
                closeAll();
            }
        }

        private void closeAll() throws IOException, InterruptedException {
            try {
                if (src != null) {
                    src.close();
                }
                if (channels != null) {
                    channels.close();
                }
                if (thread != null) {
                    thread.close();
                }
                if (dst != null) {
                    dst.close();
                }
                if (endpoint != null) {
                    endpoint.close();
                }
            } finally {
                reads = null;
                if (owner != null) {
                    owner.close();
                    owner = null;
                }
                SoftHcomm.configure("force_tcp", "0");
            }
            SoftCounters c = SoftHcomm.counters();
            if (!c.noLiveObjects()) {
                System.err.println("WARNING: live HComm objects after the trial: " + c);
            }
        }
    }

    /** Two regions registered in this process, for the memcpy baseline. */
    @State(Scope.Thread)
    public static class Local {
        private Endpoint endpoint;
        private RegisteredMemory from;
        private RegisteredMemory to;
        ByteBuffer src;
        ByteBuffer dst;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            endpoint = Endpoint.create(InetAddress.getByName("127.0.0.1"));
            from = endpoint.allocate("memcpy-src", REGION);
            to = endpoint.allocate("memcpy-dst", REGION);
            ReadSourceOwner.fillRandom(from.buffer(), System.nanoTime());
            touch(to.buffer());
            src = from.buffer();
            dst = to.buffer();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            src = null;
            dst = null;
            to.close();
            from.close();
            endpoint.close();
        }
    }

    @Benchmark
    public void hcommReadOnThread(Remote r, Shape s, Bytes b) {
        ReadStrategy reads = r.reads;
        ChannelSet.Channel ch = r.channel;
        int size = s.size;
        if (s.batched) {
            long d = r.dstAddress;
            long from = r.srcAddress;
            for (int i = 0, n = s.readsPerInvocation; i < n; i++) {
                long off = (long) i * size;
                reads.submit(ch, d + off, from + off, size);
            }
        } else {
            long off = s.nextOffset();
            reads.submit(ch, r.dstAddress + off, r.srcAddress + off, size);
        }
        reads.complete();
        b.bytes += s.bytesPerInvocation;
    }

    @Benchmark
    public void memcpy(Local l, Shape s, Bytes b) {
        ByteBuffer src = l.src;
        ByteBuffer dst = l.dst;
        int size = s.size;
        if (s.batched) {
            for (int i = 0, n = s.readsPerInvocation; i < n; i++) {
                copy(src, dst, i * size, size);
            }
        } else {
            copy(src, dst, s.nextOffset(), size);
        }
        b.bytes += s.bytesPerInvocation;
    }

    private static void copy(ByteBuffer src, ByteBuffer dst, int offset, int length) {
        src.limit(offset + length).position(offset);
        dst.position(offset);
        dst.put(src); // direct to direct: one Unsafe.copyMemory (memcpy)
    }

    /** Writes every page so page faults are not part of the measurement. */
    static void touch(ByteBuffer b) {
        for (int p = 0; p < b.capacity(); p += 4096) {
            b.put(p, (byte) 0);
        }
    }
}
