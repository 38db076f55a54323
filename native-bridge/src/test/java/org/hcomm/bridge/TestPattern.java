package org.hcomm.bridge;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Deterministic pseudo-random bytes addressable by position, so a reader can check any range it read. */
final class TestPattern {
    private TestPattern() {}

    static long word(long seed, long index) {
        long z = seed * 0x9E3779B97F4A7C15L + (index + 1) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static byte at(long seed, long pos) {
        return (byte) (word(seed, pos >>> 3) >>> ((pos & 7) * 8));
    }

    /** Fills the whole buffer (which starts at pattern position 0). */
    static void fill(ByteBuffer region, long seed) {
        ByteBuffer b = region.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int len = b.capacity();
        int words = len / 8;
        for (int i = 0; i < words; i++) {
            b.putLong(i * 8, word(seed, i));
        }
        for (int p = words * 8; p < len; p++) {
            b.put(p, at(seed, p));
        }
    }

    /** Checks that {@code dst[dstOff, +len)} holds pattern bytes {@code [srcOff, +len)}. */
    static void verify(ByteBuffer dst, int dstOff, long seed, long srcOff, int len, String what) {
        long w = 0;
        long wordIndex = -1;
        for (int i = 0; i < len; i++) {
            long pos = srcOff + i;
            if ((pos >>> 3) != wordIndex) {
                wordIndex = pos >>> 3;
                w = word(seed, wordIndex);
            }
            byte expected = (byte) (w >>> ((pos & 7) * 8));
            byte actual = dst.get(dstOff + i);
            if (actual != expected) {
                fail(what + ": byte " + i + " of " + len + " (dst " + (dstOff + i) + ", src " + pos + ") is "
                        + actual + ", expected " + expected);
            }
        }
    }

    /** Sets {@code [off, +len)} to {@code value}. */
    static void paint(ByteBuffer b, int off, int len, byte value) {
        byte[] chunk = new byte[Math.min(len, 1 << 20)];
        java.util.Arrays.fill(chunk, value);
        ByteBuffer d = b.duplicate();
        d.position(off);
        int left = len;
        while (left > 0) {
            int n = Math.min(left, chunk.length);
            d.put(chunk, 0, n);
            left -= n;
        }
    }

    /** Checks that {@code [off, +len)} still holds {@code value}. */
    static void verifyPainted(ByteBuffer b, int off, int len, byte value, String what) {
        for (int i = 0; i < len; i++) {
            if (b.get(off + i) != value) {
                fail(what + ": byte " + (off + i) + " was overwritten (" + b.get(off + i) + ")");
            }
        }
    }
}
