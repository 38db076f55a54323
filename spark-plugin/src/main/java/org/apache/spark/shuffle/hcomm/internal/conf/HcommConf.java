package org.apache.spark.shuffle.hcomm.internal.conf;

import java.util.List;

import org.apache.spark.SparkConf;
import org.hcomm.bridge.read.ReadStrategy;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.Provider;

/**
 * Every {@code spark.shuffle.hcomm.*} key, typed and validated. {@link #validate(SparkConf)} runs when a process
 * builds its {@link HcommSettings} (driver and executor start-up), so a bad value fails the application at once with
 * a message naming the key. The README's configuration table is generated from {@link #ENTRIES} (and a test fails
 * when it drifts).
 */
public final class HcommConf {
    static final String PREFIX = "spark.shuffle.hcomm.";
    private static final long MIB = 1L << 20;
    /**
     * The communicator buffer's unit: HcclCommConfig's hcclBufferSize counts whole MB and the buffer is twice it. Its
     * largest value (a uint32 count of MB) is far above the key's 64g, which bounds the device memory per executor.
     */
    private static final long HCCL_BUFFER_UNIT = 2 * MIB;

    public static final ConfigEntry<Provider> PROVIDER = ConfigEntry.of(PREFIX + "provider",
            "Which HComm library answers: `soft` (the bundled soft HComm, any Linux host) or `cann` (CANN's "
                    + "libhcomm.so under $ASCEND_HOME_PATH).",
            "soft", "soft, cann", ConfigEntry.oneOf(Provider.class));

    public static final ConfigEntry<String> LIBRARY_PATH = ConfigEntry.of(PREFIX + "libraryPath",
            "An explicit path of the HComm shared library to load instead of the provider's default.",
            "", "a file path, or empty", raw -> raw == null ? "" : raw);

    public static final ConfigEntry<Long> RECEIVE_BUFFER_SIZE = ConfigEntry.of(PREFIX + "receiveBufferSize",
            "Registered receive buffer (the \"HCCL buffer\") per executor that one-sided reads land in; shared by "
                    + "the executor's reduce tasks.",
            "64m", "a size from 4m to 1g", ConfigEntry.bytes(4 * MIB, 1L << 30));

    public static final ConfigEntry<Long> READ_CHUNK_SIZE = ConfigEntry.of(PREFIX + "readChunkSize",
            "Size of one read into the receive buffer; blocks larger than this are streamed through several chunks.",
            "1m", "a size from 64k to 64m", ConfigEntry.bytes(64 << 10, 64 * MIB));

    public static final ConfigEntry<Long> SEND_ARENA_SIZE = ConfigEntry.of(PREFIX + "sendArenaSize",
            "Registered memory per executor that committed map outputs are copied into (each output's index, and "
                    + "its bytes while an eighth of the arena stays free); what does not fit is published by "
                    + "registering Spark's mapped data and index files instead (0: always).",
            "256m", "a size from 0 to 1g", ConfigEntry.bytes(0, 1L << 30));

    public static final ConfigEntry<HcommSettings.WriteTarget> WRITE_TARGET = ConfigEntry.of(PREFIX + "writeTarget",
            "Where map outputs are written. `file`: Spark's writers write Spark's files, and each committed output is "
                    + "then copied into the send arena (or its files registered). `arena`: Spark's writers write "
                    + "each output straight into the send arena, once, with no data or index file (Spark's local "
                    + "reads and its fetch serve it from there); an output the arena has no room for goes to "
                    + "Spark's file and is registered from there, not copied. Applies to the endpoint path (the "
                    + "communicator path reads Spark's files through windows). Needs "
                    + "spark.shuffle.readHostLocalDisk=false and no external shuffle service: both read the files.",
            "file", "file, arena", ConfigEntry.oneOf(HcommSettings.WriteTarget.class));

    public static final ConfigEntry<Long> PUBLISHED_INDEX_MAX_BYTES = ConfigEntry.of(PREFIX
                    + "publishedIndexMaxBytes",
            "Largest partition index of a map output, packed (one varint per partition: 1 to 4 bytes), that travels "
                    + "with its publication through the driver's directory to the readers, so that a reduce task's "
                    + "first one-sided read is data; a larger one is read from the owner first, one round trip more "
                    + "(0: always). The driver keeps it per output, and sends a shuffle's to each executor reading it.",
            "4k", "a size from 0 to 1m", ConfigEntry.bytes(0, 1L << 20));

    public static final ConfigEntry<ReadStrategy.Kind> READ_STRATEGY = ConfigEntry.of(PREFIX + "readStrategy",
            "How reads are issued and completed: `onThread` (HcommReadOnThread + HcommChannelDrainOnThread, "
                    + "Atlas A2/A3) or `nbiFence` (HcommReadNbi + HcommChannelFence, Atlas 350 host RoCE).",
            "onThread", "onThread, nbiFence", ConfigEntry.oneOf(ReadStrategy.Kind.class));

    public static final ConfigEntry<Long> MAX_BYTES_IN_FLIGHT = ConfigEntry.derived(PREFIX + "maxBytesInFlight",
            "Bytes a reduce task may have in flight in one-sided reads at once.",
            "spark.reducer.maxSizeInFlight (48m)",
            c -> c.get("spark.reducer.maxSizeInFlight", "48m"), "a size from 1m to 16g",
            raw -> ConfigEntry.bytes(MIB, 16L << 30).apply(raw.matches("\\d+") ? raw + "m" : raw));

    public static final ConfigEntry<Long> CHANNEL_SETUP_TIMEOUT = ConfigEntry.of(PREFIX + "channelSetupTimeout",
            "How long a reduce task waits for its channel to a peer to become READY before that peer's blocks "
                    + "fall back (with fallback `never`: a fetch failure naming the peer, so Spark recomputes its "
                    + "outputs).",
            "30s", "a duration of at least 100ms", ConfigEntry.millis(100));

    public static final ConfigEntry<Long> READ_TIMEOUT = ConfigEntry.of(PREFIX + "readTimeout",
            "How long a one-sided read may take before it fails (and becomes a FetchFailedException).",
            "60s", "a duration of at least 100ms", ConfigEntry.millis(100));

    public static final ConfigEntry<Fallback.Mode> FALLBACK = ConfigEntry.of(PREFIX + "fallback",
            "`auto`: blocks of a peer that HComm cannot reach, or all blocks when the library cannot load, are "
                    + "fetched by Spark's built-in transfer (logged once). `never`: that is an error instead.",
            "auto", "auto, never", ConfigEntry.oneOf(Fallback.Mode.class));

    public static final ConfigEntry<String> SECRET = ConfigEntry.of(PREFIX + "secret",
            "Shared secret that every channel handshake proves, so that no process without it can open a channel to "
                    + "an executor or read its registered memory. Unset: Spark's own authentication secret when "
                    + "spark.authenticate is on, else a random secret the driver makes per application and hands "
                    + "to its executors (see the README's Security section).",
            "", "a non-empty string, or unset", raw -> {
                if (raw == null || raw.isEmpty()) {
                    throw new IllegalArgumentException("empty");
                }
                return raw;
            });

    public static final ConfigEntry<Api> API = ConfigEntry.of(PREFIX + "api",
            "Which HComm API reads one-sidedly: `endpoint` (HcommEndpointCreate, HcommMemReg, HcommChannelCreate; "
                    + "CANN documents it for the Atlas 350 card), `communicator` (HCCL communicators: reads from the "
                    + "peer's HCCL buffer into one's own; Atlas A2/A3), or `auto`: `communicator` when the SoC "
                    + "(aclrtGetSocName) is an Atlas A2 (Ascend910B*) or A3 (Ascend910_93*), else `endpoint`.",
            "auto", "auto, endpoint, communicator", ConfigEntry.oneOf(Api.class));

    public static final ConfigEntry<Long> COMMUNICATOR_BUFFER_SIZE = ConfigEntry.derived(PREFIX
                    + "communicator.bufferSize",
            "The communicator path's HCCL buffer on each executor, in device memory (its hcclBufferSize is half of "
                    + "it, in whole MB, so it is a multiple of 2m): its halves are cut into windows (send, receive) "
                    + "of communicator.slots x communicator.sliceSize each, so it bounds how many windows an "
                    + "executor has open at once. It bounds the device memory the shuffle holds per executor (one "
                    + "communicator at a time).",
            "sendArenaSize + receiveBufferSize (the memory the endpoint path registers), rounded up to a multiple "
                    + "of 2m, and at least 2 x communicator.slots x communicator.sliceSize",
            c -> defaultCommunicatorBuffer(c) + "b",
            "a multiple of 2m from 2m to 64g, at least 2 x communicator.slots x communicator.sliceSize",
            ConfigEntry.bytes(HCCL_BUFFER_UNIT, 64L << 30));

    public static final ConfigEntry<String> COMMUNICATOR_RESOURCE = ConfigEntry.of(PREFIX + "communicator.resource",
            "The Spark resource whose address is the executor's NPU on the communicator path (Spark must schedule "
                    + "it: spark.executor.resource.<name>.amount), e.g. `npu`; empty: the driver gives each executor "
                    + "the lowest logical id free on its host (ids as ASCEND_RT_VISIBLE_DEVICES numbers them).",
            "", "a resource name Spark schedules, or empty", raw -> raw == null ? "" : raw);

    public static final ConfigEntry<Long> COMMUNICATOR_SETTLE = ConfigEntry.of(PREFIX + "communicator.settle",
            "How long the set of executors must stay unchanged before the driver forms their communicator. Until "
                    + "it is ready, and for executors that are not members, blocks go by Spark's fetch: no task "
                    + "waits for a communicator.",
            "3s", "a duration of at least 100ms", ConfigEntry.millis(100));

    public static final ConfigEntry<Long> COMMUNICATOR_FORM_TIMEOUT = ConfigEntry.of(PREFIX
                    + "communicator.formTimeout",
            "How long the members of a communicator have to join it and acquire their channels (soft HComm's "
                    + "connect timeout; with CANN set HCCL_CONNECT_TIMEOUT as well, default 120 s).",
            "120s", "a duration of at least 1s", ConfigEntry.millis(1000));

    public static final ConfigEntry<HcommSettings.Transfer> COMMUNICATOR_TRANSFER = ConfigEntry.of(PREFIX
                    + "communicator.transfer",
            "How the communicator path moves bytes through the HCCL buffer. `window`, the only transfer: nothing is "
                    + "staged at commit; owners stream every requested byte from Spark's files through windows of "
                    + "the buffer, slice by slice with notify handshakes, so shuffles of any size are read "
                    + "one-sidedly. (`store`, which staged each map output into the buffer at commit, was retired: "
                    + "only outputs that fit the buffer were read one-sidedly.)",
            "window", "window", raw -> {
                if ("store".equalsIgnoreCase(raw == null ? null : raw.trim())) {
                    throw new IllegalArgumentException("the store transfer was retired; every remote byte streams "
                            + "through windows of the HCCL buffer: set window, or remove the key");
                }
                return ConfigEntry.oneOf(HcommSettings.Transfer.class).apply(raw);
            });

    public static final ConfigEntry<Long> COMMUNICATOR_SLOTS = ConfigEntry.of(PREFIX + "communicator.slots",
            "Slots per window end (k) of the communicator path; 2 or more overlap one slice's PCIe copy "
                    + "with another's transfer, more keep a window's link busy with small slices. Each channel "
                    + "carries 3 + 2k notifies per lane, and has as many lanes (windows at once between two "
                    + "executors, up to 4) as fit 64.",
            "4", "an integer from 1 to 30", raw -> {
                long v = Long.parseLong(java.util.Objects.requireNonNull(raw, "no value"));
                if (v < 1 || v > 30) {
                    throw new IllegalArgumentException("out of range");
                }
                return v;
            });

    public static final ConfigEntry<Long> COMMUNICATOR_SLICE_SIZE = ConfigEntry.of(PREFIX
                    + "communicator.sliceSize",
            "The bytes one slot of the communicator path's windows holds (S); each half of the HCCL buffer holds "
                    + "(bufferSize / 2) / (slots x sliceSize) windows.",
            "1m", "from 1m to 64m", ConfigEntry.bytes(MIB, 64 * MIB));

    public static final List<ConfigEntry<?>> ENTRIES = List.of(PROVIDER, LIBRARY_PATH, RECEIVE_BUFFER_SIZE,
            READ_CHUNK_SIZE, SEND_ARENA_SIZE, WRITE_TARGET, PUBLISHED_INDEX_MAX_BYTES, READ_STRATEGY, MAX_BYTES_IN_FLIGHT, CHANNEL_SETUP_TIMEOUT, READ_TIMEOUT,
            FALLBACK, SECRET, API, COMMUNICATOR_BUFFER_SIZE, COMMUNICATOR_RESOURCE, COMMUNICATOR_SETTLE,
            COMMUNICATOR_FORM_TIMEOUT, COMMUNICATOR_TRANSFER, COMMUNICATOR_SLOTS, COMMUNICATOR_SLICE_SIZE);

    private HcommConf() {
    }

    /** Parses every key that is set, and every unknown {@code spark.shuffle.hcomm.*} key is an error. */
    public static void validate(SparkConf conf) {
        for (scala.Tuple2<String, String> kv : conf.getAll()) {
            String key = kv._1();
            if (key.startsWith(PREFIX) && ENTRIES.stream().noneMatch(e -> e.key().equals(key))) {
                StringBuilder known = new StringBuilder();
                ENTRIES.forEach(e -> known.append(known.length() == 0 ? "" : ", ").append(e.key()));
                throw new IllegalArgumentException("Unknown configuration key " + key + "; the HComm shuffle knows: "
                        + known);
            }
        }
        for (ConfigEntry<?> e : ENTRIES) {
            if (e != SECRET || conf.contains(SECRET.key())) {
                e.get(conf);
            }
        }
        long buffer = RECEIVE_BUFFER_SIZE.get(conf);
        long chunk = READ_CHUNK_SIZE.get(conf);
        if (chunk * 4 > buffer) {
            throw new IllegalArgumentException(READ_CHUNK_SIZE.key() + "=" + chunk + " needs "
                    + RECEIVE_BUFFER_SIZE.key() + " of at least four chunks, got " + buffer);
        }
        long hccl = COMMUNICATOR_BUFFER_SIZE.get(conf);
        if (hccl % HCCL_BUFFER_UNIT != 0) {
            throw new IllegalArgumentException(COMMUNICATOR_BUFFER_SIZE.key() + "=" + hccl + " is not a multiple of "
                    + "2m (its half is HcclCommConfig's hcclBufferSize, in whole MB); allowed: "
                    + COMMUNICATOR_BUFFER_SIZE.allowed() + ", e.g. " + roundUp(hccl, HCCL_BUFFER_UNIT) / MIB + "m");
        }
        long slots = COMMUNICATOR_SLOTS.get(conf);
        long slice = COMMUNICATOR_SLICE_SIZE.get(conf);
        if (hccl / 2 < slots * slice) {
            throw new IllegalArgumentException(COMMUNICATOR_BUFFER_SIZE.key() + "=" + hccl + " must hold one window "
                    + "per half: 2 x " + COMMUNICATOR_SLOTS.key() + " x " + COMMUNICATOR_SLICE_SIZE.key() + " = "
                    + 2 * slots * slice + " bytes; raise it, or lower " + COMMUNICATOR_SLOTS.key() + " or "
                    + COMMUNICATOR_SLICE_SIZE.key());
        }
        if (WRITE_TARGET.get(conf) == HcommSettings.WriteTarget.ARENA) {
            String why = WRITE_TARGET.key() + "=arena writes map outputs where only this plugin and the owner's "
                    + "block manager read them (no file), but ";
            if (conf.getBoolean("spark.shuffle.service.enabled", false)) {
                throw new IllegalArgumentException(why + "spark.shuffle.service.enabled=true serves outputs from "
                        + "their files: set " + WRITE_TARGET.key() + "=file, or turn the external shuffle service off");
            }
            if (!"false".equals(conf.get("spark.shuffle.readHostLocalDisk", "true"))) {
                throw new IllegalArgumentException(why + "spark.shuffle.readHostLocalDisk (default true) makes "
                        + "executors read other executors' files on their host: set it to false, or "
                        + WRITE_TARGET.key() + "=file");
            }
            String io = conf.get("spark.shuffle.sort.io.plugin.class", LOCAL_DISK_IO);
            if (!LOCAL_DISK_IO.equals(io)) {
                throw new IllegalArgumentException(why + "spark.shuffle.sort.io.plugin.class=" + io + " is another "
                        + "shuffle I/O plugin: unset it (Spark's " + LOCAL_DISK_IO + "), or " + WRITE_TARGET.key()
                        + "=file");
            }
        }
        String resource = COMMUNICATOR_RESOURCE.get(conf);
        if (!resource.isEmpty() && !conf.contains("spark.executor.resource." + resource + ".amount")) {
            throw new IllegalArgumentException(COMMUNICATOR_RESOURCE.key() + "=" + resource + " is not a resource "
                    + "Spark schedules: set spark.executor.resource." + resource + ".amount (and its discovery "
                    + "script), or leave " + COMMUNICATOR_RESOURCE.key() + " empty for device 0");
        }
    }

    /**
     * The HCCL buffer's default: the device memory the endpoint path registers (send arena and receive buffer), so
     * that one setting bounds both paths, and at least one window per half.
     */
    private static long defaultCommunicatorBuffer(SparkConf c) {
        return Math.max(roundUp(SEND_ARENA_SIZE.get(c) + RECEIVE_BUFFER_SIZE.get(c), HCCL_BUFFER_UNIT),
                roundUp(2 * COMMUNICATOR_SLOTS.get(c) * COMMUNICATOR_SLICE_SIZE.get(c), HCCL_BUFFER_UNIT));
    }

    private static long roundUp(long bytes, long unit) {
        return (bytes + unit - 1) / unit * unit;
    }

    /** Spark's default shuffle I/O plugin, the only one {@code writeTarget=arena} builds on. */
    public static final String LOCAL_DISK_IO = "org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO";

    /** The README table of every key. */
    public static String markdownTable() {
        StringBuilder sb = new StringBuilder("| key | default | allowed | meaning |\n|---|---|---|---|\n");
        for (ConfigEntry<?> e : ENTRIES) {
            sb.append("| `").append(e.key()).append("` | ")
                    .append(e.defaultText().isEmpty() ? "(none)" : e.defaultText()).append(" | ")
                    .append(e.allowed()).append(" | ").append(e.doc()).append(" |\n");
        }
        return sb.toString();
    }
}
