package org.apache.spark.shuffle.hcomm.internal;

import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The executor's RPC endpoint through which the driver tells it to create or destroy a stage's channels (Spark's
 * plugin RPC only goes from executors to the driver). One message at a time, in the order the driver sent them.
 */
final class ExecutorAgent implements ThreadSafeRpcEndpoint {
    static final String NAME = "hcomm-shuffle-agent";
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorAgent.class);

    private final RpcEnv rpcEnv;
    private final ExecutorRuntime runtime;

    ExecutorAgent(RpcEnv rpcEnv, ExecutorRuntime runtime) {
        this.rpcEnv = rpcEnv;
        this.runtime = runtime;
    }

    @Override
    public RpcEnv rpcEnv() {
        return rpcEnv;
    }

    @Override
    public PartialFunction<Object, BoxedUnit> receive() {
        return new AbstractPartialFunction<>() {
            @Override
            public boolean isDefinedAt(Object wire) {
                return Wire.isPacket(wire);
            }

            @Override
            public BoxedUnit apply(Object wire) {
                Object message = null;
                try {
                    message = Wire.unpack(wire).message();
                    if (message instanceof Messages.ProvisionStage p) {
                        runtime.provision(p);
                    } else if (message instanceof Messages.EndStage e) {
                        runtime.endStage(e);
                    }
                } catch (RuntimeException e) {
                    LOG.error("Executor {} failed to handle {}", runtime.executorId(), message, e);
                }
                return BoxedUnit.UNIT;
            }
        };
    }
}
