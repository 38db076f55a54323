package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;

/** Registered memory. Close to unregister it (and free it when the transport allocated it). Idempotent close. */
public interface Region extends AutoCloseable {
    String tag();

    long address();

    long size();

    /** A view of the whole region; valid until close. */
    ByteBuffer buffer();

    /**
     * A big-endian view of {@code [offset, offset + length)} of the region, as {@link #buffer()} is of the whole;
     * registered host memory makes it directly (one object, and regions over 2 GiB have views too).
     *
     * @throws IndexOutOfBoundsException when the range is not inside the region
     */
    default ByteBuffer buffer(long offset, int length) {
        if (offset < 0 || length < 0 || offset > size() - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + length + ") outside region " + tag()
                    + " of " + size() + " bytes");
        }
        return buffer().slice((int) offset, length);
    }

    @Override
    void close();
}
