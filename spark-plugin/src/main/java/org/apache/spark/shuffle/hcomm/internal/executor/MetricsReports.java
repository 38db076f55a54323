package org.apache.spark.shuffle.hcomm.internal.executor;

import java.io.IOException;

import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.metrics.ShuffleMetrics;
import org.apache.spark.shuffle.hcomm.internal.rpc.DriverClient;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageAttempt;
import org.apache.spark.shuffle.hcomm.internal.rpc.StageEnd;
import org.slf4j.Logger;

/**
 * What an executor tells the driver of its counters: a stage report once a stage attempt's channels are destroyed,
 * and, while it has no one-sided parts or a communicator's (so no channels, and no stage report would ever carry its
 * counters), a metrics report after a task, or after a retired communicator closed, when they changed (so the driver
 * sees the bytes Spark's fetch read, and the communicators live). Each report is snapshot and sent under one lock, so the driver, which keeps the latest, never receives an older one last.
 * Thread-safe: stage reports come from whichever thread destroyed the channels.
 */
final class MetricsReports {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final String executorId;
    private final DriverClient driver;
    private final ShuffleMetrics metrics;
    private ShuffleMetrics.Snapshot lastTaskReport; // guarded by this

    MetricsReports(String executorId, DriverClient driver, ShuffleMetrics metrics) {
        this.executorId = executorId;
        this.driver = driver;
        this.metrics = metrics;
    }

    synchronized void stageEnded(StageAttempt stage, StageEnd ended) {
        try {
            driver.stageReport(stage, ended, metrics.snapshot());
        } catch (IOException e) {
            LOG.warn("Executor {} could not report the end of {}", executorId, stage, e);
        }
    }

    synchronized void taskEnded(StageAttempt stage) {
        ShuffleMetrics.Snapshot now = metrics.snapshot();
        if (now.equals(lastTaskReport)) {
            return;
        }
        try {
            driver.metricsReport(stage, now);
            lastTaskReport = now;
        } catch (IOException e) {
            LOG.warn("Executor {} could not report its shuffle metrics", executorId, e);
        }
    }
}
