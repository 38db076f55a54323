package org.hcomm.bridge.raw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Compares every size and offset of the JNA structs with gcc's, read from the file {@code layout_probe.c} writes
 * ({@code make layout}, path in system property {@code hcomm.test.layout}). The expected numbers come from the C
 * compiler, not from this test. Needs no HComm library.
 */
class AbiLayoutTest {
    private static final Map<String, Supplier<AbiStruct>> STRUCTS = Map.of(
            "CommAbiHeader", CommAbiHeader::new,
            "CommAddr", CommAddr::new,
            "EndpointLoc", EndpointLoc::new,
            "EndpointDesc", EndpointDesc::new,
            "CommMem", CommMem::new,
            "ThreadConfig", ThreadConfig::new,
            "HcommChannelDesc", HcommChannelDesc::new,
            "HcommBatchTransferDesc", HcommBatchTransferDesc::new);

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
            tests.add(DynamicTest.dynamicTest(key + "=" + expected, () -> {
                if (key.startsWith("sizeof.")) {
                    String struct = key.substring("sizeof.".length());
                    assertEquals(expected, struct(struct).size(), "sizeof(" + struct + ")");
                } else {
                    int dot = key.indexOf('.');
                    String struct = key.substring(0, dot);
                    String field = key.substring(dot + 1);
                    assertEquals(expected, struct(struct).offsetOf(field), "offsetof(" + struct + ", " + field + ")");
                }
            }));
        }
        return tests;
    }

    @Test
    void probeCoversEveryStructAndTheAbiSizesHold() throws IOException {
        Properties p = layout();
        for (String name : STRUCTS.keySet()) {
            assertTrue(p.containsKey("sizeof." + name), "layout probe has no sizeof." + name);
        }
        assertTrue(p.size() >= 50, "layout probe printed only " + p.size() + " entries");
        // The documented sizes (HCOMM_ABI.md §2) the SIZE constants promise, checked against gcc as well.
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
    void softCountersStructIsSeventyTwoBytes() {
        HcommSoftCounters c = new HcommSoftCounters();
        assertEquals(HcommSoftCounters.SIZE, c.size());
        assertEquals(8, c.offsetOf("endpoints"));
        assertEquals(64, c.offsetOf("bytesRead"));
    }

    private static int intOf(Properties p, String key) {
        return Integer.parseInt(p.getProperty(key).trim());
    }

    private static AbiStruct struct(String name) {
        Supplier<AbiStruct> s = STRUCTS.get(name);
        if (s == null) {
            fail("layout probe names struct " + name + " that has no JNA mapping in this test");
        }
        return s.get();
    }
}
