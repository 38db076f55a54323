package org.apache.spark.shuffle.hcomm;

import org.apache.spark.SparkConf;
import org.apache.spark.deploy.history.FsHistoryProvider;
import org.apache.spark.deploy.history.HistoryServer;
import org.apache.spark.deploy.history.HistoryServer$;

/**
 * Spark's history server in the test JVM, on a free port of the address in {@code SPARK_LOCAL_IP} (loopback in the
 * tests), reading the event logs of one directory once at start (no background scan). Written in Java because the
 * provider's scan is {@code private[history]} in Scala.
 */
public final class InProcessHistoryServer implements AutoCloseable {
    private final HistoryServer server;

    public InProcessHistoryServer(String logDirectory) {
        SparkConf conf = new SparkConf(false)
                .set("spark.history.fs.logDirectory", logDirectory)
                .set("spark.history.ui.port", "0");
        FsHistoryProvider provider = new FsHistoryProvider(conf);
        server = new HistoryServer(conf, provider, HistoryServer$.MODULE$.createSecurityManager(conf), 0);
        server.bind();
        provider.checkForLogs();
    }

    /** The server's base URL, e.g. {@code http://127.0.0.1:41234}. */
    public String url() {
        return "http://127.0.0.1:" + server.boundPort();
    }

    @Override
    public void close() {
        server.stop();
    }
}
