package org.apache.spark.shuffle.hcomm;

import java.util.Map;

import com.codahale.metrics.MetricRegistry;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;

/**
 * A plugin context for unit tests that only knows its executor id and resources (what the executor side reads of
 * it outside a running Spark); talking to the driver is not possible.
 */
public record TestPluginContext(String executorID, Map<String, ResourceInformation> resources)
        implements PluginContext {
    @Override
    public MetricRegistry metricRegistry() {
        return new MetricRegistry();
    }

    @Override
    public SparkConf conf() {
        return new SparkConf(false);
    }

    @Override
    public String hostname() {
        return "localhost";
    }

    @Override
    public void send(Object message) {
        throw new UnsupportedOperationException("no driver in a unit test");
    }

    @Override
    public Object ask(Object message) {
        throw new UnsupportedOperationException("no driver in a unit test");
    }
}
