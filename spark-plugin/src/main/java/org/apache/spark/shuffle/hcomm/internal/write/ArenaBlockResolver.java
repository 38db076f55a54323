package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import org.apache.spark.SparkConf;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleBlockInfo;
import org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.util.collection.OpenHashSet;
import scala.Option;
import scala.Tuple2;

/**
 * Spark's block resolver, serving also the map outputs its writers wrote into the send arena
 * ({@link ArenaMapOutputWriter}: they have no file): Spark's local reads of an executor's own blocks and its fetch
 * (the fallback's) get them from the arena; decommission copies them to Spark's files first and then moves those.
 * Everything else is Spark's. It must be an {@link IndexShuffleBlockResolver}: Spark's checksum diagnosis and its
 * fallback storage match on that type. It also keeps, for each running map task, the publisher the shuffle manager
 * took for it, which Spark's writer (through {@link ArenaExecutorComponents}) then writes into. Thread-safe: task
 * threads register their writes while Spark's block transfer serves blocks from its own threads.
 */
public final class ArenaBlockResolver extends IndexShuffleBlockResolver {
    private final Supplier<List<MapOutputPublisher>> publishers;
    private final Map<ShuffleBlockInfo, MapOutputPublisher> writing = new ConcurrentHashMap<>();

    /**
     * {@code publishers}: this executor's, the current one first (none without a plugin or a transport, and none on
     * the communicator path, which has no send arena).
     */
    public ArenaBlockResolver(SparkConf conf, Supplier<List<MapOutputPublisher>> publishers) {
        super(conf, null, new ConcurrentHashMap<Object, OpenHashSet<Object>>());
        this.publishers = publishers;
    }

    /**
     * Map task {@code mapId} publishes its output with {@code publisher} (until {@link #taskEnded}): if Spark's writer
     * writes it into an arena, it is this publisher's, whichever is current by then.
     */
    public void taskWrites(int shuffleId, long mapId, MapOutputPublisher publisher) {
        writing.put(new ShuffleBlockInfo(shuffleId, mapId), publisher);
    }

    /** The publisher of map task {@code mapId} ({@link #taskWrites}), or null: its output goes to Spark's file. */
    public MapOutputPublisher publisherOf(int shuffleId, long mapId) {
        return writing.get(new ShuffleBlockInfo(shuffleId, mapId));
    }

    public void taskEnded(int shuffleId, long mapId) {
        writing.remove(new ShuffleBlockInfo(shuffleId, mapId));
    }

    @Override
    public ManagedBuffer getBlockData(BlockId blockId, Option<String[]> dirs) {
        ManagedBuffer arena = null; // with dirs: another executor's file, read from here (host-local reads)
        if (dirs.isEmpty() && blockId instanceof ShuffleBlockId id) {
            arena = ArenaBlock.find(publishers.get(), id.shuffleId(), id.mapId(), id.reduceId(), id.reduceId() + 1);
        } else if (dirs.isEmpty() && blockId instanceof ShuffleBlockBatchId id) {
            arena = ArenaBlock.find(publishers.get(), id.shuffleId(), id.mapId(), id.startReduceId(),
                    id.endReduceId());
        }
        return arena != null ? arena : super.getBlockData(blockId, dirs);
    }

    /** Spark's stored outputs (index files) and those only in an arena. */
    @Override
    public scala.collection.immutable.List<ShuffleBlockInfo> getStoredShuffles() {
        List<ShuffleBlockInfo> all = new ArrayList<>(ScalaCollections.asJava(super.getStoredShuffles()));
        for (MapOutputPublisher p : publishers.get()) {
            for (long[] output : p.arenaOnly()) {
                all.add(new ShuffleBlockInfo((int) output[0], output[1]));
            }
        }
        return ScalaCollections.toList(all);
    }

    /** An output only in an arena is copied to Spark's files first (once); then Spark moves the files. */
    @Override
    public scala.collection.immutable.List<Tuple2<BlockId, ManagedBuffer>> getMigrationBlocks(ShuffleBlockInfo info) {
        for (MapOutputPublisher p : publishers.get()) {
            try {
                if (p.materialize(info.shuffleId(), info.mapId(), this)) {
                    break;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("executor " + p.executorId() + " could not copy shuffle "
                        + info.shuffleId() + " map " + info.mapId() + " out of its send arena for migration", e);
            }
        }
        return super.getMigrationBlocks(info);
    }

    /**
     * Blocks of an output in the arena. Spark's counts of a buffer's uses are not balanced, so this buffer holds no
     * memory of its own: each stream and each Netty buffer made of it leases the bytes until closed or released.
     */
    private static final class ArenaBlock extends ManagedBuffer {
        private final MapOutputPublisher publisher;
        private final Publication output;
        private final int shuffleId;
        private final int start;
        private final int end;
        private final long size;

        private ArenaBlock(MapOutputPublisher publisher, Publication output, int shuffleId, int start, int end) {
            this.publisher = publisher;
            this.output = output;
            this.shuffleId = shuffleId;
            this.start = start;
            this.end = end;
            this.size = output.offsets[end] - output.offsets[start];
        }

        /**
         * Partitions {@code [start, end)} of the output in the first of {@code publishers} that holds it in its arena,
         * or null: a lookup without a lock (the lease takes the arena's, once per use).
         */
        static ArenaBlock find(List<MapOutputPublisher> publishers, int shuffleId, long mapId, int start, int end) {
            for (MapOutputPublisher p : publishers) {
                Publication output = p.inArena(shuffleId, mapId);
                if (output != null) {
                    return start < 0 || end >= output.offsets.length || start > end ? null
                            : new ArenaBlock(p, output, shuffleId, start, end);
                }
            }
            return null;
        }

        @Override
        public long size() {
            return size;
        }

        private SendArena.Lease lease() throws IOException {
            SendArena.Lease view = publisher.leaseBlocks(output, start, end);
            if (view == null) {
                throw new IOException("shuffle " + shuffleId + " map " + output.mapId + " partitions [" + start + ", "
                        + end + ") are no longer in executor " + publisher.executorId() + "'s send arena (released, "
                        + "or the executor is stopping)");
            }
            return view;
        }

        /**
         * A copy: callers keep the buffer with no call that says when they are done with it (Spark's
         * {@code ChunkedByteBuffer}, {@code putBytes}), so a lease of a view would have no safe end.
         */
        @Override
        public ByteBuffer nioByteBuffer() throws IOException {
            try (SendArena.Lease lease = lease()) {
                ByteBuffer copy = ByteBuffer.allocate(lease.view().remaining());
                copy.put(lease.view()).flip();
                return copy;
            }
        }

        @Override
        public InputStream createInputStream() throws IOException {
            SendArena.Lease lease = lease();
            ByteBuffer view = lease.view();
            return new InputStream() {
                private boolean closed;

                @Override
                public int read() throws IOException {
                    open();
                    return view.hasRemaining() ? view.get() & 0xff : -1;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    open();
                    if (len == 0) {
                        return 0;
                    }
                    if (!view.hasRemaining()) {
                        return -1;
                    }
                    int n = Math.min(len, view.remaining());
                    view.get(b, off, n);
                    return n;
                }

                @Override
                public int available() {
                    return closed ? 0 : view.remaining();
                }

                private void open() throws IOException {
                    if (closed) {
                        throw new IOException("stream closed");
                    }
                }

                @Override
                public void close() {
                    closed = true;
                    lease.close();
                }
            };
        }

        @Override
        public ManagedBuffer retain() {
            return this;
        }

        @Override
        public ManagedBuffer release() {
            return this;
        }

        /**
         * A read-only Netty buffer over a leased view, no copy: Netty releases it once after the send (or its
         * failure), and its deallocation gives the view back.
         */
        @Override
        public Object convertToNetty() throws IOException {
            return size == 0 ? Unpooled.EMPTY_BUFFER : new LeasedBuf(lease()).asReadOnly();
        }

        /** Spark 4's TLS transfer (no {@code @Override}: Spark 3.5 has no such method). */
        public Object convertToNettyForSsl() throws IOException {
            return convertToNetty();
        }

        @Override
        public String toString() {
            return "ArenaBlock[shuffle " + shuffleId + " map " + output.mapId + " partitions " + start + "-" + end
                    + ", " + size + " bytes]";
        }
    }

    /**
     * Netty's buffer over a leased view (a direct buffer Netty only reads): deallocated when Netty's count of its
     * uses reaches zero, which happens once, and then gives the view back.
     */
    private static final class LeasedBuf extends UnpooledDirectByteBuf {
        private final SendArena.Lease lease;

        LeasedBuf(SendArena.Lease lease) {
            super(UnpooledByteBufAllocator.DEFAULT, lease.direct(), lease.direct().remaining());
            this.lease = lease;
        }

        @Override
        protected void deallocate() {
            super.deallocate(); // frees nothing: the buffer was given, not allocated
            lease.close();
        }
    }
}
