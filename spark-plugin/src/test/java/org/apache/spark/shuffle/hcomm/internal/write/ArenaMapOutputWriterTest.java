package org.apache.spark.shuffle.hcomm.internal.write;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.ByteBuf;
import io.netty.util.IllegalReferenceCountException;
import org.apache.spark.SparkConf;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;

import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.ShufflePartitionWriter;
import org.apache.spark.shuffle.api.WritableByteChannelWrapper;
import org.apache.spark.shuffle.api.metadata.MapOutputCommitMessage;
import org.apache.spark.shuffle.hcomm.TestPluginContext;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.util.collection.OpenHashSet;
import org.hcomm.bridge.transport.HcommTransport;
import org.hcomm.bridge.transport.TransportOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.Product2;

/**
 * Map outputs written straight into a real send arena (soft HComm's registered memory): Spark's index layout, growth
 * in place and by moving, the overflow into Spark's writer, abort; served to Spark's readers from there (streams and
 * Netty buffers over leased views) and copied to Spark's files when the arena retires. Spark's file writer is a
 * recorder here (the Spark suites run the real one).
 */
class ArenaMapOutputWriterTest {
    private HcommTransport transport;
    private MapOutputPublisher publisher;
    private final ShuffleMetrics metrics = ShuffleMetrics.forExecutor();
    private final Random random = new Random(7);

    private MapOutputPublisher open(long arenaSize) throws Exception {
        transport = HcommTransport.open(new TransportOptions(InetAddress.getByName("127.0.0.1"), false, null,
                Duration.ofSeconds(10), Duration.ofSeconds(10)));
        publisher = new MapOutputPublisher(transport, arenaSize, 4096, metrics,
                new DriverClient(new TestPluginContext("1", Map.of()), metrics), true);
        return publisher;
    }

    @AfterEach
    void close() {
        if (publisher != null) {
            publisher.close();
        }
        if (transport != null) {
            transport.close();
            assertTrue(transport.liveObjects().isEmpty(), () -> "native objects left: " + transport.liveObjects());
        }
    }

    private ArenaMapOutputWriter writer(long mapId, int partitions, Recorder spark) {
        long index = publisher.arena().allocate(8L * (partitions + 1));
        return new ArenaMapOutputWriter(publisher, 0, mapId, partitions, index, () -> spark, (s, m, c) -> { });
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static void write(ShuffleMapOutputWriter w, int partition, byte[] data) throws IOException {
        try (OutputStream out = w.getPartitionWriter(partition).openStream()) {
            for (int at = 0; at < data.length; at += 10_000) { // as Spark's buffered streams do: pieces
                out.write(data, at, Math.min(10_000, data.length - at));
            }
        }
    }

    private byte[] arenaBlock(long mapId, int start, int end) {
        Publication output = publisher.inArena(0, mapId);
        assertNotNull(output, "map " + mapId + " is in the arena");
        try (SendArena.Lease lease = publisher.leaseBlocks(output, start, end)) {
            assertNotNull(lease, "map " + mapId + " is leased");
            byte[] b = new byte[lease.view().remaining()];
            lease.view().get(b);
            return b;
        }
    }

    /** Commits map {@code mapId} with partitions 0 and 1 of the sizes given (the rest empty); returns their bytes. */
    private byte[][] committed(long mapId, int partitions, int first, int second, long[] checksums) throws IOException {
        ArenaMapOutputWriter w = writer(mapId, partitions, new Recorder());
        byte[][] data = {bytes(first), bytes(second)};
        write(w, 0, data[0]);
        write(w, 1, data[1]);
        w.commitAllPartitions(checksums);
        return data;
    }

    @Test
    void smallOutputStaysInTheArenaInSparksIndexLayout() throws Exception {
        open(16 << 20);
        Recorder spark = new Recorder();
        ArenaMapOutputWriter w = writer(1, 4, spark);
        byte[] p0 = bytes(5000);
        byte[] p2 = bytes(70_000);
        write(w, 0, p0);
        write(w, 2, p2); // partition 1 skipped (empty), 3 never opened
        MapOutputCommitMessage m = w.commitAllPartitions(new long[0]);
        assertArrayEquals(new long[] {5000, 0, 70_000, 0}, m.getPartitionLengths());
        assertArrayEquals(p0, arenaBlock(1, 0, 1));
        assertArrayEquals(p2, arenaBlock(1, 1, 3));
        assertEquals(0, spark.calls.size(), "Spark's writer never used");
        assertEquals(1, metrics.outputsWrittenToArena.getCount());
        assertEquals(ArenaAllocator.aligned(8 * 5) + ArenaAllocator.aligned(75_000), publisher.arena().used(),
                "trimmed to what was written");
    }

    @Test
    void emptyWritesBeforeAndBetweenBytesWriteNothing() throws Exception {
        open(16 << 20);
        ArenaMapOutputWriter w = writer(3, 2, new Recorder());
        byte[] p1 = bytes(3000);
        try (OutputStream out = w.getPartitionWriter(0).openStream()) {
            out.write(new byte[0], 0, 0); // a flush of an empty buffer, before the output has an extent
        }
        try (OutputStream out = w.getPartitionWriter(1).openStream()) {
            out.write(p1, 0, 1000);
            out.write(p1, 1000, 0);
            out.write(p1, 1000, 2000);
        }
        assertArrayEquals(new long[] {0, 3000}, w.commitAllPartitions(new long[0]).getPartitionLengths());
        assertArrayEquals(p1, arenaBlock(3, 1, 2));
    }

    @Test
    void indexIsSparksBigEndianOffsets() throws Exception {
        open(16 << 20);
        ArenaMapOutputWriter w = writer(2, 3, new Recorder());
        write(w, 0, bytes(10));
        write(w, 1, bytes(300));
        write(w, 2, bytes(7));
        w.commitAllPartitions(new long[0]);
        // the only index extent is the first allocation: offset 0
        ByteBuffer index = publisher.arena().view(0, 32).order(ByteOrder.BIG_ENDIAN);
        assertArrayEquals(new long[] {0, 10, 310, 317},
                new long[] {index.getLong(), index.getLong(), index.getLong(), index.getLong()});
    }

    @Test
    void growsInPlaceThenMovesWithBytesIntact() throws Exception {
        open(32 << 20); // first extent 2 MiB
        ArenaMapOutputWriter a = writer(1, 2, new Recorder());
        byte[] big = bytes(5 << 20);
        write(a, 0, big); // grows in place: nothing after it
        assertEquals(0, metrics.arenaRelocations.getCount());
        ArenaMapOutputWriter b = writer(2, 1, new Recorder());
        write(b, 0, bytes(1000)); // b's extent right after a's
        byte[] more = bytes(8 << 20);
        write(a, 1, more); // a cannot grow in place any more: it moves
        assertTrue(metrics.arenaRelocations.getCount() >= 1, "moved");
        a.commitAllPartitions(new long[0]);
        b.commitAllPartitions(new long[0]);
        assertArrayEquals(big, arenaBlock(1, 0, 1));
        assertArrayEquals(more, arenaBlock(1, 1, 2));
    }

    @Test
    void overflowReplaysEarlierPartitionsInOrderAndContinuesInSparksWriter() throws Exception {
        open(4 << 20); // data may use 3.5 MiB
        Recorder spark = new Recorder();
        ArenaMapOutputWriter w = writer(1, 5, spark);
        byte[] p0 = bytes(1 << 20);
        byte[] p2 = bytes(2 << 20);
        byte[] p3 = bytes(2 << 20);
        byte[] p4 = bytes(1000);
        write(w, 0, p0);
        write(w, 2, p2);
        write(w, 3, p3); // over the room: overflow in the middle of partition 3
        write(w, 4, p4);
        long[] checksums = {1, 2, 3, 4, 5};
        w.commitAllPartitions(checksums);
        assertEquals(List.of(0, 2, 3, 4), spark.partitions, "non-empty partitions, in order, once each");
        assertArrayEquals(p0, spark.data.get(0));
        assertArrayEquals(p2, spark.data.get(1));
        assertArrayEquals(p3, spark.data.get(2), "the head written into the arena, then the tail");
        assertArrayEquals(p4, spark.data.get(3));
        assertArrayEquals(checksums, spark.committed);
        assertEquals(1, metrics.outputsOverflowed.getCount());
        assertEquals(0, metrics.outputsWrittenToArena.getCount());
        assertEquals(0, publisher.arena().used(), "nothing of it left in the arena");
        assertNull(publisher.inArena(0, 1), "not an arena output");
    }

    @Test
    void singleSpillIsReadAtEachPartitionsPositionIntoTheArenaOrSparksWriter(@TempDir Path dir) throws Exception {
        open(4 << 20); // data may use 3.5 MiB
        byte[] p0 = bytes(1 << 20);
        byte[] p2 = bytes(2 << 20);
        byte[] p3 = bytes(1 << 20);
        Path spill = dir.resolve("spill");
        try (OutputStream out = Files.newOutputStream(spill)) {
            out.write(p0);
            out.write(p2);
            out.write(p3);
        }
        Recorder spark = new Recorder();
        ArenaMapOutputWriter w = writer(1, 4, spark);
        try (FileChannel in = FileChannel.open(spill)) {
            w.readPartition(0, in, 0, p0.length);
            w.readPartition(2, in, p0.length, p2.length); // partition 1 is empty
            assertEquals(0, spark.calls.size(), "both read into the arena");
            w.readPartition(3, in, p0.length + p2.length, p3.length); // no room: Spark's writer, through its stream
        }
        w.commitAllPartitions(new long[0]);
        assertEquals(List.of(0, 2, 3), spark.partitions);
        assertArrayEquals(p0, spark.data.get(0));
        assertArrayEquals(p2, spark.data.get(1));
        assertArrayEquals(p3, spark.data.get(2));
    }

    @Test
    void aViewHeldPastCloseReadsItsBytesAndTheLastLeaseUnmaps() throws Exception {
        open(1 << 20);
        long regions = transport.liveObjects().regions();
        SendArena arena = new SendArena(transport, 1 << 20, "1", 100);
        assertEquals(regions + 1, transport.liveObjects().regions());
        byte[] data = bytes(4096);
        long offset = arena.allocateData(data.length);
        arena.view(offset, data.length).put(data);
        SendArena.Lease view = arena.lease(new SendArena.Extent(offset, data.length), 0, data.length);
        SendArena.Lease writer = arena.hold();
        AtomicInteger after = new AtomicInteger();
        arena.close(after::incrementAndGet); // waits 100 ms for both, then leaves the unmap to the last
        assertNull(arena.hold(), "nothing is leased once closing");
        assertEquals(regions + 1, transport.liveObjects().regions(), "still mapped");
        byte[] read = new byte[data.length];
        view.view().get(read);
        assertArrayEquals(data, read, "a view held past close reads its bytes");
        view.close();
        assertEquals(regions + 1, transport.liveObjects().regions(), "mapped while a writer holds it");
        assertEquals(0, after.get());
        writer.close();
        writer.close();
        assertEquals(regions, transport.liveObjects().regions(), "unmapped by the last lease's close");
        assertEquals(1, after.get(), "then what follows the unmap ran, once");
    }

    @Test
    void aWriterMadeAsTheArenaClosesWritesSparksFile() throws Exception {
        open(16 << 20);
        Recorder spark = new Recorder();
        long index = publisher.arena().allocate(8 * 3);
        publisher.close(); // no lease: unmapped at once
        ArenaMapOutputWriter w = new ArenaMapOutputWriter(publisher, 0, 1, 2, index, () -> spark, (s, m, c) -> { });
        byte[] p0 = bytes(1000);
        write(w, 0, p0);
        w.commitAllPartitions(new long[0]);
        assertEquals(List.of(0), spark.partitions);
        assertArrayEquals(p0, spark.data.get(0));
        assertEquals(List.of("partition 0", "commit"), spark.calls);
    }

    @Test
    void abortFreesEverything() throws Exception {
        open(16 << 20);
        ArenaMapOutputWriter w = writer(1, 2, new Recorder());
        write(w, 0, bytes(3 << 20));
        w.abort(new RuntimeException("task killed"));
        assertEquals(0, publisher.arena().used());
        assertNull(publisher.inArena(0, 1));
    }

    @Test
    void emptyOutputHasOnlyAnIndex() throws Exception {
        open(16 << 20);
        ArenaMapOutputWriter w = writer(1, 3, new Recorder());
        assertArrayEquals(new long[3], w.commitAllPartitions(new long[0]).getPartitionLengths());
        assertEquals(ArenaAllocator.aligned(32), publisher.arena().used());
        assertEquals(0, arenaBlock(1, 0, 3).length);
    }

    @Test
    void nettyGetsTheArenaBytesUncopiedAndItsReleaseGivesThemBack() throws Exception {
        open(16 << 20);
        byte[] p1 = committed(1, 3, 4000, 6000, new long[0])[1];
        ArenaBlockResolver resolver = new ArenaBlockResolver(new SparkConf(false), () -> List.of(publisher));
        ManagedBuffer block = resolver.getBlockData(new ShuffleBlockId(0, 1, 1), Option.empty());
        assertEquals(6000, block.size());
        ByteBuf netty = (ByteBuf) block.convertToNetty();
        byte[] sent = new byte[netty.readableBytes()];
        netty.getBytes(0, sent);
        assertArrayEquals(p1, sent);
        publisher.arena().view(publisher.inArena(0, 1).dataOffset + 4000, 1).put(0, (byte) (p1[0] + 1));
        assertEquals((byte) (p1[0] + 1), netty.getByte(0), "a view of the arena, not a copy");
        try (InputStream in = resolver.getBlockData(new ShuffleBlockBatchId(0, 1, 0, 3), Option.empty())
                .createInputStream()) {
            assertEquals(10_000, in.readAllBytes().length);
        }
        publisher.release(0);
        assertEquals(ArenaAllocator.aligned(10_000), publisher.arena().used(), "the data stays while Netty holds it");
        assertTrue(netty.release());
        assertEquals(0, publisher.arena().used(), "freed once Netty released it");
        assertThrows(IllegalReferenceCountException.class, netty::release);
        assertEquals(0, publisher.arena().used());
    }

    @Test
    void aMapTaskWritesIntoThePublisherItsWriterTookNotTheCurrentOne() throws Exception {
        open(16 << 20);
        MapOutputPublisher current = new MapOutputPublisher(transport, 1 << 20, 4096, metrics,
                new DriverClient(new TestPluginContext("1", Map.of()), metrics), true);
        try {
            ArenaBlockResolver resolver = new ArenaBlockResolver(new SparkConf(false), () -> List.of(current));
            Recorder spark = new Recorder();
            ArenaExecutorComponents components = new ArenaExecutorComponents(sparkWriters(spark),
                    resolver::publisherOf, "ADLER32");
            ShuffleWriter<Object, Object> task = new PublishingShuffleWriter<>(new NoRecords(), 0, 1, publisher,
                    HcommSettings.parse(new SparkConf(false)).fallback(), null, resolver);
            ShuffleMapOutputWriter w = components.createMapOutputWriter(0, 1, 1); // another publisher current since
            write(w, 0, bytes(1000));
            w.commitAllPartitions(new long[0]);
            assertNotNull(publisher.inArena(0, 1), "in the arena of the publisher that announces it");
            assertNull(current.inArena(0, 1));
            task.stop(false);
            assertNull(resolver.publisherOf(0, 1), "forgotten when the task's writer stopped");
            assertSame(spark, components.createMapOutputWriter(0, 2, 1), "no publisher taken: Spark's file");
        } finally {
            current.close();
        }
    }

    @Test
    void sparksWriterThatCannotBeMadeForAnOverflowNamesTheOutput() throws Exception {
        open(4 << 20);
        ArenaBlockResolver resolver = new ArenaBlockResolver(new SparkConf(false), List::of);
        resolver.taskWrites(3, 7, publisher);
        ShuffleMapOutputWriter w = new ArenaExecutorComponents(sparkWriters(null), resolver::publisherOf, "ADLER32")
                .createMapOutputWriter(3, 7, 1);
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> write(w, 0, bytes(4 << 20)));
        assertTrue(e.getMessage().startsWith("shuffle 3 map 7: "), e.getMessage());
        w.abort(e);
    }

    /** Spark's local-disk components, whose writer is {@code writer} (null: it cannot be made). */
    private static ShuffleExecutorComponents sparkWriters(ShuffleMapOutputWriter writer) {
        return new ShuffleExecutorComponents() {
            @Override
            public void initializeExecutor(String appId, String execId, Map<String, String> extraConfigs) {
            }

            @Override
            public ShuffleMapOutputWriter createMapOutputWriter(int shuffleId, long mapTaskId, int numPartitions)
                    throws IOException {
                if (writer == null) {
                    throw new IOException("no local directory left");
                }
                return writer;
            }
        };
    }

    /** Spark's writer of a task that fails before it committed. */
    private static final class NoRecords extends ShuffleWriter<Object, Object> {
        @Override
        public void write(scala.collection.Iterator<Product2<Object, Object>> records) {
        }

        @Override
        public Option<MapStatus> stop(boolean success) {
            return Option.empty();
        }

        @Override
        public long[] getPartitionLengths() {
            return new long[0];
        }
    }

    @Test
    void materializeCopiesOutsideThePublishersLock(@TempDir Path dir) throws Exception {
        open(16 << 20);
        byte[][] data = committed(1, 2, 3000, 5000, new long[] {7, 8});
        byte[] p0 = data[0];
        byte[] p1 = data[1];
        BlockingResolver resolver = new BlockingResolver(dir);
        ExecutorService copying = Executors.newSingleThreadExecutor();
        try {
            Future<Boolean> copied = copying.submit(() -> publisher.materialize(0, 1, resolver));
            assertTrue(resolver.committing.await(10, TimeUnit.SECONDS), "the copy reached Spark's commit");
            Recorder spark = new Recorder();
            assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
                // while the copy waits: Spark's local reads and writers' commits do not queue behind it
                assertArrayEquals(p1, arenaBlock(1, 1, 2));
                ArenaMapOutputWriter late = writer(2, 1, spark);
                write(late, 0, bytes(100));
                late.commitAllPartitions(new long[0]);
            });
            resolver.commit.countDown();
            assertTrue(copied.get(10, TimeUnit.SECONDS));
            assertArrayEquals(new long[] {3000, 5000}, resolver.lengths);
            byte[] both = new byte[8000];
            System.arraycopy(p0, 0, both, 0, 3000);
            System.arraycopy(p1, 0, both, 3000, 5000);
            assertArrayEquals(both, Files.readAllBytes(resolver.getDataFile(0, 1).toPath()));
            assertEquals(1, metrics.outputsMaterialized.getCount());
            assertArrayEquals(p0, arenaBlock(1, 0, 1), "still read in the arena after the copy");
        } finally {
            resolver.commit.countDown();
            copying.shutdownNow();
        }
    }

    /** Spark's resolver over a temporary directory, whose commit waits until the test lets it go on. */
    private static final class BlockingResolver extends IndexShuffleBlockResolver {
        final CountDownLatch committing = new CountDownLatch(1);
        final CountDownLatch commit = new CountDownLatch(1);
        final Path dir;
        long[] lengths;

        BlockingResolver(Path dir) {
            super(new SparkConf(false), null, new ConcurrentHashMap<Object, OpenHashSet<Object>>());
            this.dir = dir;
        }

        @Override
        public File getDataFile(int shuffleId, long mapId) {
            return dir.resolve("shuffle_" + shuffleId + "_" + mapId + ".data").toFile();
        }

        @Override
        public File createTempFile(File file) {
            return new File(file.getPath() + ".tmp");
        }

        @Override
        public void writeMetadataFileAndCommit(int shuffleId, long mapId, long[] lengths, long[] checksums,
                File dataTmp) {
            committing.countDown();
            try {
                assertTrue(commit.await(10, TimeUnit.SECONDS));
                Files.move(dataTmp.toPath(), getDataFile(shuffleId, mapId).toPath(),
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (InterruptedException | IOException e) {
                throw new IllegalStateException(e);
            }
            this.lengths = lengths;
        }
    }

    /** Spark's file writer, recording what it was given. */
    private static final class Recorder implements ShuffleMapOutputWriter {
        final List<Integer> partitions = new ArrayList<>();
        final List<byte[]> data = new ArrayList<>();
        final List<String> calls = new ArrayList<>();
        long[] committed;

        @Override
        public ShufflePartitionWriter getPartitionWriter(int reducePartitionId) {
            calls.add("partition " + reducePartitionId);
            partitions.add(reducePartitionId);
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            return new ShufflePartitionWriter() {
                @Override
                public OutputStream openStream() {
                    return new OutputStream() {
                        @Override
                        public void write(int b) {
                            bytes.write(b);
                        }

                        @Override
                        public void write(byte[] b, int off, int len) {
                            bytes.write(b, off, len);
                        }

                        @Override
                        public void close() {
                            data.add(bytes.toByteArray());
                        }
                    };
                }

                @Override
                public Optional<WritableByteChannelWrapper> openChannelWrapper() {
                    return Optional.empty();
                }

                @Override
                public long getNumBytesWritten() {
                    return bytes.size();
                }
            };
        }

        @Override
        public MapOutputCommitMessage commitAllPartitions(long[] checksums) {
            calls.add("commit");
            committed = checksums;
            return MapOutputCommitMessage.of(new long[0]);
        }

        @Override
        public void abort(Throwable error) {
            calls.add("abort");
        }
    }
}
