package org.apache.spark.shuffle.hcomm.internal.conf;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Optional;

import org.apache.spark.SparkConf;
import org.hcomm.bridge.LoadOptions;
import org.hcomm.bridge.read.ReadStrategy;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.Provider;

/**
 * The plugin's settings: every {@code spark.shuffle.hcomm.*} key read once through its {@link HcommConf} entry
 * (validated as {@link HcommConf#validate} says, with its messages), typed, and handed to what needs it. Two values
 * come from Spark's own keys: {@link #maxBytesInFlight()} defaults to {@code spark.reducer.maxSizeInFlight}, and
 * {@link #sparkAuthenticates()} is {@code spark.authenticate}.
 *
 * <p>One per process ({@link #of}): Spark builds the shuffle manager and the plugin apart, in an order that differs
 * between its lines, from the same {@code SparkConf}; whichever comes first parses it and the other gets the same
 * settings, and with them the process's one {@link Fallback}. Immutable apart from that Fallback's warnings;
 * thread-safe.
 */
public final class HcommSettings {
    /** The values of {@code spark.shuffle.hcomm.writeTarget}. */
    public enum WriteTarget {
        FILE,
        ARENA
    }

    /** The values of {@code spark.shuffle.hcomm.communicator.transfer}: windows only (the store was retired). */
    public enum Transfer {
        WINDOW
    }

    /** The settings of this process and the SparkConf they were read from (weakly: it is only compared). */
    private record Held(WeakReference<SparkConf> conf, HcommSettings settings) {}

    private static Held held; // guarded by HcommSettings.class

    private final Provider provider;
    private final String libraryPath;
    private final Api api;
    private final ReadStrategy.Kind readStrategy;
    private final WriteTarget writeTarget;
    private final long receiveBufferSize;
    private final int readChunkSize;
    private final long sendArenaSize;
    private final int publishedIndexMaxBytes;
    private final long maxBytesInFlight;
    private final Duration channelSetupTimeout;
    private final Duration readTimeout;
    private final Fallback fallback;
    private final Optional<String> secret;
    private final boolean sparkAuthenticates;
    private final long communicatorBufferSize;
    private final String communicatorResource;
    private final Duration communicatorSettle;
    private final Duration communicatorFormTimeout;
    private final int communicatorSlots;
    private final long communicatorSliceSize;

    private HcommSettings(SparkConf conf) {
        HcommConf.validate(conf);
        provider = HcommConf.PROVIDER.get(conf);
        String path = HcommConf.LIBRARY_PATH.get(conf);
        libraryPath = path.isEmpty() ? null : path;
        api = HcommConf.API.get(conf);
        readStrategy = HcommConf.READ_STRATEGY.get(conf);
        writeTarget = HcommConf.WRITE_TARGET.get(conf);
        receiveBufferSize = HcommConf.RECEIVE_BUFFER_SIZE.get(conf);
        readChunkSize = (int) (long) HcommConf.READ_CHUNK_SIZE.get(conf);
        sendArenaSize = HcommConf.SEND_ARENA_SIZE.get(conf);
        publishedIndexMaxBytes = (int) (long) HcommConf.PUBLISHED_INDEX_MAX_BYTES.get(conf);
        maxBytesInFlight = HcommConf.MAX_BYTES_IN_FLIGHT.get(conf);
        channelSetupTimeout = Duration.ofMillis(HcommConf.CHANNEL_SETUP_TIMEOUT.get(conf));
        readTimeout = Duration.ofMillis(HcommConf.READ_TIMEOUT.get(conf));
        fallback = new Fallback(HcommConf.FALLBACK.get(conf));
        secret = conf.contains(HcommConf.SECRET.key()) ? Optional.of(HcommConf.SECRET.get(conf)) : Optional.empty();
        sparkAuthenticates = conf.getBoolean("spark.authenticate", false);
        communicatorBufferSize = HcommConf.COMMUNICATOR_BUFFER_SIZE.get(conf);
        communicatorResource = HcommConf.COMMUNICATOR_RESOURCE.get(conf);
        communicatorSettle = Duration.ofMillis(HcommConf.COMMUNICATOR_SETTLE.get(conf));
        communicatorFormTimeout = Duration.ofMillis(HcommConf.COMMUNICATOR_FORM_TIMEOUT.get(conf));
        communicatorSlots = (int) (long) HcommConf.COMMUNICATOR_SLOTS.get(conf);
        communicatorSliceSize = HcommConf.COMMUNICATOR_SLICE_SIZE.get(conf);
    }

    /**
     * The settings of this process: those read from {@code conf} when it is the SparkConf they were read from, else
     * read from it now (a bad value throws, naming the key) and kept as this process's.
     */
    public static synchronized HcommSettings of(SparkConf conf) {
        Held h = held;
        if (h != null && h.conf.get() == conf) {
            return h.settings;
        }
        HcommSettings settings = parse(conf);
        held = new Held(new WeakReference<>(conf), settings);
        return settings;
    }

    /** New settings read from {@code conf}, not kept as the process's (tests). */
    public static HcommSettings parse(SparkConf conf) {
        return new HcommSettings(conf);
    }

    /** What the HComm loader loads: provider, library path, API and read strategy. */
    public LoadOptions loadOptions() {
        return new LoadOptions(provider, libraryPath, api, readStrategy);
    }

    public Provider provider() {
        return provider;
    }

    /** An explicit library file, or null: the provider's own. */
    public String libraryPath() {
        return libraryPath;
    }

    public Api api() {
        return api;
    }

    public ReadStrategy.Kind readStrategy() {
        return readStrategy;
    }

    public WriteTarget writeTarget() {
        return writeTarget;
    }

    public long receiveBufferSize() {
        return receiveBufferSize;
    }

    public int readChunkSize() {
        return readChunkSize;
    }

    public long sendArenaSize() {
        return sendArenaSize;
    }

    public int publishedIndexMaxBytes() {
        return publishedIndexMaxBytes;
    }

    /** Its default is Spark's {@code spark.reducer.maxSizeInFlight}. */
    public long maxBytesInFlight() {
        return maxBytesInFlight;
    }

    public Duration channelSetupTimeout() {
        return channelSetupTimeout;
    }

    public Duration readTimeout() {
        return readTimeout;
    }

    /** The process's one Fallback, of the configured mode. */
    public Fallback fallback() {
        return fallback;
    }

    /** {@code spark.shuffle.hcomm.secret} when set. */
    public Optional<String> secret() {
        return secret;
    }

    /** Spark's {@code spark.authenticate}. */
    public boolean sparkAuthenticates() {
        return sparkAuthenticates;
    }

    public long communicatorBufferSize() {
        return communicatorBufferSize;
    }

    /** The Spark resource naming the executor's NPU, or empty: device 0. */
    public String communicatorResource() {
        return communicatorResource;
    }

    public Duration communicatorSettle() {
        return communicatorSettle;
    }

    public Duration communicatorFormTimeout() {
        return communicatorFormTimeout;
    }

    /** Slots per window end (the communicator path). */
    public int communicatorSlots() {
        return communicatorSlots;
    }

    /** Bytes per slot (the communicator path). */
    public long communicatorSliceSize() {
        return communicatorSliceSize;
    }
}
