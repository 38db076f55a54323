package org.hcomm.bridge.endpoint;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.ByteBuffer;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.error.Failures;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.HcommAllocLibrary;
import org.hcomm.bridge.raw.HcommLibrary;
import org.hcomm.bridge.raw.LibC;

/**
 * A region registered on an {@link Endpoint} ({@code HcommMemReg}); when it came from
 * {@link Endpoint#allocate(String, long)} it also owns the memory ({@link Backing}).
 *
 * <p>Ownership: {@link #close()} unregisters (and frees an allocated block); it is idempotent. After close every
 * method throws {@link IllegalStateException}, but {@link ByteBuffer} views handed out before stay pointing at the
 * freed memory: drop them first. Channels created while the region was registered keep it in their snapshot;
 * close those channels before the region.
 *
 * <p>Threading: thread-safe; the memory contents are the caller's to synchronise.
 */
public final class RegisteredMemory extends NativeOwner {
    private final Endpoint endpoint;
    private final String tag;
    private final Pointer block;
    private final long size;
    private final Pointer memHandle;
    private final Backing backing;

    RegisteredMemory(Endpoint endpoint, String tag, Pointer block, long size, Pointer memHandle, Backing backing) {
        super("RegisteredMemory " + tag + " (" + size + " bytes)");
        this.endpoint = endpoint;
        this.tag = tag;
        this.block = block;
        this.size = size;
        this.memHandle = memHandle;
        this.backing = backing;
    }

    /** Where a region's memory comes from, and so who frees it. */
    enum Backing {
        /** The caller's: registered only. */
        CALLER,
        /** {@code HcommMemAlloc} (soft HComm: shareable host memory), freed by {@code HcommMemFree}. */
        HCOMM_ALLOC,
        /** An anonymous private mapping of this process (CANN host buffers), unmapped. */
        HOST_MAPPING;

        Pointer allocate(long size, String context) {
            switch (this) {
                case HCOMM_ALLOC:
                    PointerByReference ptr = new PointerByReference();
                    HcommException.check(HcommAllocLibrary.HcommMemAlloc(ptr, size), "HcommMemAlloc",
                            context + " size=" + size);
                    return ptr.getValue();
                case HOST_MAPPING:
                    Pointer p = LibC.get().mmap(null, size, LibC.PROT_READ | LibC.PROT_WRITE,
                            LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS, -1, 0);
                    if (Pointer.nativeValue(p) == LibC.MAP_FAILED) {
                        throw new IllegalStateException("cannot map " + size + " bytes of host memory for " + context
                                + ": errno " + Native.getLastError());
                    }
                    return p;
                default:
                    throw new IllegalStateException("the caller's memory is not allocated here");
            }
        }

        void free(Pointer block, long size, String context) {
            if (this == HCOMM_ALLOC) {
                int rc = HcommAllocLibrary.HcommMemFree(block);
                if (rc != 0) {
                    throw new HcommException("HcommMemFree", rc, context);
                }
            } else if (this == HOST_MAPPING && LibC.get().munmap(block, size) != 0) {
                throw new IllegalStateException("munmap of " + size + " bytes failed for " + context + ": errno "
                        + Native.getLastError());
            }
        }
    }

    public String tag() {
        return tag;
    }

    /** Start address of the region in this process. */
    public long address() {
        checkOpen();
        return Pointer.nativeValue(block);
    }

    public long size() {
        return size;
    }

    /** True when the region owns its memory ({@link Endpoint#allocate}), false when it registers caller memory. */
    public boolean isAllocated() {
        return backing != Backing.CALLER;
    }

    /** A direct buffer over the whole region (in the platform's byte order, as JNA makes it); at most 2 GiB - 1. */
    public ByteBuffer buffer() {
        if (size > Integer.MAX_VALUE) {
            throw new IllegalStateException("region " + tag + " is " + size + " bytes; use buffer(offset, length)");
        }
        return buffer(0, (int) size);
    }

    /** A direct buffer over {@code [offset, offset + length)} of the region. */
    public ByteBuffer buffer(long offset, int length) {
        checkOpen();
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + length + ") outside region " + tag
                    + " of " + size + " bytes");
        }
        return block.getByteBuffer(offset, length);
    }

    /** {@code HcommMemExport}: the descriptor peers import to read this region (a copy of the library's bytes). */
    public synchronized byte[] export() {
        checkOpen();
        PointerByReference desc = new PointerByReference();
        IntByReference len = new IntByReference();
        int rc = HcommLibrary.HcommMemExport(endpoint.handleForChild(), memHandle, desc, len);
        HcommException.check(rc, "HcommMemExport", context());
        return desc.getValue().getByteArray(0, len.getValue());
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    /** Unregisters the region and frees an allocated block ({@link #close()}). */
    @Override
    protected void release() {
        int rc = HcommLibrary.HcommMemUnreg(endpoint.handleForChild(), memHandle);
        RuntimeException failure = rc == 0 ? null : new HcommException("HcommMemUnreg", rc, context());
        try {
            backing.free(block, size, context());
        } catch (RuntimeException e) {
            failure = Failures.accumulate(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    protected void released() {
        super.released();
        endpoint.forget(this);
    }

    private String context() {
        return endpoint.context() + " tag=" + tag + " size=" + size;
    }
}
