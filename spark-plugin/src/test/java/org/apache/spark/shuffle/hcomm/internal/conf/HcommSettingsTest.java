package org.apache.spark.shuffle.hcomm.internal.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import org.apache.spark.SparkConf;
import org.hcomm.bridge.LoadOptions;
import org.hcomm.bridge.read.ReadStrategy;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.Provider;
import org.junit.jupiter.api.Test;

/** The settings a process reads once: typed values, the one Fallback, and the entries' messages. */
class HcommSettingsTest {
    private static final String P = HcommConf.PREFIX;

    @Test
    void defaultsAreTyped() {
        HcommSettings s = HcommSettings.parse(new SparkConf(false));
        assertEquals(Provider.SOFT, s.provider());
        assertNull(s.libraryPath());
        assertEquals(Api.AUTO, s.api());
        assertEquals(ReadStrategy.Kind.ON_THREAD, s.readStrategy());
        assertEquals(HcommSettings.WriteTarget.FILE, s.writeTarget());
        assertEquals(Fallback.Mode.AUTO, s.fallback().mode());
        assertEquals(64L << 20, s.receiveBufferSize());
        assertEquals(1 << 20, s.readChunkSize());
        assertEquals(256L << 20, s.sendArenaSize());
        assertEquals(4096, s.publishedIndexMaxBytes());
        assertEquals(48L << 20, s.maxBytesInFlight());
        assertEquals(Duration.ofSeconds(30), s.channelSetupTimeout());
        assertEquals(Duration.ofSeconds(60), s.readTimeout());
        assertEquals(Optional.empty(), s.secret());
        assertFalse(s.sparkAuthenticates());
        assertEquals((256L + 64) << 20, s.communicatorBufferSize());
        assertEquals("", s.communicatorResource());
        assertEquals(Duration.ofSeconds(3), s.communicatorSettle());
        assertEquals(Duration.ofSeconds(120), s.communicatorFormTimeout());
        assertEquals(new LoadOptions(Provider.SOFT, null, Api.AUTO, ReadStrategy.Kind.ON_THREAD), s.loadOptions());
    }

    @Test
    void valuesAreParsedIntoEnumsAndNumbersInAnyCase() {
        HcommSettings s = HcommSettings.parse(new SparkConf(false).set(P + "provider", "CANN")
                .set(P + "libraryPath", "/opt/cann/lib64/libhcomm.so").set(P + "api", "Communicator")
                .set(P + "readStrategy", "NBIFENCE").set(P + "writeTarget", "arena")
                .set("spark.shuffle.readHostLocalDisk", "false").set(P + "fallback", "never")
                .set(P + "readTimeout", "2m").set(P + "readChunkSize", "512k").set(P + "secret", "mine")
                .set("spark.reducer.maxSizeInFlight", "96m").set("spark.authenticate", "true"));
        assertEquals(Provider.CANN, s.provider());
        assertEquals(Api.COMMUNICATOR, s.api());
        assertEquals(ReadStrategy.Kind.NBI_FENCE, s.readStrategy());
        assertEquals(HcommSettings.WriteTarget.ARENA, s.writeTarget());
        assertEquals(Fallback.Mode.NEVER, s.fallback().mode());
        assertEquals(Duration.ofMinutes(2), s.readTimeout());
        assertEquals(512 << 10, s.readChunkSize());
        assertEquals(96L << 20, s.maxBytesInFlight()); // Spark's key, when ours is unset
        assertEquals(Optional.of("mine"), s.secret());
        assertTrue(s.sparkAuthenticates());
        assertEquals(new LoadOptions(Provider.CANN, "/opt/cann/lib64/libhcomm.so", Api.COMMUNICATOR,
                ReadStrategy.Kind.NBI_FENCE), s.loadOptions());
    }

    @Test
    void oneSettingsAndOneFallbackPerProcess() {
        SparkConf conf = new SparkConf(false).set(P + "fallback", "never");
        HcommSettings first = HcommSettings.of(conf); // say, the shuffle manager
        HcommSettings second = HcommSettings.of(conf); // and the plugin, from the same SparkConf
        assertSame(first, second);
        assertSame(first.fallback(), second.fallback());
        // another SparkConf (a later SparkContext in this JVM) is read anew, and kept from then on
        SparkConf next = new SparkConf(false);
        HcommSettings later = HcommSettings.of(next);
        assertNotSame(first, later);
        assertNotSame(first.fallback(), later.fallback());
        assertSame(later, HcommSettings.of(next));
        assertNotSame(later, HcommSettings.parse(next));
    }

    @Test
    void theFallbackWarnsOnceAndNeverFails() {
        HcommSettings auto = HcommSettings.parse(new SparkConf(false));
        int[] warned = {0};
        auto.fallback().fallBackOrFail(IllegalStateException::new, "reason", () -> warned[0]++);
        auto.fallback().fallBackOrFail(IllegalStateException::new, "reason", () -> warned[0]++);
        assertEquals(1, warned[0]);
        HcommSettings never = HcommSettings.parse(new SparkConf(false).set(P + "fallback", "never"));
        assertThrows(IllegalStateException.class,
                () -> never.fallback().fallBackOrFail(IllegalStateException::new, "reason", () -> warned[0]++));
    }

    @Test
    void aBadValueNamesTheKeyTheValueAndWhatIsAllowed() {
        for (ConfigEntry<?> e : List.of(HcommConf.PROVIDER, HcommConf.API, HcommConf.READ_STRATEGY,
                HcommConf.WRITE_TARGET, HcommConf.FALLBACK)) {
            IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                    () -> HcommSettings.of(new SparkConf(false).set(e.key(), "sideways")));
            assertEquals("Invalid value 'sideways' for " + e.key() + ": allowed " + e.allowed()
                    + " (not one of the allowed values)", x.getMessage());
        }
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> HcommSettings.parse(new SparkConf(false).set(P + "readTimeout", "10ms")));
        assertEquals("Invalid value '10ms' for spark.shuffle.hcomm.readTimeout: allowed a duration of at least 100ms "
                + "(out of range)", x.getMessage());
    }

    /** The communicator's HCCL buffer: HcclCommConfig carries half of it in whole MB. */
    @Test
    void aCommunicatorBufferThatDoesNotFitNamesTheKeyAndTheAllowedRange() {
        String key = HcommConf.COMMUNICATOR_BUFFER_SIZE.key();
        String allowed = "a multiple of 2m from 2m to 64g, at least 2 x communicator.slots x communicator.sliceSize";
        assertEquals(allowed, HcommConf.COMMUNICATOR_BUFFER_SIZE.allowed());
        IllegalArgumentException odd = assertThrows(IllegalArgumentException.class,
                () -> HcommSettings.parse(new SparkConf(false).set(key, "321m")));
        assertEquals(key + "=336592896 is not a multiple of 2m (its half is HcclCommConfig's hcclBufferSize, in whole "
                + "MB); allowed: " + allowed + ", e.g. 322m", odd.getMessage());
        IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
                () -> HcommSettings.parse(new SparkConf(false).set(key, "128g")));
        assertEquals("Invalid value '128g' for " + key + ": allowed " + allowed + " (out of range)", huge.getMessage());
        // a buffer smaller than arena + receive buffer is fine: only the windows must fit
        assertEquals(64L << 20, HcommSettings.parse(new SparkConf(false).set(key, "64m")).communicatorBufferSize());
        // its default, arena + receive buffer, is rounded up to the unit, and holds one window per half
        assertEquals(320L << 20, HcommSettings.parse(new SparkConf(false)).communicatorBufferSize());
        assertEquals(10L << 20, HcommSettings.parse(new SparkConf(false).set(P + "sendArenaSize", "1m")
                .set(P + "receiveBufferSize", "9m")).communicatorBufferSize());
        assertEquals(8L << 20, HcommSettings.parse(new SparkConf(false).set(P + "sendArenaSize", "1m")
                .set(P + "receiveBufferSize", "4m")).communicatorBufferSize());
        assertEquals(64L << 30, HcommSettings.parse(new SparkConf(false).set(key, "64g")).communicatorBufferSize());
    }

    /**
     * With windows the HCCL buffer holds one window per half and slots fit 64 notifies; a slice need not be whole
     * read chunks (an endpoint-path setting the window's reader does not use).
     */
    @Test
    void windowSettingsThatDoNotFitNameTheKeys() {
        SparkConf window = new SparkConf(false).set(P + "communicator.transfer", "window");
        HcommSettings ok = HcommSettings.parse(window.clone().set(P + "communicator.bufferSize", "16m")
                .set(P + "communicator.sliceSize", "2m"));
        assertEquals(4, ok.communicatorSlots());
        assertEquals(2L << 20, ok.communicatorSliceSize());
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class, () -> HcommSettings.parse(
                window.clone().set(P + "communicator.bufferSize", "6m")));
        assertEquals(P + "communicator.bufferSize=6291456 must hold one window per half: 2 x " + P
                + "communicator.slots x " + P + "communicator.sliceSize = 8388608 bytes; raise it, or lower " + P
                + "communicator.slots or " + P + "communicator.sliceSize", small.getMessage());
        assertEquals(3L << 20, HcommSettings.parse(window.clone().set(P + "communicator.sliceSize", "3m")
                .set(P + "readChunkSize", "2m")).communicatorSliceSize());
        assertEquals(1L << 20, HcommSettings.parse(new SparkConf(false).set(P + "readChunkSize", "4m")
                .set(P + "receiveBufferSize", "64m")).communicatorSliceSize(),
                "a larger read chunk on the endpoint path does not trip the window's default slice");
        for (String bad : new String[] {"0", "31", "two"}) {
            IllegalArgumentException slots = assertThrows(IllegalArgumentException.class, () -> HcommSettings.parse(
                    window.clone().set(P + "communicator.slots", bad)));
            assertTrue(slots.getMessage().startsWith("Invalid value '" + bad + "' for " + P + "communicator.slots: "
                    + "allowed an integer from 1 to 30"), slots.getMessage());
        }
        IllegalArgumentException transfer = assertThrows(IllegalArgumentException.class, () -> HcommSettings.parse(
                new SparkConf(false).set(P + "communicator.transfer", "stream")));
        assertEquals("Invalid value 'stream' for " + P + "communicator.transfer: allowed window (not one of the "
                + "allowed values)", transfer.getMessage());
        assertEquals(HcommSettings.Transfer.WINDOW, HcommConf.COMMUNICATOR_TRANSFER.get(new SparkConf(false)));
        assertEquals(HcommSettings.Transfer.WINDOW, HcommConf.COMMUNICATOR_TRANSFER.get(window));
    }

    /** The store transfer was retired: the key stays, and {@code store} fails at start-up saying so. */
    @Test
    void theRetiredStoreTransferFailsNamingTheKeyTheAllowedValueAndWhy() {
        for (String store : new String[] {"store", "Store"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HcommSettings.parse(
                    new SparkConf(false).set(P + "communicator.transfer", store)));
            assertEquals("Invalid value '" + store + "' for " + P + "communicator.transfer: allowed window (the "
                    + "store transfer was retired; every remote byte streams through windows of the HCCL buffer: "
                    + "set window, or remove the key)", e.getMessage());
        }
    }

    @Test
    void eachEnumEntryAllowsItsEnumsValues() {
        assertAllowed(HcommConf.PROVIDER, Provider.class);
        assertAllowed(HcommConf.API, Api.class);
        assertAllowed(HcommConf.READ_STRATEGY, ReadStrategy.Kind.class);
        assertAllowed(HcommConf.COMMUNICATOR_TRANSFER, HcommSettings.Transfer.class);
        assertAllowed(HcommConf.WRITE_TARGET, HcommSettings.WriteTarget.class);
        assertAllowed(HcommConf.FALLBACK, Fallback.Mode.class);
        // the bridge names its values as the configuration does
        for (Api a : Api.values()) {
            assertEquals(a.toString(), ConfigEntry.valueName(a));
        }
        for (Provider p : Provider.values()) {
            assertEquals(p.toString(), ConfigEntry.valueName(p));
        }
        for (ReadStrategy.Kind k : ReadStrategy.Kind.values()) {
            assertEquals(LoadOptions.strategyName(k), ConfigEntry.valueName(k));
        }
    }

    private static <E extends Enum<E>> void assertAllowed(ConfigEntry<E> entry, Class<E> type) {
        assertEquals(entry.allowed(), Arrays.stream(type.getEnumConstants()).map(ConfigEntry::valueName)
                .collect(Collectors.joining(", ")), entry.key());
        for (E value : type.getEnumConstants()) {
            assertEquals(value, entry.parse(ConfigEntry.valueName(value)));
        }
    }
}
