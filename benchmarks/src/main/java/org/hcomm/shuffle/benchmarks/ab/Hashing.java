package org.hcomm.shuffle.benchmarks.ab;

/**
 * Deterministic 64-bit hashing for checksums. A checksum is the wrapping sum of per-record hashes, so it does not
 * depend on the order records arrive in, which differs between shuffle implementations and runs.
 */
final class Hashing {
    private Hashing() {
    }

    /** SplitMix64's finaliser: a good avalanche over all 64 bits. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    static long combine(long a, long b) {
        return mix(a * 0x9e3779b97f4a7c15L + b);
    }

    static long bytes(byte[] b) {
        long h = 0x84222325cbf29ce4L ^ b.length;
        int i = 0;
        for (; i + 8 <= b.length; i += 8) {
            long w = 0;
            for (int k = 0; k < 8; k++) {
                w = (w << 8) | (b[i + k] & 0xff);
            }
            h = combine(h, w);
        }
        long w = 0;
        for (; i < b.length; i++) {
            w = (w << 8) | (b[i] & 0xff);
        }
        return combine(h, w);
    }

    static long string(String s) {
        long h = 0x12345678L ^ s.length();
        for (int i = 0; i < s.length(); i++) {
            h = h * 1_000_003L + s.charAt(i);
        }
        return mix(h);
    }
}
