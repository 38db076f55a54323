package org.hcomm.bridge;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.Objects;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.HcommAbi;
import org.hcomm.bridge.raw.HcommOnThreadLibrary;
import org.hcomm.bridge.raw.HcommStreamLibrary;
import org.hcomm.bridge.read.ReadStrategy;

/**
 * An HComm thread ({@code HcommThreadAlloc}): not an OS thread but the queue (device stream on A2/A3, a soft stream
 * in soft HComm) that {@code HcommReadOnThread} appends to. Owns the thread handle; {@link #close()}
 * ({@code HcommThreadFree}) is idempotent, and afterwards every method throws {@link IllegalStateException}.
 *
 * <p>Threading: the handle may be used from any OS thread, but batch mode is per OS thread, so one
 * {@link ReadStrategy} per OS thread; {@link #close()} must not overlap with reads on the thread.
 */
public final class CommThread extends NativeOwner {
    private final Engine engine;
    private final long handle;
    private Pointer stream;

    private CommThread(Engine engine, long handle) {
        super("CommThread 0x" + Long.toHexString(handle));
        this.engine = engine;
        this.handle = handle;
    }

    /** Allocates one thread on {@code engine} with {@code notifyNum} notifies (0..64). */
    public static CommThread allocate(Engine engine, int notifyNum) {
        Objects.requireNonNull(engine, "engine");
        if (notifyNum < 0 || notifyNum > 64) {
            throw new IllegalArgumentException("notifyNum must be in [0, 64], got " + notifyNum);
        }
        HcommNative.ensureStrategy(ReadStrategy.Kind.ON_THREAD);
        long[] out = new long[1];
        int rc = HcommOnThreadLibrary.HcommThreadAlloc(engine.code(), 1, new int[] {notifyNum}, out);
        HcommException.check(rc, "HcommThreadAlloc", "engine=" + engine + " notifyNum=" + notifyNum);
        return new CommThread(engine, out[0]);
    }

    public Engine engine() {
        return engine;
    }

    /** The thread's stream ({@code HcommThreadResGetInfo(STREAM)}), an opaque address. */
    public synchronized long stream() {
        return Pointer.nativeValue(streamPointer());
    }

    /** {@code aclrtSynchronizeStream} on the thread's stream: waits until everything queued on it completed. */
    public void synchronizeStream() {
        HcommNative.ensureStreamSync();
        Pointer s;
        synchronized (this) {
            s = streamPointer();
        }
        int rc = AclRuntime.aclrtSynchronizeStream(s);
        HcommException.check(rc, "aclrtSynchronizeStream", context());
    }

    private Pointer streamPointer() {
        checkOpen();
        HcommNative.ensureStreamSync();
        if (stream == null) {
            PointerByReference info = new PointerByReference();
            int rc = HcommStreamLibrary.HcommThreadResGetInfo(handle, HcommAbi.THREAD_RES_TYPE_STREAM,
                    HcommAbi.ACLRT_STREAM_SIZE, info);
            HcommException.check(rc, "HcommThreadResGetInfo", context());
            stream = info.getValue();
        }
        return stream;
    }

    /** The native handle, for the reads queued on this thread; throws when closed. */
    public long handle() {
        checkOpen();
        return handle;
    }

    /** The ids an error names. */
    public String context() {
        return "thread=0x" + Long.toHexString(handle) + " engine=" + engine;
    }

    /** {@code HcommThreadFree} ({@link #close()}). */
    @Override
    protected void release() {
        int rc = HcommOnThreadLibrary.HcommThreadFree(new long[] {handle}, 1);
        HcommException.check(rc, "HcommThreadFree", context());
    }
}
