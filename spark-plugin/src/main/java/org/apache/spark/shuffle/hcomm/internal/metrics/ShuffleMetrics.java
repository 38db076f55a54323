package org.apache.spark.shuffle.hcomm.internal.metrics;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import org.apache.spark.metrics.source.Source;

/**
 * The {@code HcommShuffle} metrics source. On an executor it counts this executor's work; on the driver its
 * gauges are the cluster's totals, summed from the latest {@link Snapshot} each executor reported. Its metrics are the
 * {@link MetricEntry} entries, registered only through them. Thread-safe: any thread counts (Codahale counters,
 * adders); the driver's reports land in a concurrent map, and metrics sinks read from their own threads.
 */
public final class ShuffleMetrics implements Source {
    public static final String SOURCE_NAME = "HcommShuffle";

    /** One executor's cumulative counters. */
    public record Snapshot(long channelsCreated, long channelsDestroyed, long destroyCalls, long bytesReadOneSided,
            long bytesReadFallback, long readsIssued, long channelSetupMillis, long readLatencyMicros,
            long fetchWaitIndexMicros, long fetchWaitFirstWaveMicros, long fetchWaitLaterWavesMicros,
            long fetchWaitSparkMillis, long outputsCopied, long outputsMapped, long indexesMapped, long indexRounds, long readWaves,
            long chunksRetired, long chunksReclaimed, long bytesReadCrossHost,
            long outputsPublishedLate, long communicatorsJoined, long communicatorsDestroyed,
            long tasksBeforeCommunicator, long bytesToHost, long readTasks,
            long readRoundTrips, long readTasksOverTwoRoundTrips, long publicationBatches, long outputsWrittenToArena,
            long outputsSentToFile, long outputsOverflowed, long bytesOverflowCopied, long arenaRelocations,
            long outputsMaterialized, long bytesReadBeforeCommunicator, long windowsOpened, long windowsServed,
            long windowsRefused, long windowsPoisoned)
            implements Serializable {
        public long channelsLive() {
            return channelsCreated - channelsDestroyed;
        }

        public long communicatorsLive() {
            return communicatorsJoined - communicatorsDestroyed;
        }

        public long bytesReadWithinHost() {
            return bytesReadOneSided - bytesReadCrossHost;
        }
    }

    private final MetricRegistry registry = new MetricRegistry();
    public final Counter channelsCreated;
    public final Counter channelsDestroyed;
    public final Counter destroyCalls;
    public final Counter bytesReadOneSided;
    public final Counter bytesReadFallback;
    /** One-sided bytes from owners on another host (the block manager's host differs); the rest were on this one. */
    public final Counter bytesReadCrossHost;
    public final Counter readsIssued;
    /** Read batches reduce tasks waited for: rounds of index reads, waves of data (a task's round trips). */
    public final Counter indexRounds;
    public final Counter readWaves;
    public final Counter readTasks;
    /** Round trips on the reduce tasks' critical paths (batches issued together share one). */
    public final Counter readRoundTrips;
    public final Counter readTasksOverTwoRoundTrips;
    public final Counter publicationBatches;
    /** Map outputs written straight into the send arena, and what happened to those that did not fit. */
    public final Counter outputsWrittenToArena;
    public final Counter outputsSentToFile;
    public final Counter outputsOverflowed;
    public final Counter bytesOverflowCopied;
    public final Counter arenaRelocations;
    public final Counter outputsMaterialized;
    /**
     * Receive-buffer chunks taken out of use after a read into them timed out, and lent again once the channels
     * those reads were on were destroyed.
     */
    public final Counter chunksRetired;
    public final Counter chunksReclaimed;
    /** Map outputs published by copying into the send arena / by registering the data file; indexes registered. */
    public final Counter outputsCopied;
    public final Counter outputsMapped;
    public final Counter indexesMapped;
    /**
     * Map outputs this executor published when a reader asked for them, not at commit: moved to it (migrated off a
     * decommissioned executor), or not published at commit (its log says why).
     */
    public final Counter outputsPublishedLate;
    /** The communicator path (Atlas A2/A3). */
    public final Counter communicatorsJoined;
    public final Counter communicatorsDestroyed;
    public final Counter tasksBeforeCommunicator;
    /** Remote bytes Spark's fetch read before the executor's first communicator was ready (not a fallback). */
    public final Counter bytesReadBeforeCommunicator;
    public final Counter windowsOpened;
    public final Counter windowsServed;
    public final Counter windowsRefused;
    public final Counter windowsPoisoned;
    public final Counter bytesToHost;
    /**
     * The rest of Spark's fetch wait time: what Spark's own fetch iterator (this executor's blocks, the fallback's)
     * counted, in its whole milliseconds. With the {@link FetchWait} split it sums to the tasks' fetch wait.
     */
    public final Counter fetchWaitSpark;
    public final Timer channelSetupTime;
    public final Timer readLatency;
    private final LongAdder setupNanos = new LongAdder();
    private final LongAdder readNanos = new LongAdder();
    /** Where reduce tasks waited for one-sided reads (Spark's fetch wait time, split by what was awaited). */
    private final Map<FetchWait, LongAdder> waitNanos = new java.util.EnumMap<>(FetchWait.class);

    /** What a reduce task waited for, and the gauge (in µs) that sums it. */
    public enum FetchWait {
        /** The owners' index rounds (the offsets of the task's partitions), before any data. */
        INDEX(MetricEntry.FETCH_WAIT_INDEX_MICROS),
        /** The task's first wave of data: nothing to deserialise yet. */
        FIRST_WAVE(MetricEntry.FETCH_WAIT_FIRST_WAVE_MICROS),
        /** Later waves: the reads fell behind deserialisation. */
        LATER_WAVES(MetricEntry.FETCH_WAIT_LATER_WAVES_MICROS);

        final MetricEntry metric;

        FetchWait(MetricEntry metric) {
            this.metric = metric;
        }
    }
    private final Map<String, Snapshot> reported; // driver only
    private final java.util.Set<String> gone = ConcurrentHashMap.newKeySet(); // driver only: executors removed

    /** Registers every {@link MetricEntry} of its side, each only through its entry. */
    private ShuffleMetrics(boolean driver) {
        reported = driver ? new ConcurrentHashMap<>() : null;
        if (driver) {
            channelsCreated = channelsDestroyed = destroyCalls = bytesReadOneSided = bytesReadFallback = bytesReadCrossHost = readsIssued =
                    indexRounds = readWaves = chunksRetired = chunksReclaimed = outputsCopied = outputsMapped =
                    indexesMapped = outputsPublishedLate = fetchWaitSpark = communicatorsJoined =
                    communicatorsDestroyed = tasksBeforeCommunicator = bytesToHost =
                    readTasks = readRoundTrips = readTasksOverTwoRoundTrips = publicationBatches =
                    outputsWrittenToArena = outputsSentToFile = outputsOverflowed = bytesOverflowCopied =
                    arenaRelocations = outputsMaterialized = bytesReadBeforeCommunicator = windowsOpened =
                    windowsServed = windowsRefused = windowsPoisoned = null;
            channelSetupTime = readLatency = null;
            for (MetricEntry m : MetricEntry.values()) {
                if (m.onDriver()) {
                    ToLongFunction<Snapshot> f = m.driverTotal();
                    registry.register(m.metricName(), (Gauge<Long>) () -> total(m, reported));
                }
            }
        } else {
            channelsCreated = counter(MetricEntry.CHANNELS_CREATED);
            channelsDestroyed = counter(MetricEntry.CHANNELS_DESTROYED);
            destroyCalls = counter(MetricEntry.DESTROY_CALLS);
            bytesReadOneSided = counter(MetricEntry.BYTES_READ_ONE_SIDED);
            bytesReadFallback = counter(MetricEntry.BYTES_READ_FALLBACK);
            bytesReadCrossHost = counter(MetricEntry.BYTES_READ_CROSS_HOST);
            readsIssued = counter(MetricEntry.READS_ISSUED);
            indexRounds = counter(MetricEntry.INDEX_ROUNDS);
            readWaves = counter(MetricEntry.READ_WAVES);
            readTasks = counter(MetricEntry.READ_TASKS);
            readRoundTrips = counter(MetricEntry.READ_ROUND_TRIPS);
            readTasksOverTwoRoundTrips = counter(MetricEntry.READ_TASKS_OVER_TWO_ROUND_TRIPS);
            publicationBatches = counter(MetricEntry.PUBLICATION_BATCHES);
            outputsWrittenToArena = counter(MetricEntry.OUTPUTS_WRITTEN_TO_ARENA);
            outputsSentToFile = counter(MetricEntry.OUTPUTS_SENT_TO_FILE);
            outputsOverflowed = counter(MetricEntry.OUTPUTS_OVERFLOWED);
            bytesOverflowCopied = counter(MetricEntry.BYTES_OVERFLOW_COPIED);
            arenaRelocations = counter(MetricEntry.ARENA_RELOCATIONS);
            outputsMaterialized = counter(MetricEntry.OUTPUTS_MATERIALIZED);
            chunksRetired = counter(MetricEntry.CHUNKS_RETIRED);
            chunksReclaimed = counter(MetricEntry.CHUNKS_RECLAIMED);
            outputsCopied = counter(MetricEntry.OUTPUTS_COPIED);
            outputsMapped = counter(MetricEntry.OUTPUTS_MAPPED);
            indexesMapped = counter(MetricEntry.INDEXES_MAPPED);
            outputsPublishedLate = counter(MetricEntry.OUTPUTS_PUBLISHED_LATE);
            fetchWaitSpark = counter(MetricEntry.FETCH_WAIT_SPARK_MILLIS);
            communicatorsJoined = counter(MetricEntry.COMMUNICATORS_JOINED);
            communicatorsDestroyed = counter(MetricEntry.COMMUNICATORS_DESTROYED);
            tasksBeforeCommunicator = counter(MetricEntry.TASKS_BEFORE_COMMUNICATOR);
            bytesReadBeforeCommunicator = counter(MetricEntry.BYTES_READ_BEFORE_COMMUNICATOR);
            windowsOpened = counter(MetricEntry.WINDOWS_OPENED);
            windowsServed = counter(MetricEntry.WINDOWS_SERVED);
            windowsRefused = counter(MetricEntry.WINDOWS_REFUSED);
            windowsPoisoned = counter(MetricEntry.WINDOWS_POISONED);
            bytesToHost = counter(MetricEntry.BYTES_TO_HOST);
            gauge(MetricEntry.COMMUNICATORS_LIVE,
                    () -> communicatorsJoined.getCount() - communicatorsDestroyed.getCount());
            channelSetupTime = timer(MetricEntry.CHANNEL_SETUP_TIME);
            readLatency = timer(MetricEntry.READ_LATENCY);
            gauge(MetricEntry.CHANNELS_LIVE, () -> channelsCreated.getCount() - channelsDestroyed.getCount());
            gauge(MetricEntry.BYTES_READ_WITHIN_HOST,
                    () -> bytesReadOneSided.getCount() - bytesReadCrossHost.getCount());
            for (FetchWait w : FetchWait.values()) {
                waitNanos.put(w, new LongAdder());
                gauge(w.metric, () -> waitMicros(w));
            }
            if (registry.getMetrics().size() != MetricEntry.values().length) {
                throw new IllegalStateException("executor metrics registered " + registry.getNames() + ", documented "
                        + java.util.Arrays.toString(MetricEntry.values()));
            }
        }
    }

    private Counter counter(MetricEntry m) {
        requireKind(m, MetricEntry.Kind.COUNTER);
        return registry.counter(m.metricName());
    }

    private Timer timer(MetricEntry m) {
        requireKind(m, MetricEntry.Kind.TIMER);
        return registry.timer(m.metricName());
    }

    private void gauge(MetricEntry m, Gauge<Long> g) {
        requireKind(m, MetricEntry.Kind.GAUGE);
        registry.register(m.metricName(), g);
    }

    private static void requireKind(MetricEntry m, MetricEntry.Kind kind) {
        if (m.kind() != kind) {
            throw new IllegalArgumentException(m + " is documented as a " + m.kind() + ", registered as a " + kind);
        }
    }

    public static ShuffleMetrics forExecutor() {
        return new ShuffleMetrics(false);
    }

    public static ShuffleMetrics forDriver() {
        return new ShuffleMetrics(true);
    }

    @Override
    public String sourceName() {
        return SOURCE_NAME;
    }

    @Override
    public MetricRegistry metricRegistry() {
        return registry;
    }

    /** Executor: one channel batch took this long from creation to settled. */
    public void channelSetup(long nanos) {
        channelSetupTime.update(nanos, TimeUnit.NANOSECONDS);
        setupNanos.add(nanos);
    }

    /** Executor: one wave of reads took this long from issue to landed. */
    public void readLanded(long nanos) {
        readLatency.update(nanos, TimeUnit.NANOSECONDS);
        readNanos.add(nanos);
    }

    /** Executor: a reduce task waited this long for {@code what}. */
    public void fetchWaited(FetchWait what, long nanos) {
        waitNanos.get(what).add(nanos);
    }

    private long waitMicros(FetchWait what) {
        return TimeUnit.NANOSECONDS.toMicros(waitNanos.get(what).sum());
    }

    /** Executor: the counters as they are now (times as exact totals). */
    public Snapshot snapshot() {
        return new Snapshot(channelsCreated.getCount(), channelsDestroyed.getCount(), destroyCalls.getCount(),
                bytesReadOneSided.getCount(), bytesReadFallback.getCount(), readsIssued.getCount(),
                TimeUnit.NANOSECONDS.toMillis(setupNanos.sum()), TimeUnit.NANOSECONDS.toMicros(readNanos.sum()),
                waitMicros(FetchWait.INDEX), waitMicros(FetchWait.FIRST_WAVE), waitMicros(FetchWait.LATER_WAVES),
                fetchWaitSpark.getCount(),
                outputsCopied.getCount(), outputsMapped.getCount(), indexesMapped.getCount(), indexRounds.getCount(),
                readWaves.getCount(), chunksRetired.getCount(), chunksReclaimed.getCount(),
                bytesReadCrossHost.getCount(), outputsPublishedLate.getCount(), communicatorsJoined.getCount(),
                communicatorsDestroyed.getCount(), tasksBeforeCommunicator.getCount(), bytesToHost.getCount(),
                readTasks.getCount(),
                readRoundTrips.getCount(), readTasksOverTwoRoundTrips.getCount(), publicationBatches.getCount(),
                outputsWrittenToArena.getCount(), outputsSentToFile.getCount(), outputsOverflowed.getCount(),
                bytesOverflowCopied.getCount(), arenaRelocations.getCount(), outputsMaterialized.getCount(),
                bytesReadBeforeCommunicator.getCount(), windowsOpened.getCount(), windowsServed.getCount(),
                windowsRefused.getCount(), windowsPoisoned.getCount());
    }

    /** Every driver metric's value in one executor's snapshot, by name, in {@link MetricEntry} order. */
    public static Map<String, Long> valuesOf(Snapshot s) {
        Map<String, Long> values = new java.util.LinkedHashMap<>();
        for (MetricEntry m : MetricEntry.values()) {
            if (m.onDriver()) {
                values.put(m.metricName(), m.driverTotal().applyAsLong(s));
            }
        }
        return values;
    }

    /** Driver: the latest counters of one executor. */
    public void report(String executorId, Snapshot s) {
        reported.put(executorId, s);
    }

    /** Driver: executor {@code executorId} is gone; its counters still count, its levels no longer do. */
    public void executorRemoved(String executorId) {
        gone.add(executorId);
    }

    /** The cluster's total of {@code m} over {@code reports} (a level without the executors that are gone). */
    private long total(MetricEntry m, Map<String, Snapshot> reports) {
        ToLongFunction<Snapshot> f = m.driverTotal();
        return reports.entrySet().stream().filter(e -> !m.level() || !gone.contains(e.getKey()))
                .mapToLong(e -> f.applyAsLong(e.getValue())).sum();
    }

    /** Driver: the cluster's total of one metric by name (for tests and the example job). */
    public long clusterTotal(String name) {
        Gauge<?> g = registry.getGauges().get(name);
        return g == null ? 0 : ((Number) g.getValue()).longValue();
    }

    /**
     * Driver: every metric's cluster total by name, all from one copy of the executors' latest reports, so they agree
     * with each other (gauges read one by one can straddle a report: channels created 15, destroyed 16).
     */
    public Map<String, Long> clusterTotals() {
        Map<String, Snapshot> now = Map.copyOf(reported);
        Map<String, Long> totals = new java.util.TreeMap<>();
        for (MetricEntry m : MetricEntry.values()) {
            if (m.onDriver()) {
                totals.put(m.metricName(), total(m, now));
            }
        }
        return totals;
    }
}
