package org.hcomm.bridge.raw;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

/** The few libc calls the bridge makes itself (file and anonymous mappings), JNA interface mapping; Linux values. */
public interface LibC extends Library {
    int O_RDONLY = 0;
    int PROT_READ = 1;
    int PROT_WRITE = 2;
    int MAP_SHARED = 0x01;
    int MAP_PRIVATE = 0x02;
    int MAP_ANONYMOUS = 0x20;
    /** What mmap returns on failure. */
    long MAP_FAILED = -1L;

    int open(String path, int flags);

    int close(int fd);

    Pointer mmap(Pointer addr, long length, int prot, int flags, int fd, long offset);

    int munmap(Pointer addr, long length);

    /** libc, loaded on first use. */
    static LibC get() {
        return Holder.C;
    }

    /** Lazy holder: libc is loaded when first needed, not when this interface is. */
    final class Holder {
        static final LibC C = Native.load("c", LibC.class);

        private Holder() {}
    }
}
