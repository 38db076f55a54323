package org.apache.spark.shuffle.hcomm.internal.executor;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.shuffle.hcomm.internal.channels.Roster;
import org.apache.spark.shuffle.hcomm.internal.channels.StageChannels;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.shuffle.hcomm.internal.fetch.ReadResources;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.read.DirectoryCache;
import org.apache.spark.shuffle.hcomm.internal.read.ReadPlanner;
import org.apache.spark.shuffle.hcomm.internal.read.StageLeases;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;
import org.apache.spark.shuffle.hcomm.internal.window.WindowReadPlanner;
import org.apache.spark.shuffle.hcomm.internal.window.WindowReads;
import org.apache.spark.shuffle.hcomm.internal.window.WindowServer;
import org.apache.spark.shuffle.hcomm.internal.write.MovedOutputs;
import org.hcomm.bridge.transport.CommunicatorTransport;
import org.hcomm.bridge.transport.LiveObjects;
import org.hcomm.bridge.transport.Transport;

/**
 * What one-sided reads need on one transport, built in order and closed in the reverse order HComm needs. On the
 * endpoint path, built once at start: the receive buffer ({@link ReadResources}), the send arena and published
 * outputs ({@link MapOutputPublisher}), the stage channels, and the planner readers get. On the communicator path,
 * built when a communicator formed ({@link #windowed}): its windows' reads and the serving of this member's outputs.
 * Immutable once built, its parts thread-safe; {@link #retire} works on a thread of its own.
 */
final class OneSidedParts {
    private static final org.slf4j.Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    /** The communicator these parts read in (0: the endpoint path). */
    final long epoch;
    final Transport transport;
    /** The endpoint path's parts, from here to {@code directories} (null on the communicator path). */
    final ReadResources resources;
    final MapOutputPublisher publisher;
    final MovedOutputs moved;
    final StageChannels channels;
    final StageLeases leases;
    final DirectoryCache directories;
    final ReadPlanner planner;
    /** The communicator path's reads through windows (null on the endpoint path). */
    final WindowReads windowReads;
    private final WindowServer windowServer;

    /**
     * The parts of a communicator: no receive buffer, arena, stage channels or directory (nothing is staged or
     * published); readers read members through {@code reads}, and {@code server} serves this member's outputs in
     * the communicator until the parts close.
     */
    private OneSidedParts(CommunicatorTransport transport, long epoch, WindowReads reads, WindowServer server,
            ReadPlanner planner) {
        this.epoch = epoch;
        this.transport = transport;
        this.resources = null;
        this.publisher = null;
        this.moved = null;
        this.channels = null;
        this.leases = null;
        this.directories = null;
        this.planner = planner;
        this.windowReads = reads;
        this.windowServer = server;
        server.serve(epoch, transport.windows());
    }

    /**
     * The parts of communicator {@code j} on {@code transport}: every other member with a window server
     * ({@code j.windowPorts()}) is read through a window; a pair a failed exchange poisoned is reported to
     * {@code driver}.
     */
    static OneSidedParts windowed(CommunicatorTransport transport, Messages.JoinCommunicator j,
            HcommSettings settings, String executorId, String host, ShuffleMetrics metrics, WindowServer server,
            DriverClient driver) {
        // a failed exchange poisons its pair's channel for this communicator: the driver forms a new one to heal it
        if (driver != null) {
            transport.windows().onPoisoned(peer -> {
                try {
                    driver.pairPoisoned(j.epoch(), peer, "a window exchange between executors " + executorId + " and "
                            + peer + " did not end balanced");
                } catch (java.io.IOException e) {
                    LOG.warn("Executor {} could not tell the driver its channel to {} is poisoned", executorId, peer, e);
                }
            });
        }
        Map<String, InetSocketAddress> servers = new HashMap<>();
        for (int r = 0; r < j.members().size(); r++) {
            int port = j.windowPorts().get(r);
            if (r != j.rank() && port > 0) {
                servers.put(j.members().get(r), InetSocketAddress.createUnresolved(j.hosts().get(r), port));
            }
        }
        WindowReads reads = new WindowReads(executorId, j.epoch(), transport.windows(), servers, server.readerAuth(),
                metrics, settings.readTimeout().toMillis(), settings.maxBytesInFlight());
        return new OneSidedParts(transport, j.epoch(), reads, server,
                ReadPlanner.windowed(executorId, settings.fallback(), metrics,
                        new WindowReadPlanner(host, settings.fallback(), reads)));
    }

    /** True for a communicator's parts, false for the endpoint path's. */
    boolean onCommunicator() {
        return windowReads != null;
    }

    /**
     * Builds the endpoint path's parts on {@code transport}; on a failure closes what it built (the transport too)
     * and rethrows.
     */
    OneSidedParts(Transport transport, HcommSettings settings, Roster roster, String host, ShuffleMetrics metrics,
            DriverClient driver) {
        String executorId = roster.executorId();
        this.epoch = 0;
        this.transport = transport;
        ReadResources r = null;
        MapOutputPublisher p = null;
        StageChannels c = null;
        try {
            r = new ReadResources(transport, metrics, executorId, settings.receiveBufferSize(),
                    settings.readChunkSize(), settings.maxBytesInFlight(), settings.readTimeout().toMillis());
            p = new MapOutputPublisher(transport, settings.sendArenaSize(), settings.publishedIndexMaxBytes(), metrics,
                    driver, settings.writeTarget() == HcommSettings.WriteTarget.ARENA);
            c = new StageChannels(transport, metrics, roster, r::reclaim);
        } catch (RuntimeException | Error e) {
            for (AutoCloseable built : new AutoCloseable[] {p, r, transport}) {
                try {
                    if (built != null) {
                        built.close();
                    }
                } catch (Exception closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
        this.resources = r;
        this.publisher = p;
        this.channels = c;
        this.moved = new MovedOutputs(publisher, metrics);
        this.leases = new StageLeases(channels, driver, settings.channelSetupTimeout().toMillis());
        this.directories = new DirectoryCache(driver);
        this.planner = new ReadPlanner(executorId, host, settings.fallback(), metrics, resources, leases, directories,
                new Blame(executorId, channels, resources));
        this.windowReads = null;
        this.windowServer = null;
    }

    /**
     * The close steps, in order. Communicator path: stop serving, the window reads, the transport, {@code reportLeak}.
     * Endpoint path: channels, receive buffer, outputs; then, once the send arena is unmapped (at once, or when the
     * last of Spark's readers and writers of it is done: the transport's close would free it too), the transport and
     * {@code reportLeak}.
     */
    List<Runnable> closeSteps(Runnable reportLeak) {
        List<Runnable> steps = new ArrayList<>();
        if (onCommunicator()) {
            steps.add(() -> windowServer.stopServing(epoch));
            steps.add(windowReads::close);
            steps.add(() -> {
                try {
                    transport.close();
                } finally {
                    reportLeak.run();
                }
            });
            return steps;
        }
        steps.add(channels::close);
        steps.add(resources::close);
        steps.add(() -> publisher.close(() -> {
            try {
                transport.close();
            } finally {
                reportLeak.run();
            }
        }));
        return steps;
    }

    /**
     * Retires a communicator's parts, on a thread of their own: {@code close} runs {@code waitMs} after the switch
     * (new tasks already plan with the new parts; nothing is staged here, so readers of this communicator finish or
     * fail within the wait).
     */
    void retire(String executorId, long waitMs, Runnable close) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(waitMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            close.run();
            LOG.info("Executor {} retired communicator {}", executorId, epoch);
        }, "hcomm-communicator-retire-" + epoch);
        t.setDaemon(true);
        t.start();
    }

    /** What the library still counts alive (null when it cannot tell). */
    LiveObjects leftOver() {
        return transport.liveObjects();
    }
}
