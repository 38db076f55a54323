package org.hcomm.shuffle.benchmarks.scale;

import java.util.function.Consumer;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import scala.concurrent.Future;
import scala.reflect.ClassTag;

/**
 * A simulated executor's agent as the driver sees it: an {@link RpcEndpointRef} whose {@code send} hands the message
 * to the simulation instead of Spark's RPC. {@code DriverState} only ever calls {@code send} on an agent
 * ({@code Peers}, {@code ProvisionStage}, {@code EndStage}), so subclassing Spark's abstract reference is enough and
 * the driver code needs no seam. Not serialisable in any useful way (the simulation never ships it).
 */
final class RecordingAgentRef extends RpcEndpointRef {
    private static final long serialVersionUID = 1L;
    private final RpcAddress address;
    private final transient Consumer<Object> sink;

    RecordingAgentRef(SparkConf conf, String executorId, int port, Consumer<Object> sink) {
        super(conf);
        this.address = new RpcAddress("sim-" + executorId, port);
        this.sink = sink;
    }

    @Override
    public RpcAddress address() {
        return address;
    }

    @Override
    public String name() {
        return "hcomm-shuffle-agent";
    }

    @Override
    public void send(Object message) {
        sink.accept(message);
    }

    @Override
    public <T> Future<T> ask(Object message, RpcTimeout timeout, ClassTag<T> tag) {
        throw new UnsupportedOperationException("the driver never asks an executor agent");
    }
}
