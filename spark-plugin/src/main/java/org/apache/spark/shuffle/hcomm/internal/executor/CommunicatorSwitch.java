package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.function.BooleanSupplier;

import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.window.WindowServer;
import org.hcomm.bridge.transport.CommunicatorTransport;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;

/**
 * An executor's part, on the communicator path (Atlas A2/A3), in the driver's forming of communicators: the root info
 * when it is the first member, its join and the parts it builds on the new communicator (kept pending), then taking
 * them up when the driver says every member built its own, or dropping them when it says the forming failed; the
 * parts replaced retire once their reads ended. Called by the agent: the join on a thread of its own (it blocks until
 * every member joined), the rest on the agent's thread; the parts change under {@link PartsGenerations}' monitor.
 */
final class CommunicatorSwitch {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final String executorId;
    private final CommunicatorMember member;
    private final PartsGenerations parts;
    private final HcommSettings settings;
    private final String host;
    private final ShuffleMetrics metrics;
    private final DriverClient driver;
    private final BooleanSupplier closed;
    /** Where this member serves its outputs through windows. */
    private final WindowServer windowServer;
    /** Sends the counters to the driver when no task or stage report would (after a retired communicator closed). */
    private final Runnable report;

    CommunicatorSwitch(String executorId, CommunicatorMember member, PartsGenerations parts, HcommSettings settings,
            String host, ShuffleMetrics metrics, DriverClient driver, BooleanSupplier closed,
            WindowServer windowServer, Runnable report) {
        this.windowServer = windowServer;
        this.report = report;
        this.executorId = executorId;
        this.member = member;
        this.parts = parts;
        this.settings = settings;
        this.host = host;
        this.metrics = metrics;
        this.driver = driver;
        this.closed = closed;
    }

    /** The root info of a communicator the driver forms with this executor as its first member. */
    Messages.RootInfo rootInfo(Messages.RootInfoAsk ask) throws Exception {
        return member.rootInfo(ask);
    }

    /**
     * Joins the communicator the driver formed and builds the parts that read in it, kept as pending until the
     * driver says every member built its own ({@link #communicatorReady}). The reply says whether it joined. Runs on
     * its own thread (it blocks until every member joined).
     */
    Messages.Ack joinCommunicator(Messages.JoinCommunicator j) {
        OneSidedParts old = parts.current();
        if (closed.getAsBoolean()) {
            return new Messages.Ack(false, "executor " + executorId + " is not on the communicator path");
        }
        if (old != null && old.epoch >= j.epoch()) {
            return new Messages.Ack(false, "executor " + executorId + " is already in communicator " + old.epoch);
        }
        CommunicatorTransport t;
        try {
            t = member.join(j);
        } catch (TransportException | RuntimeException e) {
            parts.failed(e.getMessage());
            LOG.warn("Executor {} could not join communicator {}: {}", executorId, j.epoch(), e.toString());
            return new Messages.Ack(false, e.toString());
        }
        metrics.communicatorsJoined.inc();
        OneSidedParts fresh;
        try {
            fresh = OneSidedParts.windowed(t, j, settings, executorId, host, metrics, windowServer, driver);
        } catch (RuntimeException e) { // the parts closed the transport, and the communicator with it
            metrics.communicatorsDestroyed.inc();
            LOG.warn("Executor {} joined communicator {} but cannot read in it: {}", executorId, j.epoch(),
                    e.toString());
            return new Messages.Ack(false, e.toString());
        }
        OneSidedParts dropped = parts.offer(fresh);
        if (dropped == fresh) {
            ExecutorRuntime.runSteps(executorId, fresh.closeSteps(metrics.communicatorsDestroyed::inc));
            return new Messages.Ack(false, "executor " + executorId + " is shutting down");
        }
        if (dropped != null) { // built for a forming the driver never concluded (it gave up waiting for an answer)
            retire(dropped);
        }
        return Messages.Ack.OK;
    }

    /**
     * Every member of communicator {@code epoch} built its parts: this executor reads in it from now on; its earlier
     * communicator's parts are retired once their reads ended.
     */
    Messages.Ack communicatorReady(Messages.CommunicatorReady ready) {
        OneSidedParts old;
        try {
            old = parts.promote(ready.epoch());
        } catch (IllegalStateException e) {
            return new Messages.Ack(false, "executor " + executorId + ": " + e.getMessage());
        }
        if (old != null) {
            retire(old);
        }
        return Messages.Ack.OK;
    }

    /**
     * Communicator {@code epoch} did not form: what was built for it is closed, and while this executor has no
     * communicator the reason is what its reduce tasks fail with under fallback {@code never}
     * ({@link ExecutorRuntime#planner}).
     */
    Messages.Ack communicatorFailed(Messages.CommunicatorFailed failed) {
        OneSidedParts dropped = parts.drop(failed.epoch(), failed.reason());
        if (dropped != null) {
            retire(dropped);
        }
        return Messages.Ack.OK;
    }

    /** Closes an earlier communicator's parts once unused ({@link OneSidedParts#retire}), listed until then. */
    private void retire(OneSidedParts old) {
        old.retire(executorId, settings.readTimeout().toMillis() + 5000, parts.retiring(() -> {
            ExecutorRuntime.runSteps(executorId, old.closeSteps(metrics.communicatorsDestroyed::inc));
            report.run(); // communicatorsLive fell: the driver hears it even if no task runs here any more
        }));
    }
}
