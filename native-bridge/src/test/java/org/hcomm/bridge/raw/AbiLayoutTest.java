package org.hcomm.bridge.raw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Compares every size and offset of the JNA structs with gcc's, read from the file {@code layout_probe.c} writes
 * ({@code make layout}, path in system property {@code hcomm.test.layout}). The expected numbers come from the C
 * compiler, not from this test. Needs no HComm library.
 */
class AbiLayoutTest {
    private static Properties layout() throws IOException {
        String file = System.getProperty("hcomm.test.layout");
        assertNotNull(file, "system property hcomm.test.layout is not set (run through Maven: make layout)");
        Path path = Path.of(file);
        assertTrue(Files.isRegularFile(path), "layout file " + path + " missing: did `make layout` run?");
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(path, StandardCharsets.US_ASCII)) {
            p.load(r);
        }
        return p;
    }

    @TestFactory
    List<DynamicTest> everyGccSizeAndOffsetMatchesJna() throws IOException {
        Properties p = layout();
        List<DynamicTest> tests = new ArrayList<>();
        for (String key : new TreeSet<>(p.stringPropertyNames())) {
            int expected = Integer.parseInt(p.getProperty(key).trim());
            tests.add(DynamicTest.dynamicTest(key + "=" + expected,
                    () -> assertEquals(expected, AbiLayout.binding(key), key)));
        }
        return tests;
    }

    @Test
    void probeCoversEveryStructAndTheAbiSizesHold() throws IOException {
        Properties p = layout();
        for (String name : AbiLayout.STRUCTS.keySet()) {
            assertTrue(p.containsKey("sizeof." + name), "layout probe has no sizeof." + name);
        }
        assertTrue(p.size() >= 50, "layout probe printed only " + p.size() + " entries");
        // The documented sizes (docs/HCOMM_ABI.md §2) the SIZE constants promise, checked against gcc as well.
        assertEquals(CommAbiHeader.SIZE, intOf(p, "sizeof.CommAbiHeader"));
        assertEquals(CommAddr.SIZE, intOf(p, "sizeof.CommAddr"));
        assertEquals(EndpointLoc.SIZE, intOf(p, "sizeof.EndpointLoc"));
        assertEquals(EndpointDesc.SIZE, intOf(p, "sizeof.EndpointDesc"));
        assertEquals(CommMem.SIZE, intOf(p, "sizeof.CommMem"));
        assertEquals(ThreadConfig.SIZE, intOf(p, "sizeof.ThreadConfig"));
        assertEquals(HcommChannelDesc.SIZE, intOf(p, "sizeof.HcommChannelDesc"));
        assertEquals(HcommBatchTransferDesc.SIZE, intOf(p, "sizeof.HcommBatchTransferDesc"));
    }

    @Test
    void everyProbeEntryAgreesWithTheBinding() throws IOException {
        assertEquals(List.of(), AbiLayout.mismatches(layout()));
    }

    @Test
    void softCountersStructIsSeventyTwoBytes() {
        HcommSoftCounters c = new HcommSoftCounters();
        assertEquals(HcommSoftCounters.SIZE, c.size());
        assertEquals(8, c.offsetOf("endpoints"));
        assertEquals(64, c.offsetOf("bytesRead"));
    }

    private static int intOf(Properties p, String key) {
        return Integer.parseInt(p.getProperty(key).trim());
    }
}
