package org.apache.spark.shuffle.hcomm.internal.write;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;

import org.hcomm.bridge.transport.Region;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportException;

/**
 * The executor's registered send arena: memory peers read one-sidedly, handed out in aligned extents. Data extents
 * must leave an eighth of the arena free, so indexes (tiny, one per output) keep fitting. Spark's own readers of an
 * output held here (local reads, its fetch) and its copy to Spark's files hold a {@link Lease} each: its extent is
 * freed only once no lease of it is left, and {@link #close()} waits for them (boundedly) before the memory goes.
 * Thread-safe; owns the region.
 */
final class SendArena implements AutoCloseable {
    /** How long close waits for Spark's readers of views (a local reduce task deserialising a block) to finish. */
    static final long CLOSE_WAIT_MS = 10_000;

    private final Region region;
    private final ArenaAllocator allocator;
    private final long indexReserve;
    private int views;
    private boolean closed;

    SendArena(Transport transport, long size) {
        this.region = size > 0 ? transport.allocate("hcomm-send-arena", size) : null;
        this.allocator = new ArenaAllocator(size);
        this.indexReserve = size / 8;
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
        return region.buffer().position((int) offset).limit((int) (offset + bytes)).slice();
    }

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

    /** Makes bytes written at {@code offset} readable by peers (a host-to-device copy on the communicator path). */
    void stage(long offset, long bytes) throws TransportException {
        region.commit(offset, bytes);
    }

    /**
     * A read-only view of {@code bytes} at {@code from} in {@code extent} (null: an output with no data, an empty
     * view), counted until {@link Lease#close()}; null once the extent was released or the arena is closing.
     */
    synchronized Lease lease(Extent extent, long from, long bytes) {
        if (closed || extent != null && extent.released) {
            return null;
        }
        if (extent == null) {
            return new Lease(null, ByteBuffer.allocate(0));
        }
        extent.leases++;
        views++;
        return new Lease(extent, view(extent.offset + from, bytes));
    }

    private synchronized void unlease(Extent extent) {
        views--;
        if (--extent.leases == 0 && extent.released) {
            allocator.release(extent.offset, extent.bytes);
        }
        notifyAll();
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
            if (open.compareAndSet(true, false) && extent != null) {
                unlease(extent);
            }
        }
    }

    /** Frees the memory once Spark's readers gave their views back, or after {@link #CLOSE_WAIT_MS}. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.currentTimeMillis() + CLOSE_WAIT_MS;
        try {
            for (long left = CLOSE_WAIT_MS; views > 0 && left > 0; left = deadline - System.currentTimeMillis()) {
                wait(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (region != null) {
            region.close();
        }
    }
}
