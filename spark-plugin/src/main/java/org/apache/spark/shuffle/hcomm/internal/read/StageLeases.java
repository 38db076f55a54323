package org.apache.spark.shuffle.hcomm.internal.read;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.shuffle.hcomm.internal.channels.StageChannels;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.hcomm.bridge.transport.PeerChannels;
import org.slf4j.Logger;

/**
 * How reduce tasks hold their stage attempt's channels: a lease keeps them from being destroyed under the task's
 * reads, and an executor's first lease of an attempt asks the driver to make sure the attempt is provisioned (it may
 * have joined after the driver built the mesh). Thread-safe.
 */
public final class StageLeases {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final StageChannels channels;
    private final DriverClient driver;
    private final long setupTimeoutMs;
    private final Set<StageAttempt> ensured = ConcurrentHashMap.newKeySet();

    public StageLeases(StageChannels channels, DriverClient driver, long setupTimeoutMs) {
        this.channels = channels;
        this.driver = driver;
        this.setupTimeoutMs = setupTimeoutMs;
    }

    /** Takes a lease on the attempt's channels (false: the attempt ended, its channels are gone). */
    boolean acquire(StageAttempt stage) {
        if (!channels.acquire(stage)) {
            return false;
        }
        if (ensured.add(stage)) {
            try {
                driver.ensureStage(stage);
            } catch (Exception e) {
                LOG.warn("Executor {} could not ask the driver for the channels of {}", driver.executorId(), stage, e);
            }
        }
        return true;
    }

    void release(StageAttempt stage) {
        channels.release(stage);
    }

    /** The READY channel to {@code peer}, waiting at most the set-up timeout; null when there is none by then. */
    PeerChannels.PeerChannel channelTo(StageAttempt stage, String peer) {
        try {
            return channels.await(stage, peer, setupTimeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The driver ended the attempt: a later lease of it needs no ask. */
    public void ended(StageAttempt stage) {
        ensured.remove(stage);
    }
}
