package org.hcomm.bridge.communicator;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.nio.ByteBuffer;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclEventLibrary;

/**
 * Page-locked host memory ({@code aclrtMallocHost}), which {@link CopyStream}'s copies read and write without
 * staging (soft HComm: plain page-aligned host memory). {@link #close()} is {@code aclrtFreeHost}; the caller keeps
 * it open until every copy that names it completed.
 *
 * <p>Threading: thread-safe; the bytes are the caller's to order (a copy's completion, {@link CopyStream#await()},
 * comes before reading what it wrote).
 */
public final class PinnedHost extends NativeOwner {
    private final Pointer ptr;
    private final long size;
    private final int device;

    private PinnedHost(Pointer ptr, long size, int device) {
        super("pinned host memory of " + size + " bytes");
        this.ptr = ptr;
        this.size = size;
        this.device = device;
    }

    /** {@code aclrtMallocHost(size)} with {@code device} set on the calling OS thread. */
    public static PinnedHost allocate(int device, long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("size must be > 0, got " + size);
        }
        HcommNative.ensureAclEvents();
        Acl.useDevice(device);
        PointerByReference p = new PointerByReference();
        int rc = AclEventLibrary.aclrtMallocHost(p, size);
        HcommException.check(rc, "aclrtMallocHost", size + " bytes, device " + device);
        return new PinnedHost(p.getValue(), size, device);
    }

    public long address() {
        checkOpen();
        return Pointer.nativeValue(ptr);
    }

    public long size() {
        return size;
    }

    /** A direct view of the whole block (valid until {@link #close()}); at most {@code Integer.MAX_VALUE} bytes. */
    public ByteBuffer buffer() {
        checkOpen();
        if (size > Integer.MAX_VALUE) {
            throw new IllegalStateException(size + " bytes do not fit one ByteBuffer");
        }
        return ptr.getByteBuffer(0, size);
    }

    @Override
    protected void release() {
        Acl.useDevice(device);
        int rc = AclEventLibrary.aclrtFreeHost(ptr);
        HcommException.check(rc, "aclrtFreeHost", size + " bytes at 0x" + Long.toHexString(Pointer.nativeValue(ptr)));
    }
}
