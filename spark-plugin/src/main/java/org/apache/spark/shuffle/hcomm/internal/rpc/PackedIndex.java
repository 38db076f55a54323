package org.apache.spark.shuffle.hcomm.internal.rpc;

import java.util.Arrays;

/**
 * A map output's partition lengths packed to travel with its publication ({@link Messages.Published}), so that a
 * reader knows where its partitions lie in the owner's memory without reading the owner's index first: one unsigned
 * LEB128 varint per partition (1 byte for an empty partition or one under 128 bytes, 3 bytes up to 2 MiB, 4 up to
 * 256 MiB), about what Spark's own {@code CompressedMapStatus} spends (1 byte per partition, but approximate).
 * Pure functions.
 */
public final class PackedIndex {
    private PackedIndex() {
    }

    /** {@code lengths} packed, or null when they take more than {@code maxBytes} (the reader then reads the index). */
    public static byte[] pack(long[] lengths, int maxBytes) {
        int size = 0;
        for (long len : lengths) {
            if (len < 0) {
                throw new IllegalArgumentException("negative partition length " + len);
            }
            size += varintSize(len);
            if (size > maxBytes) {
                return null;
            }
        }
        byte[] out = new byte[size];
        int at = 0;
        for (long len : lengths) {
            long v = len;
            while ((v & ~0x7FL) != 0) {
                out[at++] = (byte) ((v & 0x7F) | 0x80);
                v >>>= 7;
            }
            out[at++] = (byte) v;
        }
        return out;
    }

    /**
     * The offsets of all {@code numPartitions} partitions and the end of the last, from the start of the output's data
     * (Spark's index-file layout): {@code numPartitions + 1} values.
     *
     * @throws IllegalArgumentException when {@code packed} is not exactly {@code numPartitions} varints
     */
    public static long[] decode(byte[] packed, int numPartitions) {
        if (numPartitions < 0) {
            throw new IllegalArgumentException("a map output of " + numPartitions + " partitions");
        }
        long[] out = new long[numPartitions + 1];
        long offset = 0;
        int at = 0;
        for (int p = 0; p < numPartitions; p++) {
            out[p] = offset;
            long v = 0;
            int shift = 0;
            while (true) {
                if (at >= packed.length || shift > 56) {
                    throw new IllegalArgumentException("packed index of " + packed.length + " bytes ends inside "
                            + "partition " + p + " of " + numPartitions);
                }
                byte b = packed[at++];
                v |= (long) (b & 0x7F) << shift;
                if (b >= 0) {
                    break;
                }
                shift += 7;
            }
            offset += v;
        }
        if (at != packed.length) {
            throw new IllegalArgumentException("packed index of " + packed.length + " bytes has " + (packed.length - at)
                    + " left after its " + numPartitions + " partitions");
        }
        out[numPartitions] = offset;
        return out;
    }

    /**
     * The offsets of partitions {@code [first, end)} and the end of the last, out of a map output's {@code offsets}
     * ({@link #decode}): entries {@code first} to {@code end}, {@code end - first + 1} values.
     *
     * @throws IllegalArgumentException when the range is outside the output's partitions
     */
    public static long[] range(long[] offsets, int first, int end) {
        int numPartitions = offsets.length - 1;
        if (first < 0 || end < first || end > numPartitions) {
            throw new IllegalArgumentException("partitions [" + first + ", " + end + ") outside the " + numPartitions
                    + " of a map output");
        }
        return Arrays.copyOfRange(offsets, first, end + 1);
    }

    private static int varintSize(long v) {
        return v == 0 ? 1 : (63 - Long.numberOfLeadingZeros(v)) / 7 + 1;
    }
}
