package org.apache.spark.shuffle.hcomm.internal.metrics;

import java.util.function.ToLongFunction;

/**
 * One metric of the {@code HcommShuffle} source, with its documentation. {@link ShuffleMetrics} registers exactly
 * these, each only through its entry here, so a metric cannot be registered without its documentation nor documented
 * without being registered; the README's metrics table is generated from them ({@link #markdownTable()}).
 *
 * <p>On an executor a metric is of its {@link Kind}; on the driver every metric with a {@link #driverTotal} is a gauge:
 * the sum over executors of the values in the latest {@link ShuffleMetrics.Snapshot} each reported.
 */
public enum MetricEntry {
    CHANNELS_CREATED("channelsCreated", Kind.COUNTER, "channels", ShuffleMetrics.Snapshot::channelsCreated,
            "channel ends this executor created to its peers for the reduce stages it reads in"),
    CHANNELS_DESTROYED("channelsDestroyed", Kind.COUNTER, "channels", ShuffleMetrics.Snapshot::channelsDestroyed,
            "channel ends destroyed, all of a stage attempt's at its end"),
    CHANNELS_LIVE("channelsLive", Kind.GAUGE, "channels", ShuffleMetrics.Snapshot::channelsLive,
            "`channelsCreated` - `channelsDestroyed`: 0 once no stage reads"),
    DESTROY_CALLS("destroyCalls", Kind.COUNTER, "calls", ShuffleMetrics.Snapshot::destroyCalls,
            "bulk destroys: one per stage attempt on each executor that had channels in it"),
    BYTES_READ_ONE_SIDED("bytesReadOneSided", Kind.COUNTER, "bytes", ShuffleMetrics.Snapshot::bytesReadOneSided,
            "shuffle bytes read one-sidedly from the owners' registered memory (also Spark's remote bytes read)"),
    BYTES_READ_FALLBACK("bytesReadFallback", Kind.COUNTER, "bytes", ShuffleMetrics.Snapshot::bytesReadFallback,
            "remote bytes Spark's own fetch read instead (fallback); 0 with fallback `never`"),
    BYTES_READ_CROSS_HOST("bytesReadCrossHost", Kind.COUNTER, "bytes", ShuffleMetrics.Snapshot::bytesReadCrossHost,
            "one-sided bytes from owners on another host: through the NIC"),
    BYTES_READ_WITHIN_HOST("bytesReadWithinHost", Kind.GAUGE, "bytes",
            ShuffleMetrics.Snapshot::bytesReadWithinHost, "`bytesReadOneSided` - `bytesReadCrossHost`: one-sided bytes "
                    + "from owners on this host"),
    READS_ISSUED("readsIssued", Kind.COUNTER, "reads", ShuffleMetrics.Snapshot::readsIssued,
            "one-sided reads issued"),
    INDEX_ROUNDS("indexRounds", Kind.COUNTER, "rounds", ShuffleMetrics.Snapshot::indexRounds,
            "the reduce tasks' round trips for batches of index reads: 0 unless an output's index is over "
                    + "`spark.shuffle.hcomm.publishedIndexMaxBytes` (then one per task, more if such indexes "
                    + "overflow the borrowed chunks)"),
    READ_WAVES("readWaves", Kind.COUNTER, "waves", ShuffleMetrics.Snapshot::readWaves,
            "batches of data reads the reduce tasks waited for, whatever the number of owners (waves issued together "
                    + "land one after the other within one round trip)"),
    READ_TASKS("readTasks", Kind.COUNTER, "tasks", ShuffleMetrics.Snapshot::readTasks,
            "reduce tasks that read one-sidedly"),
    READ_ROUND_TRIPS("readRoundTrips", Kind.COUNTER, "round trips", ShuffleMetrics.Snapshot::readRoundTrips,
            "round trips on the reduce tasks' critical paths: a batch issued before the task's previous wait ended "
                    + "shares that wait's round trip, one issued after it adds one (index rounds included); "
                    + "`readRoundTrips` / `readTasks` is their mean per task"),
    READ_TASKS_OVER_TWO_ROUND_TRIPS("readTasksOverTwoRoundTrips", Kind.COUNTER, "tasks",
            ShuffleMetrics.Snapshot::readTasksOverTwoRoundTrips, "reduce tasks whose bytes fit the receive-buffer "
                    + "chunks they borrowed but that needed more than two round trips (`readRoundTrips`) before their "
                    + "last byte; the target is 0"),
    CHUNKS_RETIRED("chunksRetired", Kind.COUNTER, "chunks", ShuffleMetrics.Snapshot::chunksRetired,
            "receive-buffer chunks taken out of use because a read into them timed out and could still land"),
    CHUNKS_RECLAIMED("chunksReclaimed", Kind.COUNTER, "chunks", ShuffleMetrics.Snapshot::chunksReclaimed,
            "retired chunks lent again once the channels the reads were on were destroyed, at the end of their stage "
                    + "attempt"),
    CHANNEL_SETUP_TIME("channelSetupTime", Kind.TIMER, "ns per batch of channels", "total ms",
            ShuffleMetrics.Snapshot::channelSetupMillis, "time from creating a batch of channels to their being "
                    + "settled"),
    READ_LATENCY("readLatency", Kind.TIMER, "ns per wave of reads", "total µs",
            ShuffleMetrics.Snapshot::readLatencyMicros, "time from issuing a wave of one-sided reads to its landing"),
    FETCH_WAIT_INDEX_MICROS("fetchWaitIndexMicros", Kind.GAUGE, "µs", ShuffleMetrics.Snapshot::fetchWaitIndexMicros,
            "the reduce tasks' fetch wait on one-sided reads for the owners' partition offsets (index rounds)"),
    FETCH_WAIT_FIRST_WAVE_MICROS("fetchWaitFirstWaveMicros", Kind.GAUGE, "µs",
            ShuffleMetrics.Snapshot::fetchWaitFirstWaveMicros,
            "the reduce tasks' fetch wait on one-sided reads for a task's first data"),
    FETCH_WAIT_LATER_WAVES_MICROS("fetchWaitLaterWavesMicros", Kind.GAUGE, "µs",
            ShuffleMetrics.Snapshot::fetchWaitLaterWavesMicros,
            "the reduce tasks' fetch wait on later waves: reads that fell behind deserialisation"),
    FETCH_WAIT_SPARK_MILLIS("fetchWaitSparkMillis", Kind.COUNTER, "ms", ShuffleMetrics.Snapshot::fetchWaitSparkMillis,
            "the rest of the reduce tasks' fetch wait: in Spark's own fetch iterator (the executor's own blocks, and "
                    + "the fallback's), as Spark counts it; with the three above it is Spark's fetch wait time"),
    OUTPUTS_COPIED("outputsCopied", Kind.COUNTER, "map outputs", ShuffleMetrics.Snapshot::outputsCopied,
            "map outputs published by copying them into the send arena"),
    OUTPUTS_MAPPED("outputsMapped", Kind.COUNTER, "map outputs", ShuffleMetrics.Snapshot::outputsMapped,
            "map outputs published by registering Spark's data file"),
    INDEXES_MAPPED("indexesMapped", Kind.COUNTER, "map outputs", ShuffleMetrics.Snapshot::indexesMapped,
            "map outputs whose index was published by registering Spark's index file: the arena was full"),
    OUTPUTS_WRITTEN_TO_ARENA("outputsWrittenToArena", Kind.COUNTER, "map outputs",
            ShuffleMetrics.Snapshot::outputsWrittenToArena, "map outputs Spark's writers wrote straight into the send "
                    + "arena (`writeTarget=arena`): written once, no data or index file"),
    OUTPUTS_SENT_TO_FILE("outputsSentToFile", Kind.COUNTER, "map outputs", ShuffleMetrics.Snapshot::outputsSentToFile,
            "map outputs Spark's writers wrote to Spark's file from the start because the arena had no room for their "
                    + "expected size (the largest of their shuffle so far); registered from the file, not copied "
                    + "(`writeTarget=arena`)"),
    OUTPUTS_OVERFLOWED("outputsOverflowed", Kind.COUNTER, "map outputs", ShuffleMetrics.Snapshot::outputsOverflowed,
            "map outputs begun in the send arena that did not fit it and went on in Spark's file "
                    + "(`writeTarget=arena`)"),
    BYTES_OVERFLOW_COPIED("bytesOverflowCopied", Kind.COUNTER, "bytes", ShuffleMetrics.Snapshot::bytesOverflowCopied,
            "bytes of overflowed outputs copied from the arena into Spark's file (what they had written there)"),
    ARENA_RELOCATIONS("arenaRelocations", Kind.COUNTER, "moves", ShuffleMetrics.Snapshot::arenaRelocations,
            "times an output being written into the arena had to move to grow (a copy of what it had written)"),
    OUTPUTS_MATERIALIZED("outputsMaterialized", Kind.COUNTER, "map outputs",
            ShuffleMetrics.Snapshot::outputsMaterialized, "map outputs written into the arena that were copied to "
                    + "Spark's files so that Spark could move them off a decommissioning executor"),
    PUBLICATION_BATCHES("publicationBatches", Kind.COUNTER, "batches", ShuffleMetrics.Snapshot::publicationBatches,
            "messages that told the driver of published map outputs: each carries what its executor published while "
                    + "the previous one was on its way, and no map task waits for it"),
    OUTPUTS_PUBLISHED_LATE("outputsPublishedLate", Kind.COUNTER, "map outputs",
            ShuffleMetrics.Snapshot::outputsPublishedLate, "map outputs the executor published when a reader asked, "
                    + "not at commit: moved to it off a decommissioned executor, or not published at commit"),
    COMMUNICATORS_JOINED("communicatorsJoined", Kind.COUNTER, "communicators", ShuffleMetrics.Snapshot::communicatorsJoined,
            "HCCL communicators the executor joined (the communicator path, Atlas A2/A3)"),
    COMMUNICATORS_DESTROYED("communicatorsDestroyed", Kind.COUNTER, "communicators",
            ShuffleMetrics.Snapshot::communicatorsDestroyed, "HCCL communicators the executor destroyed"),
    COMMUNICATORS_LIVE("communicatorsLive", Kind.GAUGE, "communicators", ShuffleMetrics.Snapshot::communicatorsLive,
            "`communicatorsJoined` - `communicatorsDestroyed`: 0 once the application ended"),
    BYTES_TO_HOST("bytesToHost", Kind.COUNTER, "bytes", ShuffleMetrics.Snapshot::bytesToHost,
            "bytes that reached this executor's receive windows one-sidedly and were copied device to host for the "
                    + "reducers (the communicator path's device-to-host bytes)"),
    TASKS_BEFORE_COMMUNICATOR("tasksBeforeCommunicator", Kind.COUNTER, "reduce tasks",
            ShuffleMetrics.Snapshot::tasksBeforeCommunicator,
            "reduce tasks that ran before the executor's communicator was ready: all their blocks went by Spark's "
                    + "fetch, none waited"),
    BYTES_READ_BEFORE_COMMUNICATOR("bytesReadBeforeCommunicator", Kind.COUNTER, "bytes",
            ShuffleMetrics.Snapshot::bytesReadBeforeCommunicator,
            "remote bytes Spark's fetch read before the executor's first communicator was ready (the start-up "
                    + "window of the communicator path, with any fallback; not in `bytesReadFallback`)"),
    WINDOWS_OPENED("windowsOpened", Kind.COUNTER, "windows", ShuffleMetrics.Snapshot::windowsOpened,
            "window exchanges this executor read through as a reader (the communicator path)"),
    WINDOWS_SERVED("windowsServed", Kind.COUNTER, "windows", ShuffleMetrics.Snapshot::windowsServed,
            "window exchanges this executor served as an owner"),
    WINDOWS_REFUSED("windowsRefused", Kind.COUNTER, "windows", ShuffleMetrics.Snapshot::windowsRefused,
            "window requests an owner refused (another communicator, no window free, an output it cannot read)"),
    WINDOWS_POISONED("windowsPoisoned", Kind.COUNTER, "windows", ShuffleMetrics.Snapshot::windowsPoisoned,
            "window exchanges that failed mid-stream: the channel to that peer is unusable until the next "
                    + "communicator");

    /** What a metric is in an executor's registry. */
    enum Kind {
        COUNTER, GAUGE, TIMER;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final String metricName;
    private final Kind kind;
    private final String unit;
    private final String driverUnit;
    private final ToLongFunction<ShuffleMetrics.Snapshot> driverTotal;
    private final String meaning;

    MetricEntry(String metricName, Kind kind, String unit, ToLongFunction<ShuffleMetrics.Snapshot> driverTotal,
            String meaning) {
        this(metricName, kind, unit, unit, driverTotal, meaning);
    }

    MetricEntry(String metricName, Kind kind, String unit, String driverUnit,
            ToLongFunction<ShuffleMetrics.Snapshot> driverTotal, String meaning) {
        this.metricName = metricName;
        this.kind = kind;
        this.unit = unit;
        this.driverUnit = driverUnit;
        this.driverTotal = driverTotal;
        this.meaning = meaning;
    }

    /** The name in the source's registry (and in every sink, after the source's prefix). */
    public String metricName() {
        return metricName;
    }

    Kind kind() {
        return kind;
    }

    /**
     * Whether the metric is a level of what an executor holds now (live channels, live communicators): an executor
     * that is gone holds none, so its last report no longer counts in the driver's total (counters keep it).
     */
    boolean level() {
        return this == CHANNELS_LIVE || this == COMMUNICATORS_LIVE;
    }

    /** What one executor's value sums into the driver's gauge, or null for a metric only executors have. */
    ToLongFunction<ShuffleMetrics.Snapshot> driverTotal() {
        return driverTotal;
    }

    /** The unit of the driver's value (a timer's driver value is a total). */
    public String driverUnit() {
        return driverUnit;
    }

    /** What the metric counts, as the README's table says it. */
    public String meaning() {
        return meaning;
    }

    public boolean onDriver() {
        return driverTotal != null;
    }

    /** The README's metrics table: one row per metric, in this order. */
    static String markdownTable() {
        StringBuilder sb = new StringBuilder("| metric | type on an executor, unit | where | meaning |\n|---|---|---|---|\n");
        for (MetricEntry m : values()) {
            String type = m.kind.label() + ", " + m.unit;
            if (m.onDriver() && !m.driverUnit.equals(m.unit)) {
                type = "executor: " + type + "; driver: " + m.driverUnit;
            }
            sb.append("| `").append(m.metricName).append("` | ").append(type).append(" | ")
                    .append(m.onDriver() ? "driver (total), executor" : "executor").append(" | ").append(m.meaning)
                    .append(" |\n");
        }
        return sb.toString();
    }
}
