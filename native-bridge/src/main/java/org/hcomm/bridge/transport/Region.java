package org.hcomm.bridge.transport;

import java.nio.ByteBuffer;

/** Registered memory. Close to unregister it (and free it when the transport allocated it). Idempotent close. */
public interface Region extends AutoCloseable {
    String tag();

    long address();

    long size();

    /**
     * What a peer passes as {@link ReadBatch#read}'s {@code src} to read this region at {@code offset}, the value an
     * owner publishes: on the endpoint path the registered address ({@link #address()} + offset); on the
     * communicator path the offset into this member's HCCL buffer, which the reader's transport resolves against the
     * base its channel to this member gave ({@code HcclChannelGetHcclBuffer}).
     */
    default long readSource(long offset) {
        return address() + offset;
    }

    /**
     * A view of the whole region; valid until close. Where the region lives in device memory (the communicator
     * path's HCCL buffer) this is its host mirror: bytes written here reach peers after {@link #commit}, and reads
     * that land in the region are in the mirror once their batch's {@link ReadBatch#await()} returned.
     */
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

    /**
     * Makes {@code length} bytes written into {@link #buffer()} at {@code offset} readable by peers: nothing for host
     * memory, a host-to-device copy for device memory. Returns once they are there.
     */
    default void commit(long offset, long length) throws TransportException {}

    @Override
    void close();
}
