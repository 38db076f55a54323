package org.apache.spark.shuffle.hcomm.internal.conf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The README's configuration table is generated from {@link HcommConf#ENTRIES}; this test fails when it drifts.
 * Regenerate it with {@code -Dhcomm.regenerateDocs=true}.
 */
class ConfigDocTest {
    @Test
    void readmeTableMatchesTheCode() throws IOException {
        ReadmeTable.assertCurrent("config-table", ConfigDocTest.class, "configuration", HcommConf.markdownTable());
    }

    @Test
    void badValuesNameTheKeyAndWhatIsAllowed() {
        SparkConf conf = new SparkConf(false).set("spark.shuffle.hcomm.readStrategy", "sideways");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(conf));
        assertTrue(e.getMessage().contains("spark.shuffle.hcomm.readStrategy"), e.getMessage());
        assertTrue(e.getMessage().contains("onThread, nbiFence"), e.getMessage());
        assertTrue(e.getMessage().contains("sideways"), e.getMessage());

        SparkConf size = new SparkConf(false).set("spark.shuffle.hcomm.receiveBufferSize", "1k");
        e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(size));
        assertTrue(e.getMessage().contains("spark.shuffle.hcomm.receiveBufferSize"), e.getMessage());

        SparkConf unknown = new SparkConf(false).set("spark.shuffle.hcomm.recieveBufferSize", "64m");
        e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(unknown));
        assertTrue(e.getMessage().contains("spark.shuffle.hcomm.recieveBufferSize"), e.getMessage());
        assertTrue(e.getMessage().contains("spark.shuffle.hcomm.receiveBufferSize"), e.getMessage());
    }

    @Test
    void defaultsParse() {
        SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1");
        HcommConf.validate(conf);
        SparkConf emptySecret = new SparkConf(false).set(HcommConf.SECRET.key(), "");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HcommConf.validate(emptySecret));
        assertTrue(e.getMessage().contains(HcommConf.SECRET.key()), e.getMessage());
        assertEquals(64L << 20, HcommConf.RECEIVE_BUFFER_SIZE.get(conf));
        assertEquals(48L << 20, HcommConf.MAX_BYTES_IN_FLIGHT.get(conf));
        assertEquals(32L << 20, HcommConf.MAX_BYTES_IN_FLIGHT.get(conf.set("spark.reducer.maxSizeInFlight", "32m")));
    }

    @Test
    void arenaWritesAreRefusedWhereSomethingElseReadsTheFilesNamingTheKeys() {
        SparkConf ok = new SparkConf(false).set(HcommConf.WRITE_TARGET.key(), "arena")
                .set("spark.shuffle.readHostLocalDisk", "false");
        HcommConf.validate(ok);
        assertEquals(HcommSettings.WriteTarget.ARENA, HcommSettings.parse(ok).writeTarget());

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(
                new SparkConf(false).set(HcommConf.WRITE_TARGET.key(), "arena")));
        assertTrue(e.getMessage().contains("spark.shuffle.readHostLocalDisk"), e.getMessage());
        assertTrue(e.getMessage().contains(HcommConf.WRITE_TARGET.key()), e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(ok.clone()
                .set("spark.shuffle.service.enabled", "true")));
        assertTrue(e.getMessage().contains("spark.shuffle.service.enabled"), e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(ok.clone()
                .set("spark.shuffle.sort.io.plugin.class", "com.example.OtherDataIO")));
        assertTrue(e.getMessage().contains("spark.shuffle.sort.io.plugin.class=com.example.OtherDataIO"),
                e.getMessage());

        e = assertThrows(IllegalArgumentException.class, () -> HcommConf.validate(
                new SparkConf(false).set(HcommConf.WRITE_TARGET.key(), "memory")));
        assertTrue(e.getMessage().contains("file, arena"), e.getMessage());
    }
}
