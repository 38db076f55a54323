package org.apache.spark.shuffle.hcomm.internal.executor;

import java.util.function.Consumer;

import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.apache.spark.shuffle.hcomm.internal.rpc.Wire;
import org.slf4j.Logger;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The executor's RPC endpoint through which the driver tells it to create or destroy a stage's channels (Spark's
 * plugin RPC only goes from executors to the driver), and asks it to publish map outputs that moved to it. One
 * message at a time, in the order the driver sent them.
 */
final class ExecutorAgent implements ThreadSafeRpcEndpoint {
    static final String NAME = "hcomm-shuffle-agent";
    private static final Logger LOG = LogCategory.EXECUTOR_AGENT.logger();

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
        return packets(message -> {
            if (message instanceof Messages.Peers p) {
                runtime.peers(p);
            } else if (message instanceof Messages.ProvisionStage p) {
                runtime.provision(p);
            } else if (message instanceof Messages.EndStage e) {
                runtime.endStage(e);
            }
        }, e -> LOG.error("Executor {} failed to handle a message", runtime.executorId(), e));
    }

    @Override
    public PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
        return packets(message -> {
            if (message instanceof Messages.PublishLocal p) {
                context.reply(Wire.pack(runtime.publishLocal(p)));
            } else if (runtime.communicators() == null && isCommunicatorAsk(message)) {
                String why = "executor " + runtime.executorId() + " is not on the communicator path";
                if (message instanceof Messages.RootInfoAsk) {
                    context.sendFailure(new IllegalStateException(why));
                } else {
                    context.reply(Wire.pack(new Messages.Ack(false, why)));
                }
            } else if (message instanceof Messages.RootInfoAsk r) {
                try {
                    context.reply(Wire.pack(runtime.communicators().rootInfo(r)));
                } catch (Exception e) {
                    context.sendFailure(e);
                }
            } else if (message instanceof Messages.JoinCommunicator j) {
                // a join blocks until every member joined: on its own thread, so this agent keeps serving
                Thread t = new Thread(() -> context.reply(Wire.pack(runtime.communicators().joinCommunicator(j))),
                        "hcomm-communicator-join-" + j.epoch());
                t.setDaemon(true);
                t.start();
            } else if (message instanceof Messages.CommunicatorReady r) {
                context.reply(Wire.pack(runtime.communicators().communicatorReady(r)));
            } else if (message instanceof Messages.CommunicatorFailed f) {
                context.reply(Wire.pack(runtime.communicators().communicatorFailed(f)));
            } else {
                context.sendFailure(new IllegalArgumentException("unknown ask " + message));
            }
        }, e -> {
            LOG.error("Executor {} failed to answer an ask", runtime.executorId(), e);
            context.sendFailure(e);
        });
    }

    private static boolean isCommunicatorAsk(Object message) {
        return message instanceof Messages.RootInfoAsk || message instanceof Messages.JoinCommunicator
                || message instanceof Messages.CommunicatorReady || message instanceof Messages.CommunicatorFailed;
    }

    /** Handles the plugin's packets (anything else is not this endpoint's); a handler's failure goes to onError. */
    private static PartialFunction<Object, BoxedUnit> packets(Consumer<Object> handler,
            Consumer<RuntimeException> onError) {
        return new AbstractPartialFunction<>() {
            @Override
            public boolean isDefinedAt(Object wire) {
                return Wire.isPacket(wire);
            }

            @Override
            public BoxedUnit apply(Object wire) {
                try {
                    handler.accept(Wire.unpack(wire).message());
                } catch (RuntimeException e) {
                    onError.accept(e);
                }
                return BoxedUnit.UNIT;
            }
        };
    }
}
