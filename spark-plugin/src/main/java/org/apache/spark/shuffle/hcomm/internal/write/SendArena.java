package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.slf4j.Logger;

/**
 * The executor's registered send arena: memory peers read one-sidedly, handed out in aligned extents. Data extents
 * must leave an eighth of the arena free, so indexes (tiny, one per output) keep fitting. Spark's own readers of an
 * output held here (local reads, its fetch), its copy to Spark's files and Spark's writers into the arena hold a
 * {@link Lease} each: an extent is freed only once no lease of it is left, and the region is unmapped only once no
 * lease at all is left ({@link #close(Runnable)}), so nothing reads or writes unmapped memory. Thread-safe; owns the
 * region.
 */
final class SendArena implements AutoCloseable {
    private static final Logger LOG = LogCategory.PUBLISHER.logger();
    /** How long close waits for leases (a local reduce task deserialising a block) before it leaves the unmap. */
    static final long CLOSE_WAIT_MS = 10_000;

    private final Region region;
    private final ArenaAllocator allocator;
    private final long indexReserve;
    private final String executorId;
    private final long closeWaitMs;
    private int views;
    private boolean closed;
    /** Set when close gave up waiting: the unmap and what follows it, for the last lease's close to run. */
    private Runnable unmapLater;

    SendArena(Transport transport, long size, String executorId) {
        this(transport, size, executorId, CLOSE_WAIT_MS);
    }

    SendArena(Transport transport, long size, String executorId, long closeWaitMs) {
        this.region = size > 0 ? transport.allocate("hcomm-send-arena", size) : null;
        this.allocator = new ArenaAllocator(size);
        this.indexReserve = size / 8;
        this.executorId = executorId;
        this.closeWaitMs = closeWaitMs;
    }

    /** An extent of {@code bytes} for an index, or -1. */
    synchronized long allocate(long bytes) {
        return closed ? -1 : allocator.allocate(bytes);
    }

    /** An extent of {@code bytes} for data, or -1 when it would eat into the index reserve. */
    synchronized long allocateData(long bytes) {
        return closed || dataRoom() < ArenaAllocator.aligned(bytes) ? -1 : allocator.allocate(bytes);
    }

    /** Grows a data extent in place; false when its neighbour is taken or the index reserve would shrink. */
    synchronized boolean extendData(long offset, long bytes, long newBytes) {
        long more = ArenaAllocator.aligned(newBytes) - ArenaAllocator.aligned(Math.max(bytes, 1));
        return !closed && dataRoom() >= more && allocator.extend(offset, bytes, newBytes);
    }

    synchronized void shrink(long offset, long bytes, long newBytes) {
        allocator.shrink(offset, bytes, newBytes);
    }

    synchronized void release(long offset, long bytes) {
        allocator.release(offset, bytes);
    }

    /** Frees an extent Spark's readers may lease: at once, or when the last lease of it is given back. */
    synchronized void release(Extent extent) {
        if (!extent.released) {
            extent.released = true;
            if (extent.leases == 0) {
                allocator.release(extent.offset, extent.bytes);
            }
        }
    }

    /** Bytes a data extent may still take. */
    synchronized long dataRoom() {
        return allocator.free() - indexReserve;
    }

    synchronized long used() {
        return allocator.used();
    }

    long capacity() {
        return allocator.capacity();
    }

    /** A writable view of {@code [offset, offset + bytes)}; valid until close. */
    ByteBuffer view(long offset, long bytes) {
        return region.buffer(offset, Math.toIntExact(bytes));
    }

    /** What readers pass as the source of a read of the arena at {@code offset}: its registered address. */
    long address(long offset) {
        return region.address() + offset;
    }

    /** Reads the first {@code bytes} of {@code file} into the arena at {@code offset}. */
    void copyIn(File file, long offset, long bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
            if (!copyIn(ch, 0, offset, bytes)) {
                throw new IOException("map output " + file + " is shorter than its partition lengths say");
            }
        }
    }

    /** Reads {@code bytes} of {@code in} from {@code position} into the arena at {@code offset}; false: it ended. */
    boolean copyIn(FileChannel in, long position, long offset, long bytes) throws IOException {
        ByteBuffer dst = view(offset, bytes);
        while (dst.hasRemaining()) {
            if (in.read(dst, position + dst.position()) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Writes what remains of {@code src} to a new file {@code to}. */
    static void copyOut(ByteBuffer src, File to) throws IOException {
        try (FileChannel ch = FileChannel.open(to.toPath(), StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (src.hasRemaining()) {
                ch.write(src);
            }
        }
    }

    /**
     * A read-only view of {@code bytes} at {@code from} in {@code extent} (null: an output with no data, an empty
     * view), counted until {@link Lease#close()}; null once the extent was released or the arena is closing.
     */
    synchronized Lease lease(Extent extent, long from, long bytes) {
        if (closed || extent != null && extent.released) {
            return null;
        }
        views++;
        if (extent == null) {
            return new Lease(null, ByteBuffer.allocate(0));
        }
        extent.leases++;
        return new Lease(extent, view(extent.offset + from, bytes));
    }

    /** A lease of no bytes, for a writer into the arena: the region stays mapped until it is closed; null: closing. */
    Lease hold() {
        return lease(null, 0, 0);
    }

    private void unlease(Extent extent) {
        Runnable unmap = null;
        synchronized (this) {
            views--;
            if (extent != null && --extent.leases == 0 && extent.released) {
                allocator.release(extent.offset, extent.bytes);
            }
            if (views == 0 && unmapLater != null) { // close gave up waiting: the last lease unmaps
                unmap = unmapLater;
                unmapLater = null;
            }
            notifyAll();
        }
        if (unmap != null) {
            try {
                unmap.run();
            } catch (RuntimeException e) { // on a reader's thread: logged here, not thrown into Spark's reader
                LOG.warn("Executor {} could not close its send arena after the last view was given back", executorId,
                        e);
            }
        }
    }

    /** An output's data extent, as its readers lease it ({@link #lease}). Guarded by its arena. */
    static final class Extent {
        final long offset;
        final long bytes;
        private int leases;
        private boolean released;

        Extent(long offset, long bytes) {
            this.offset = offset;
            this.bytes = bytes;
        }
    }

    /** A view of an extent: the extent stays allocated, and the arena mapped, until this is closed. */
    final class Lease implements AutoCloseable {
        private final Extent extent;
        private final ByteBuffer direct;
        private final ByteBuffer view;
        private final AtomicBoolean open = new AtomicBoolean(true);

        private Lease(Extent extent, ByteBuffer direct) {
            this.extent = extent;
            this.direct = direct;
            this.view = direct.asReadOnlyBuffer();
        }

        /** The bytes, read-only. */
        ByteBuffer view() {
            return view;
        }

        /** The same bytes, writable (Netty wraps only a writable direct buffer); never to be written. */
        ByteBuffer direct() {
            return direct.duplicate();
        }

        /** Gives the view back (once, however often called); it must not be read after. */
        @Override
        public void close() {
            if (open.compareAndSet(true, false)) {
                unlease(extent);
            }
        }
    }

    @Override
    public void close() {
        close(() -> { });
    }

    /**
     * Closes the arena: nothing is allocated or leased from now on. The region is unmapped, and then {@code after}
     * runs (what would free it too: the transport's close), once no lease is left: here when the leases end within
     * the close wait, else on the thread that closes the last of them. Exactly one of the two unmaps; a lease never
     * closed keeps the region mapped. A second close does nothing.
     */
    void close(Runnable after) {
        Runnable unmap = () -> {
            try {
                if (region != null) {
                    region.close();
                }
            } finally {
                after.run();
            }
        };
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            long deadline = System.currentTimeMillis() + closeWaitMs;
            try {
                for (long left = closeWaitMs; views > 0 && left > 0; left = deadline - System.currentTimeMillis()) {
                    wait(left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (views > 0) {
                unmapLater = unmap;
                LOG.warn("Executor {} closes its send arena with {} views of Spark's readers or writers still open "
                        + "after {} ms: it stays mapped until the last is given back", executorId, views, closeWaitMs);
                return;
            }
        }
        unmap.run();
    }
}
