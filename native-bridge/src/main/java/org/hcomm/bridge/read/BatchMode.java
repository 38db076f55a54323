package org.hcomm.bridge.read;

import java.util.function.Supplier;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.HcommDataPlaneLibrary;

/**
 * HComm's batch mode ({@code HcommBatchModeStart/End}) for one read context: between start and end the data-plane
 * calls of the OS thread that started it are recorded, and end submits them (mandatory on Atlas A2/A3). The batch
 * belongs to that OS thread: {@link #enter} opens it on the calling thread, and every later use or {@link #end}
 * from another thread throws {@link IllegalStateException} instead of reaching HComm.
 *
 * <p>Threading: not thread-safe; confined to the OS thread that opened the batch until it is ended.
 */
public final class BatchMode {
    private final Runnable beforeStart;
    private final Supplier<String> context;
    /** The OS thread whose batch is open, or null when none is. */
    private Thread owner;

    /**
     * @param beforeStart runs on the calling thread before each {@code HcommBatchModeStart} (for example
     *     {@code aclrtSetDevice}), or null
     * @param context what an error names (evaluated only for an error)
     */
    public BatchMode(Runnable beforeStart, Supplier<String> context) {
        this.beforeStart = beforeStart;
        this.context = context;
    }

    /**
     * Opens the batch on the calling OS thread unless it is open there already; {@code use} names the caller's
     * operation in the error when the batch is another thread's.
     */
    public void enter(String use) {
        if (owner == null) {
            if (beforeStart != null) {
                beforeStart.run();
            }
            int rc = HcommDataPlaneLibrary.HcommBatchModeStart(null);
            if (rc != 0) {
                throw new HcommException("HcommBatchModeStart", rc, context.get());
            }
            owner = Thread.currentThread();
        } else {
            checkOwner(use);
        }
    }

    /**
     * Ends the open batch ({@code HcommBatchModeEnd}): what was recorded starts. Returns false when no batch was
     * open. When End fails the batch still counts as ended.
     *
     * @throws HcommException when {@code HcommBatchModeEnd} fails
     */
    public boolean end(String use) {
        if (owner == null) {
            return false;
        }
        checkOwner(use);
        owner = null;
        int rc = HcommDataPlaneLibrary.HcommBatchModeEnd(null);
        if (rc != 0) {
            throw new HcommException("HcommBatchModeEnd", rc, context.get());
        }
        return true;
    }

    private void checkOwner(String use) {
        if (owner != Thread.currentThread()) {
            throw new IllegalStateException("batch opened on " + owner.getName() + ", " + use + " from "
                    + Thread.currentThread().getName());
        }
    }
}
