package org.hcomm.bridge;

import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.install.InstallChecks;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The loader: the bundled library in this JVM, and failure to load in child JVMs (the loader is per process). */
class HcommNativeTest {

    @Test
    void bundledSoftLibraryLoadsAndPassesTheAbiCheck() {
        assertTrue(HcommNative.isAvailable(), () -> "unavailable: " + HcommNative.unavailabilityCause());
        assertNull(HcommNative.unavailabilityCause());
        assertEquals(Provider.SOFT, HcommNative.provider());
        assertTrue(HcommNative.librarySource().startsWith("bundled:"), HcommNative.librarySource());
        assertTrue(HcommNative.libraryVersion().contains(InstallChecks.SOFT_ABI_TAG), HcommNative.libraryVersion());
        assertTrue(HcommNative.hasStreamSync());
        assertTrue(SoftHcomm.isActive());
        assertEquals(HcommNative.libraryVersion(), SoftHcomm.version());
    }

    @Test
    @Timeout(60)
    void missingExplicitLibraryMakesTheBridgeUnavailable() throws Exception {
        String line = probe(List.of("-D" + HcommNative.LIBRARY_PATH_PROPERTY + "=/nonexistent/libhcomm_soft.so"));
        assertTrue(line.startsWith("UNAVAILABLE java.lang.UnsatisfiedLinkError"), line);
        assertTrue(line.contains("/nonexistent/libhcomm_soft.so"), line);
    }

    @Test
    @Timeout(60)
    void invalidProviderMakesTheBridgeUnavailable() throws Exception {
        String line = probe(List.of("-D" + HcommNative.PROVIDER_PROPERTY + "=bogus"));
        assertTrue(line.startsWith("UNAVAILABLE java.lang.IllegalArgumentException"), line);
        assertTrue(line.contains("hcomm.provider=bogus"), line);
    }

    @Test
    @Timeout(60)
    void cannProviderWithoutCannIsUnavailable() throws Exception {
        String line = probe(List.of("-D" + HcommNative.PROVIDER_PROPERTY + "=cann"));
        assertTrue(line.startsWith("UNAVAILABLE java.lang.UnsatisfiedLinkError"), line);
        assertTrue(line.contains("libhcomm.so"), line);
    }

    private static String probe(List<String> options) throws Exception {
        List<String> args = new java.util.ArrayList<>(options);
        args.add("probe");
        Process p = RemotePeer.launch(Map.of(), args);
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line = r.readLine();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
            return String.valueOf(line);
        } finally {
            p.destroyForcibly();
        }
    }
}
