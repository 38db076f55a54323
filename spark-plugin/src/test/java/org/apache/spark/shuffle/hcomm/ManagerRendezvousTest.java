package org.apache.spark.shuffle.hcomm;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The shuffle manager's side of the rendezvous with the plugin, in a JVM where no plugin started (as when the two were
 * loaded by different class loaders and each has its own {@code ExecutorRuntime.current()}): an executor that names
 * the plugin says so, as an error under fallback {@code never}; anywhere else the manager is Spark's sort shuffle.
 */
class ManagerRendezvousTest {
    private static SparkConf conf(String plugins, String fallback) {
        return new SparkConf(false).set("spark.plugins", plugins).set("spark.shuffle.hcomm.fallback", fallback);
    }

    @Test
    void anExecutorNamingThePluginWithoutItsRuntimeIsAnErrorUnderFallbackNever() {
        HcommShuffleManager m = new HcommShuffleManager(conf("com.example.Other, " + HcommShufflePlugin.class.getName(),
                "never"), false);
        IllegalStateException e = assertThrows(IllegalStateException.class, m::runtime);
        assertTrue(e.getMessage().contains("different class loaders"), e.getMessage());
        assertTrue(e.getMessage().contains("spark.shuffle.hcomm.fallback=never"), e.getMessage());
        m.stop();
    }

    @Test
    void aPluginInTheClusterWideDefaultListCountsToo() {
        HcommShuffleManager m = new HcommShuffleManager(new SparkConf(false)
                .set("spark.plugins.defaultList", HcommShufflePlugin.class.getName())
                .set("spark.shuffle.hcomm.fallback", "never"), false);
        assertThrows(IllegalStateException.class, m::runtime);
        m.stop();
    }

    @Test
    void underFallbackAutoItIsSparksShuffle() {
        HcommShuffleManager m = new HcommShuffleManager(conf(HcommShufflePlugin.class.getName(), "auto"), false);
        assertNull(m.runtime());
        m.stop();
    }

    @Test
    void withoutThePluginOrOnTheDriverTheManagerIsSparksShuffle() {
        HcommShuffleManager executor = new HcommShuffleManager(conf("com.example.Other", "never"), false);
        assertNull(executor.runtime());
        executor.stop();
        HcommShuffleManager driver = new HcommShuffleManager(conf(HcommShufflePlugin.class.getName(), "never"), true);
        assertNull(driver.runtime());
        driver.stop();
    }
}
