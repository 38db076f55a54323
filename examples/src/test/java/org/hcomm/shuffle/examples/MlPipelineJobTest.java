package org.hcomm.shuffle.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A small {@link MlPipelineJob} on two executor JVMs, with Spark's built-in shuffle and then with the HComm shuffle
 * with fallback {@code never}, on the endpoint path and on the communicator path (soft HComm as an Atlas A2 server):
 * the same features, model metrics within the job's tolerance, and every block read one-sidedly. (The default line
 * only: examples.tests.skip in the root pom.)
 */
class MlPipelineJobTest {
    private static final String MASTER = "local-cluster[2,1,1024]";
    /** 60,000 events and a few iterations of each model: 85-100 s for both runs here. */
    private static final MlPipelineJob.Size SIZE = new MlPipelineJob.Size(60_000, 5, 3);

    /** The job's conf, with the executor JVM options of the build's tests (the root pom's test.executorJavaOptions). */
    private static SparkConf conf(boolean hcomm) {
        return ClusterSupport.conf("hcomm-ml-test", MASTER, hcomm).set("spark.executor.extraJavaOptions",
                System.getProperty("hcomm.test.executorJavaOptions", "-XX:+UseSerialGC"));
    }

    /** Spark's built-in shuffle's answer, computed once for both tests. */
    private static MlPipelineJob.Result builtin;

    private static synchronized MlPipelineJob.Result builtin() throws InterruptedException {
        if (builtin == null) {
            builtin = MlPipelineJob.run(conf(false), SIZE);
            assertTrue(builtin.answer().featureRows() > 0, "no feature rows");
        }
        return builtin;
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS) // about 100 s here; a loaded host takes two to three times that
    void hcommShuffleGivesTheBuiltinShufflesFeaturesAndModelMetrics() throws Exception {
        MlPipelineJob.Result hcomm = MlPipelineJob.run(conf(true).set("spark.shuffle.hcomm.fallback", "never"), SIZE);

        assertNull(builtin().answer().disagreement(hcomm.answer()));
        Map<String, Long> metrics = hcomm.metrics();
        assertTrue(metrics.getOrDefault("bytesReadOneSided", 0L) > 0, "nothing read one-sidedly: " + metrics);
        assertEquals(0L, metrics.get("bytesReadFallback"), "fallback bytes: " + metrics);
        // hcommMetrics waits until the executors' late stage reports are in (created = destroyed, none live)
        assertTrue(metrics.getOrDefault("channelsCreated", 0L) > 0, "no channel created: " + metrics);
        assertEquals(metrics.get("channelsCreated"), metrics.get("channelsDestroyed"), "channels: " + metrics);
        assertEquals(0L, metrics.get("channelsLive"), "channels live: " + metrics);
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void onAnAtlasA2ServerTheCommunicatorPathGivesTheSameFeaturesAndModelMetrics() throws Exception {
        // soft HComm as an Atlas A2 server: api auto takes the HCCL communicator path (owners stream every remote
        // byte through windows of their HCCL buffers, host to device; readers read it one-sidedly and copy it back)
        MlPipelineJob.Result hcomm = MlPipelineJob.run(conf(true).set("spark.shuffle.hcomm.fallback", "never")
                .set("spark.executorEnv.HCOMM_SOFT_SOC", "Ascend910B3")
                .set("spark.shuffle.hcomm.communicator.settle", "300ms"), SIZE);

        assertNull(builtin().answer().disagreement(hcomm.answer()));
        Map<String, Long> metrics = hcomm.metrics();
        assertTrue(metrics.getOrDefault("bytesReadOneSided", 0L) > 0, "nothing read one-sidedly: " + metrics);
        assertTrue(metrics.getOrDefault("windowsOpened", 0L) > 0, "no window opened: " + metrics);
        assertEquals(0L, metrics.get("bytesReadFallback"), "fallback bytes: " + metrics);
        assertEquals(2L, metrics.get("communicatorsLive"), "one communicator per executor: " + metrics);
    }
}
