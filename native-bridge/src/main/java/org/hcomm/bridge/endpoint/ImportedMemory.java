package org.hcomm.bridge.endpoint;

import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.HcommLibrary;

/**
 * A peer's exported region imported on an {@link Endpoint} ({@code HcommMemImport}): {@link #remoteAddress()} and
 * {@link #size()} are the peer's, to be used as the source of reads. {@link #close()} unimports it (idempotent);
 * afterwards the accessors throw {@link IllegalStateException}. Thread-safe.
 */
public final class ImportedMemory extends NativeOwner {
    private final Endpoint endpoint;
    private final byte[] descriptor;
    private final long remoteAddress;
    private final long size;
    private final int memType;

    ImportedMemory(Endpoint endpoint, byte[] descriptor, long remoteAddress, long size, int memType) {
        super("ImportedMemory 0x" + Long.toHexString(remoteAddress));
        this.endpoint = endpoint;
        this.descriptor = descriptor;
        this.remoteAddress = remoteAddress;
        this.size = size;
        this.memType = memType;
    }

    /** The exporter's virtual address of the region. */
    public long remoteAddress() {
        checkOpen();
        return remoteAddress;
    }

    public long size() {
        checkOpen();
        return size;
    }

    /** {@code CommMemType} of the region: 1 host, 0 device. */
    public int memoryType() {
        checkOpen();
        return memType;
    }

    /** {@code HcommMemUnimport} ({@link #close()}). */
    @Override
    protected void release() {
        int rc = HcommLibrary.HcommMemUnimport(endpoint.handleForChild(), descriptor, descriptor.length);
        HcommException.check(rc, "HcommMemUnimport", endpoint.context() + " remote=0x"
                + Long.toHexString(remoteAddress) + " size=" + size);
    }

    @Override
    protected void released() {
        super.released();
        endpoint.forget(this);
    }
}
