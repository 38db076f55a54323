package org.apache.spark.shuffle.hcomm.internal.conf;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's log categories (logger names), for an operator's log4j2 settings. They are the class names of the
 * plugin's first, flat layout and stayed when its classes moved into packages by role, so settings written for
 * 0.2.0 keep working; a class that took over a role logs in that role's category (the read planner in the reader's,
 * the moved-output publisher in the runtime's). Every logger of the internal packages comes from here (the public
 * shuffle manager logs under its own class name, which did not move).
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
