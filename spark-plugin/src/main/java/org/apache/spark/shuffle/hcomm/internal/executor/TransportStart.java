package org.apache.spark.shuffle.hcomm.internal.executor;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;

import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.hcomm.bridge.read.ReadStrategy;
import org.hcomm.bridge.transport.HcommTransport;
import org.hcomm.bridge.transport.Transport;
import org.hcomm.bridge.transport.TransportOptions;
import org.slf4j.Logger;

/**
 * How an executor's transport starts on the endpoint path (its endpoint at start), and what happens when HComm
 * cannot serve the executor at all: fallback decides between Spark's fetch and an error.
 */
final class TransportStart {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private TransportStart() {}

    /** The endpoint path's transport, or null (with fallback {@code auto}) when HComm cannot open it. */
    static Transport endpoint(PluginContext plugin, HcommSettings settings, String host, String secret) {
        Throwable why;
        try {
            if (host == null) { // the transport's failure: fallback `auto` fetches with Spark, `never` fails here
                throw new IllegalStateException("the executor started its plugins before Spark gave its block "
                        + "manager an id, so it cannot say where its HComm endpoint is");
            }
            InetAddress address = InetAddress.getByName(host);
            if (!(address instanceof Inet4Address)) {
                throw new IllegalStateException("host " + host + " resolves to " + address
                        + ", HComm host endpoints need IPv4");
            }
            return HcommTransport.open(new TransportOptions(address,
                    settings.readStrategy() == ReadStrategy.Kind.NBI_FENCE, secret, settings.readTimeout(),
                    settings.channelSetupTimeout()));
        } catch (RuntimeException | IOException e) {
            why = e;
        }
        unavailable(plugin, settings, onWrongApi(why));
        return null;
    }

    /**
     * The endpoint API's failure on a SoC that reads through communicators (Atlas A2/A3, where the endpoint API was
     * forced): the same failure, naming the SoC and the setting that chooses the path.
     */
    private static Throwable onWrongApi(Throwable why) {
        String soc;
        try {
            soc = org.hcomm.bridge.communicator.Acl.socName();
        } catch (RuntimeException | LinkageError e) {
            return why;
        }
        if (!CommunicatorMember.isA2OrA3(soc)) {
            return why;
        }
        return new IllegalStateException(why.getMessage() + " (this host's SoC " + soc + " reads one-sidedly through "
                + "HCCL communicators: set " + HcommConf.API.key() + "=communicator, or auto)", why);
    }

    /** HComm cannot serve this executor: fallback decides between Spark's fetch (a warning) and an error. */
    static void unavailable(PluginContext plugin, HcommSettings settings, Throwable cause) {
        String provider = settings.provider().toString();
        settings.fallback().fallBackOrFail(() -> new IllegalStateException("HComm is unavailable on executor "
                + plugin.executorID() + " (provider " + provider + "): " + cause.getMessage() + "; "
                + HcommConf.FALLBACK.key() + "=never forbids falling back to Spark's shuffle fetch", cause), null,
                () -> LOG.warn("HComm is unavailable on executor {} (provider {}): {}. Every shuffle block is fetched "
                        + "by Spark's transfer (set {}=never to make this an error)", plugin.executorID(), provider,
                        cause.toString(), HcommConf.FALLBACK.key()));
    }
}
