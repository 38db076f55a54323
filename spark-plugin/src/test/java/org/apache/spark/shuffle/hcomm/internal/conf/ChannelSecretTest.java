package org.apache.spark.shuffle.hcomm.internal.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import scala.Option;

/** Which secret the channels prove, against Spark's real SecurityManager. */
class ChannelSecretTest {
    private static SecurityManager security(SparkConf conf) {
        return new SecurityManager(conf, Option.empty(),
                org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE());
    }

    private static SparkConf conf() {
        return new SparkConf(false).set("spark.app.id", "app-20261202-0001");
    }

    @Test
    void withoutAuthenticationTheDriverHandsEachApplicationARandomSecret() {
        SparkConf conf = conf();
        Map<String, String> first = ChannelSecret.forExecutors(HcommSettings.parse(conf));
        Map<String, String> second = ChannelSecret.forExecutors(HcommSettings.parse(conf));
        String secret = first.get(ChannelSecret.EXTRA_CONF_KEY);
        assertTrue(secret.matches("[0-9a-f]{64}"), secret);
        assertNotEquals(secret, second.get(ChannelSecret.EXTRA_CONF_KEY));
        assertFalse(secret.contains("app-20261202-0001"));
        assertEquals(secret, ChannelSecret.resolve(HcommSettings.parse(conf), security(conf), first));
        // Spark's UI, event log and logs redact it (spark.redaction.regex, applied by Spark's own Utils.redact)
        String key = "spark.plugins.internal.conf." + org.apache.spark.shuffle.hcomm.HcommShufflePlugin.class.getName()
                + "." + ChannelSecret.EXTRA_CONF_KEY;
        scala.collection.Seq<scala.Tuple2<String, String>> redacted = org.apache.spark.util.Utils.redact(conf,
                org.apache.spark.shuffle.hcomm.internal.compat.ScalaCollections.toSeq(
                        java.util.List.of(new scala.Tuple2<>(key, secret))));
        assertFalse(redacted.head()._2().contains(secret), redacted.head()._2());
    }

    @Test
    void executorWithoutTheDriversSecretRefusesToStart() {
        SparkConf conf = conf();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ChannelSecret.resolve(HcommSettings.parse(conf), security(conf), Map.of()));
        assertTrue(e.getMessage().contains(HcommConf.SECRET.key()), e.getMessage());
    }

    @Test
    void withAuthenticationItIsSparksOwnSecret() {
        SparkConf conf = conf().set("spark.authenticate", "true").set("spark.authenticate.secret", "s3cr3t-of-spark");
        assertEquals(Map.of(), ChannelSecret.forExecutors(HcommSettings.parse(conf)));
        assertEquals("s3cr3t-of-spark", ChannelSecret.resolve(HcommSettings.parse(conf), security(conf), Map.of()));
    }

    @Test
    void anExplicitSecretWins() {
        SparkConf conf = conf().set("spark.authenticate", "true").set("spark.authenticate.secret", "spark")
                .set(HcommConf.SECRET.key(), "mine");
        assertEquals(Map.of(), ChannelSecret.forExecutors(HcommSettings.parse(conf)));
        assertEquals("mine", ChannelSecret.resolve(HcommSettings.parse(conf), security(conf),
                Map.of(ChannelSecret.EXTRA_CONF_KEY, "x")));
    }
}
