package org.apache.spark.shuffle.hcomm.internal.conf;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's log categories (logger names), for an operator's log4j2 settings. Every logger of the internal
 * packages comes from here; a class logs in the category of its role (the read planner in the reader's, the
 * moved-output publisher in the runtime's). The names are fixed, not derived from today's class names, so that an
 * operator's settings keep working when classes move (the public shuffle manager logs under its own class name).
 */
public enum LogCategory {
    /** The executor component: start-up, HComm unavailable, publishing moved outputs, retired chunks, shutdown. */
    EXECUTOR_RUNTIME("ExecutorRuntime"),
    /** The executor's RPC endpoint: messages from the driver it failed to handle. */
    EXECUTOR_AGENT("ExecutorAgent"),
    /** The driver component: registrations, provisioning, moved outputs. */
    DRIVER_STATE("DriverState"),
    /** An executor's channels per stage attempt: creation, readiness, destroy. */
    STAGE_CHANNELS("StageChannels"),
    /** Reduce tasks: which blocks fall back to Spark's fetch, and why. */
    READER("HcommShuffleReader"),
    /** Map tasks: outputs not published. */
    WRITER("PublishingShuffleWriter"),
    /** The send arena and registered map outputs. */
    PUBLISHER("MapOutputPublisher");

    /** The package the categories were named in. */
    public static final String PREFIX = "org.apache.spark.shuffle.hcomm.internal.";

    private final String name;

    LogCategory(String simpleName) {
        this.name = PREFIX + simpleName;
    }

    /** The logger name. */
    public String loggerName() {
        return name;
    }

    public Logger logger() {
        return LoggerFactory.getLogger(name);
    }
}
