package org.apache.spark.shuffle.hcomm.internal.write;

import java.util.Map;
import java.util.TreeMap;

/**
 * First-fit allocation of offsets inside a fixed-size arena, with neighbours merged on free. Not thread-safe: the
 * owner serialises. Pure logic, no memory of its own.
 */
final class ArenaAllocator {
    static final long ALIGN = 64;
    private final long capacity;
    private final TreeMap<Long, Long> free = new TreeMap<>(); // offset -> length
    private long used;

    ArenaAllocator(long capacity) {
        this.capacity = capacity;
        if (capacity > 0) {
            free.put(0L, capacity);
        }
    }

    static long aligned(long n) {
        return (n + ALIGN - 1) & -ALIGN;
    }

    /** The offset of {@code bytes} (rounded up to {@link #ALIGN}), or -1 when no free run is long enough. */
    long allocate(long bytes) {
        long want = aligned(Math.max(bytes, 1));
        for (Map.Entry<Long, Long> run : free.entrySet()) {
            long at = run.getKey();
            long length = run.getValue(); // read before removing: TreeMap reuses entry objects
            if (length >= want) {
                free.remove(at);
                if (length > want) {
                    free.put(at + want, length - want);
                }
                used += want;
                return at;
            }
        }
        return -1;
    }

    /**
     * Grows the allocation at {@code offset} from {@code bytes} to {@code newBytes} in place, by taking the free run
     * that starts where it ends; false (and nothing changed) when that run is missing or too short.
     */
    boolean extend(long offset, long bytes, long newBytes) {
        long have = aligned(Math.max(bytes, 1));
        long want = aligned(Math.max(newBytes, 1));
        if (want <= have) {
            return true;
        }
        Long run = free.get(offset + have);
        if (run == null || run < want - have) {
            return false;
        }
        free.remove(offset + have);
        if (run > want - have) {
            free.put(offset + want, run - (want - have));
        }
        used += want - have;
        return true;
    }

    /** Gives back the tail of the allocation at {@code offset}, keeping its first {@code newBytes} (at least one). */
    void shrink(long offset, long bytes, long newBytes) {
        long have = aligned(Math.max(bytes, 1));
        long keep = aligned(Math.max(newBytes, 1));
        if (keep < have) {
            release(offset + keep, have - keep);
        }
    }

    void release(long offset, long bytes) {
        long len = aligned(Math.max(bytes, 1));
        if (offset < 0 || offset + len > capacity) {
            throw new IllegalArgumentException("release outside the arena: " + offset + "+" + len);
        }
        Map.Entry<Long, Long> before = free.floorEntry(offset);
        long beforeStart = before == null ? -1 : before.getKey();
        long beforeEnd = before == null ? -1 : before.getKey() + before.getValue();
        Long next = free.ceilingKey(offset);
        if (beforeEnd > offset || (next != null && next < offset + len)) {
            throw new IllegalStateException("double release at " + offset);
        }
        used -= len;
        long start = offset;
        long end = offset + len;
        if (beforeEnd == offset) {
            start = beforeStart;
            free.remove(start);
        }
        Long after = free.remove(end);
        if (after != null) {
            end += after;
        }
        free.put(start, end - start);
    }

    /** Bytes not allocated (possibly in several runs). */
    long free() {
        return capacity - used;
    }

    long used() {
        return used;
    }

    long capacity() {
        return capacity;
    }
}
