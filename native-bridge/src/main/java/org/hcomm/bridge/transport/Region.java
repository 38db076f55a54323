package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;

/** Registered memory. Close to unregister it (and free it when the transport allocated it). Idempotent close. */
public interface Region extends AutoCloseable {
    String tag();

    long address();

    long size();

    /** A view of the whole region; valid until close. */
    ByteBuffer buffer();

    @Override
    void close();
}
