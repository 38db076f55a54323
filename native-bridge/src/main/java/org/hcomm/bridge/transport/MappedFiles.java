package org.hcomm.bridge.transport;

import java.nio.file.Path;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import org.hcomm.bridge.raw.LibC;

/** Read-only file mappings through libc, so a mapping can be unmapped exactly when its owner closes it. */
final class MappedFiles {
    private MappedFiles() {
    }

    /** The address of a read-only shared mapping of the first {@code bytes} of {@code file}. */
    static long map(Path file, long bytes) throws TransportException {
        int fd = LibC.get().open(file.toString(), LibC.O_RDONLY);
        if (fd < 0) {
            throw new TransportException("open", -1, "cannot open " + file + ": errno " + Native.getLastError(),
                    null);
        }
        try {
            Pointer p = LibC.get().mmap(null, bytes, LibC.PROT_READ, LibC.MAP_SHARED, fd, 0);
            long addr = Pointer.nativeValue(p);
            if (addr == LibC.MAP_FAILED) {
                throw new TransportException("mmap", -1, "cannot map " + bytes + " bytes of " + file + ": errno "
                        + Native.getLastError(), null);
            }
            return addr;
        } finally {
            LibC.get().close(fd);
        }
    }

    static void unmap(long address, long bytes) {
        LibC.get().munmap(new Pointer(address), bytes);
    }
}
