package org.hcomm.bridge.transport;

import java.nio.file.Path;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

/** Read-only file mappings through libc, so a mapping can be unmapped exactly when its owner closes it. */
final class MappedFiles {
    private static final int O_RDONLY = 0;
    private static final int PROT_READ = 1;
    private static final int MAP_SHARED = 1;

    interface LibC extends Library {
        int open(String path, int flags);

        int close(int fd);

        Pointer mmap(Pointer addr, long length, int prot, int flags, int fd, long offset);

        int munmap(Pointer addr, long length);
    }

    private static final class Holder {
        static final LibC C = Native.load("c", LibC.class);
    }

    private MappedFiles() {
    }

    /** The address of a read-only shared mapping of the first {@code bytes} of {@code file}. */
    static long map(Path file, long bytes) throws TransportException {
        int fd = Holder.C.open(file.toString(), O_RDONLY);
        if (fd < 0) {
            throw new TransportException("open", -1, "cannot open " + file + ": errno " + Native.getLastError(),
                    null);
        }
        try {
            Pointer p = Holder.C.mmap(null, bytes, PROT_READ, MAP_SHARED, fd, 0);
            long addr = Pointer.nativeValue(p);
            if (addr == -1L) {
                throw new TransportException("mmap", -1, "cannot map " + bytes + " bytes of " + file + ": errno "
                        + Native.getLastError(), null);
            }
            return addr;
        } finally {
            Holder.C.close(fd);
        }
    }

    static void unmap(long address, long bytes) {
        Holder.C.munmap(new Pointer(address), bytes);
    }
}
