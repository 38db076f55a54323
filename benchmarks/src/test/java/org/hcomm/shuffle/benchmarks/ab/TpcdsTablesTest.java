package org.hcomm.shuffle.benchmarks.ab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** Where generated TPC-DS tables are kept: a directory per scale, chunk count and generator version. */
class TpcdsTablesTest {
    @Test
    void theDataDirectoryNamesScaleChunksAndTheGeneratorVersionOnTheClassPath() {
        String version = TpcdsTables.generatorVersion();
        assertNotEquals("unknown", version, "the io.trino.tpcds jar names no Implementation-Version");
        assertEquals("sf1.0-8-tpcds" + version, TpcdsTables.dataDir(1.0, 8).getName());
    }
}
