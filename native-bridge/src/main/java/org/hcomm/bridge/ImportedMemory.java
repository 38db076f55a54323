package org.hcomm.bridge;

import org.hcomm.bridge.raw.HcommLibrary;

/**
 * A peer's exported region imported on an {@link Endpoint} ({@code HcommMemImport}): {@link #remoteAddress()} and
 * {@link #size()} are the peer's, to be used as the source of reads. {@link #close()} unimports it (idempotent);
 * afterwards the accessors throw {@link IllegalStateException}. Thread-safe.
 */
public final class ImportedMemory implements AutoCloseable {
    private final Endpoint endpoint;
    private final byte[] descriptor;
    private final long remoteAddress;
    private final long size;
    private final int memType;
    private final LeakWatch leakWatch;
    private volatile boolean closed;

    ImportedMemory(Endpoint endpoint, byte[] descriptor, long remoteAddress, long size, int memType) {
        this.endpoint = endpoint;
        this.descriptor = descriptor;
        this.remoteAddress = remoteAddress;
        this.size = size;
        this.memType = memType;
        this.leakWatch = LeakWatch.watch(this, "ImportedMemory 0x" + Long.toHexString(remoteAddress));
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

    public boolean isClosed() {
        return closed;
    }

    /** {@code HcommMemUnimport}. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            int rc = HcommLibrary.HcommMemUnimport(endpoint.handleForChild(), descriptor, descriptor.length);
            HcommException.check(rc, "HcommMemUnimport", endpoint.context() + " remote=0x"
                    + Long.toHexString(remoteAddress) + " size=" + size);
        } finally {
            leakWatch.closed();
            endpoint.forget(this);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("ImportedMemory 0x" + Long.toHexString(remoteAddress) + " is closed");
        }
    }
}
