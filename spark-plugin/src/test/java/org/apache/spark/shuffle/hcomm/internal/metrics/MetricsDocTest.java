package org.apache.spark.shuffle.hcomm.internal.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import com.codahale.metrics.MetricRegistry;
import org.apache.spark.shuffle.hcomm.internal.conf.ReadmeTable;
import org.junit.jupiter.api.Test;

/**
 * The README's metrics table is generated from {@link MetricEntry}; this test fails when it drifts (regenerate it
 * with {@code -Dhcomm.regenerateDocs=true}), and when a real {@link ShuffleMetrics} registry holds other metrics than
 * the documented ones, or of another type.
 */
class MetricsDocTest {
    @Test
    void readmeTableMatchesTheCode() throws IOException {
        ReadmeTable.assertCurrent("metrics-table", MetricsDocTest.class, "metrics", MetricEntry.markdownTable());
    }

    @Test
    void anExecutorRegistersEveryDocumentedMetricWithItsType() {
        MetricRegistry registry = ShuffleMetrics.forExecutor().metricRegistry();
        assertEquals(names(Arrays.stream(MetricEntry.values()).collect(Collectors.toSet())), registry.getNames());
        assertEquals(namesOf(MetricEntry.Kind.COUNTER), registry.getCounters().keySet());
        assertEquals(namesOf(MetricEntry.Kind.TIMER), registry.getTimers().keySet());
        assertEquals(namesOf(MetricEntry.Kind.GAUGE), registry.getGauges().keySet());
    }

    @Test
    void theDriverRegistersTheDocumentedTotalsAsGauges() {
        MetricRegistry registry = ShuffleMetrics.forDriver().metricRegistry();
        Set<String> documented = names(Arrays.stream(MetricEntry.values()).filter(MetricEntry::onDriver)
                .collect(Collectors.toSet()));
        assertEquals(documented, registry.getNames());
        assertEquals(documented, registry.getGauges().keySet());
    }

    @Test
    void theDriverSumsTheExecutorsLatestReports() {
        ShuffleMetrics executor = ShuffleMetrics.forExecutor();
        executor.bytesReadOneSided.inc(300);
        executor.channelsCreated.inc(4);
        executor.channelsDestroyed.inc(1);
        ShuffleMetrics driver = ShuffleMetrics.forDriver();
        driver.report("1", executor.snapshot());
        driver.report("2", executor.snapshot());
        executor.bytesReadOneSided.inc(50);
        driver.report("2", executor.snapshot()); // replaces executor 2's earlier report
        assertEquals(650, driver.clusterTotal(MetricEntry.BYTES_READ_ONE_SIDED.metricName()));
        assertEquals(6, driver.clusterTotal(MetricEntry.CHANNELS_LIVE.metricName()));
    }

    private static Set<String> namesOf(MetricEntry.Kind kind) {
        return names(Arrays.stream(MetricEntry.values()).filter(m -> m.kind() == kind).collect(Collectors.toSet()));
    }

    private static Set<String> names(Set<MetricEntry> metrics) {
        return metrics.stream().map(MetricEntry::metricName).collect(Collectors.toCollection(java.util.TreeSet::new));
    }
}
