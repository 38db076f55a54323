package org.apache.spark.shuffle.hcomm.internal.executor;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkEnv;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
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
 * What one-sided reads need on one transport, built in order and closed in the reverse order HComm needs: the
 * receive buffer ({@link ReadResources}), the send arena and published outputs ({@link MapOutputPublisher}), the
 * stage channels, and the planner readers get. On the endpoint path the executor builds one at start; on the
 * communicator path one when its communicator formed. Immutable once built, its parts thread-safe; {@link #retire}
 * works on a thread of its own.
 */
final class OneSidedParts {
    private static final org.slf4j.Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();
    /** The communicator these parts read in (0: the endpoint path). */
    final long epoch;
    final Transport transport;
    final ReadResources resources;
    final MapOutputPublisher publisher;
    final MovedOutputs moved;
    final StageChannels channels;
    final StageLeases leases;
    final DirectoryCache directories;
    final ReadPlanner planner;
    /** Non-null when the communicator's HCCL buffer is a window (the store's parts above are then null). */
    final WindowReads windowReads;
    private final WindowServer windowServer;

    /**
     * The parts of a communicator whose HCCL buffer is a window: no receive buffer, arena, stage channels or
     * directory (nothing is staged or published); readers read members through {@code reads}, and {@code server}
     * serves this member's outputs in the communicator until the parts close.
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
     * The parts of communicator {@code j} on {@code transport}, windowed: every other member with a window server
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

    boolean windowed() {
        return windowReads != null;
    }

    /** Builds the parts on {@code transport}; on a failure closes what it built (the transport too) and rethrows. */
    OneSidedParts(Transport transport, long epoch, HcommSettings settings, Roster roster, String host,
            ShuffleMetrics metrics, DriverClient driver) {
        String executorId = roster.executorId();
        this.epoch = epoch;
        this.transport = transport;
        ReadResources r = null;
        MapOutputPublisher p = null;
        StageChannels c = null;
        try {
            r = new ReadResources(transport, metrics, executorId, settings.receiveBufferSize(),
                    settings.readChunkSize(), settings.maxBytesInFlight(), settings.readTimeout().toMillis());
            p = new MapOutputPublisher(transport, settings.sendArenaSize(), settings.publishedIndexMaxBytes(), metrics,
                    driver, epoch, settings.writeTarget() == HcommSettings.WriteTarget.ARENA);
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
        this.directories = new DirectoryCache(driver, epoch);
        this.planner = new ReadPlanner(executorId, host, settings.fallback(), metrics, resources, leases, directories,
                new Blame(executorId, channels, resources));
        this.windowReads = null;
        this.windowServer = null;
    }

    /**
     * The close steps, in order: channels, receive buffer, outputs; then, once the send arena is unmapped (at once,
     * or when the last of Spark's readers and writers of it is done: the transport's close would free it too), the
     * transport and {@code reportLeak}.
     */
    List<Runnable> closeSteps(Runnable reportLeak) {
        List<Runnable> steps = new ArrayList<>();
        if (windowed()) {
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
     * Retires these parts, on a thread of their own: outputs written only into their arena are copied to Spark's
     * files first (Spark's fetch and the next communicator's arena take them from there), then {@code close} runs
     * once no read uses them any more, at most {@code waitMs} after the switch (new tasks already plan with the new
     * parts; outputs staged here are staged again when a reader asks, or read by Spark's fetch).
     */
    void retire(String executorId, long waitMs, Runnable close) {
        if (windowed()) { // nothing staged: readers of the old communicator finish or fail within the wait
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
            return;
        }
        resources.stopLending();
        Thread t = new Thread(() -> {
            try {
                int copied = publisher.retire(
                        (IndexShuffleBlockResolver) SparkEnv.get().shuffleManager().shuffleBlockResolver(),
                        (output, e) -> LOG.warn("Executor {} could not copy shuffle {} map {} out of communicator {}'s "
                                + "arena to Spark's files; its readers fail and Spark recomputes it", executorId,
                                output[0], output[1], epoch, e));
                LOG.info("Executor {} copied {} map outputs out of communicator {}'s arena", executorId, copied,
                        epoch);
            } catch (RuntimeException e) {
                LOG.warn("Executor {} could not copy the map outputs written into communicator {}'s arena to "
                        + "Spark's files; their readers fail and Spark recomputes them", executorId, epoch, e);
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            while (resources.chunksNotFree() > 0 && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
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
