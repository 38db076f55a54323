package org.apache.spark.shuffle.hcomm.internal.conf;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;

import org.apache.spark.SecurityManager;

/**
 * The secret every channel handshake proves. In order: {@code spark.shuffle.hcomm.secret} when set; Spark's own
 * authentication secret when {@code spark.authenticate} is on (whatever made it: the configuration, YARN's
 * per-application secret, Kubernetes' secret); else a random 256-bit secret the driver makes for the application
 * and hands to its executors in the plugin's extra configuration (which Spark's executors fetch from the driver
 * over its RPC, and which Spark's UI and event log redact, as the key names a secret). Never the application id,
 * which every process that can list the cluster's applications knows.
 */
public final class ChannelSecret {
    /** The key in the plugin's extra configuration (Spark prefixes it with the plugin's name). */
    static final String EXTRA_CONF_KEY = "channel.secret";
    private static final SecureRandom RANDOM = new SecureRandom();

    private ChannelSecret() {
    }

    /** Driver: what to hand the executors, or nothing when they can find the secret themselves. */
    public static Map<String, String> forExecutors(HcommSettings settings) {
        if (settings.secret().isPresent() || settings.sparkAuthenticates()) {
            return Map.of();
        }
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        return Map.of(EXTRA_CONF_KEY, HexFormat.of().formatHex(secret));
    }

    /** Executor: the secret to configure the transport with. */
    public static String resolve(HcommSettings settings, SecurityManager security, Map<String, String> fromDriver) {
        if (settings.secret().isPresent()) {
            return settings.secret().get();
        }
        if (settings.sparkAuthenticates()) {
            String spark = security.getSecretKey();
            if (spark == null || spark.isEmpty()) {
                throw new IllegalStateException("spark.authenticate is on but this executor's SecurityManager has no "
                        + "secret; set " + HcommConf.SECRET.key() + " or Spark's authentication secret");
            }
            return spark;
        }
        String generated = fromDriver == null ? null : fromDriver.get(EXTRA_CONF_KEY);
        if (generated == null || generated.isEmpty()) {
            throw new IllegalStateException("the driver handed this executor no channel secret (is the plugin's "
                    + "driver component running? " + HcommConf.SECRET.key() + " sets one explicitly)");
        }
        return generated;
    }
}
