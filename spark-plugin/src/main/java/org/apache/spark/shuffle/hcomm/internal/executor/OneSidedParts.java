package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.hcomm.internal.channels.Roster;
import org.apache.spark.shuffle.hcomm.internal.channels.StageChannels;
import org.apache.spark.shuffle.hcomm.internal.conf.Fallback;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.fetch.Blame;
import org.apache.spark.shuffle.hcomm.internal.fetch.ReadResources;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.read.DirectoryCache;
import org.apache.spark.shuffle.hcomm.internal.read.ReadPlanner;
import org.apache.spark.shuffle.hcomm.internal.read.StageLeases;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.write.MapOutputPublisher;
import org.apache.spark.shuffle.hcomm.internal.write.MovedOutputs;
import org.hcomm.bridge.transport.LiveObjects;
import org.hcomm.bridge.transport.Transport;

/**
 * What one-sided reads need on one transport, built in order and closed in the reverse order HComm needs: the
 * receive buffer ({@link ReadResources}), the send arena and published outputs ({@link MapOutputPublisher}), the
 * stage channels, and the planner readers get. On the endpoint path the executor builds one at start; on the
 * communicator path one when its communicator formed.
 */
final class OneSidedParts {
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

    /** Builds the parts on {@code transport}; on a failure closes what it built (the transport too) and rethrows. */
    OneSidedParts(Transport transport, long epoch, SparkConf conf, Roster roster, String host, Fallback fallback,
            ShuffleMetrics metrics, DriverClient driver) {
        String executorId = roster.executorId();
        this.epoch = epoch;
        this.transport = transport;
        ReadResources r = null;
        MapOutputPublisher p = null;
        StageChannels c = null;
        try {
            r = new ReadResources(transport, metrics, executorId, HcommConf.RECEIVE_BUFFER_SIZE.get(conf),
                    (int) (long) HcommConf.READ_CHUNK_SIZE.get(conf), HcommConf.MAX_BYTES_IN_FLIGHT.get(conf),
                    HcommConf.READ_TIMEOUT.get(conf));
            p = new MapOutputPublisher(transport, HcommConf.SEND_ARENA_SIZE.get(conf),
                    (int) (long) HcommConf.PUBLISHED_INDEX_MAX_BYTES.get(conf), metrics, driver, epoch);
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
        this.leases = new StageLeases(channels, driver, HcommConf.CHANNEL_SETUP_TIMEOUT.get(conf));
        this.directories = new DirectoryCache(driver, epoch);
        this.planner = new ReadPlanner(executorId, host, fallback, metrics, resources, leases, directories,
                new Blame(executorId, channels, resources));
    }

    /** The close steps, in order: channels, receive buffer, outputs, transport, then {@code after} (a leak report). */
    List<Runnable> closeSteps(Runnable reportLeak) {
        List<Runnable> steps = new ArrayList<>();
        steps.add(channels::close);
        steps.add(resources::close);
        steps.add(publisher::close);
        steps.add(transport::close);
        steps.add(reportLeak);
        return steps;
    }

    /** What the library still counts alive (null when it cannot tell). */
    LiveObjects leftOver() {
        return transport.liveObjects();
    }
}
