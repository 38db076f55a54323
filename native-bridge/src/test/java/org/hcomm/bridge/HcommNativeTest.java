package org.hcomm.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.read.ReadStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The loader: the bundled library in this JVM, failure to load in child JVMs (the loader is per process), and its
 * options.
 */
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
    void theFirstLoadHoldsForTheProcess() {
        assertTrue(HcommNative.isAvailable()); // loaded, with the defaults unless a test loaded it before
        LoadOptions loaded = HcommNative.options();
        LoadOptions other = loaded.withApi(loaded.api() == Api.COMMUNICATOR ? Api.ENDPOINT : Api.COMMUNICATOR);
        assertTrue(HcommNative.load(other));
        assertEquals(loaded, HcommNative.options());
    }

    @Test
    void optionsTravelAsCommandLineOptions() {
        LoadOptions o = new LoadOptions(Provider.CANN, "/opt/x/libhcomm.so", Api.AUTO, ReadStrategy.Kind.NBI_FENCE);
        assertEquals(o, LoadOptions.fromArgs(o.toArgs()));
        assertEquals(LoadOptions.DEFAULTS, LoadOptions.fromArgs(LoadOptions.DEFAULTS.toArgs()));
        assertEquals(LoadOptions.DEFAULTS, LoadOptions.fromArgs(List.of("--library", " ")));
    }

    @Test
    void invalidOptionsNameTheOptionAndWhatIsAllowed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LoadOptions.fromArgs(List.of("--provider", "bogus")));
        assertEquals("--provider=bogus is not valid; use soft or cann", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LoadOptions.fromArgs(List.of("--api", "both")));
        assertEquals("--api both is not valid; use auto, endpoint or communicator", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> LoadOptions.fromArgs(List.of("--read-strategy", "sideways")));
        assertEquals("read strategy sideways is not valid; use onThread or nbiFence", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> LoadOptions.fromArgs(List.of("--bytes", "8")));
        assertTrue(e.getMessage().startsWith("unknown option --bytes"), e.getMessage());
    }

    @Test
    void autoTakesTheCommunicatorPathOnAtlasA2AndA3Only() {
        assertEquals(Api.COMMUNICATOR, Api.AUTO.resolve("Ascend910B3"));
        assertEquals(Api.COMMUNICATOR, Api.AUTO.resolve("Ascend910_9391"));
        assertEquals(Api.ENDPOINT, Api.AUTO.resolve("Ascend950PR"));
        assertEquals(Api.ENDPOINT, Api.AUTO.resolve(null));
        assertEquals(Api.ENDPOINT, Api.ENDPOINT.resolve("Ascend910B3"));
    }

    @Test
    @Timeout(60)
    void missingExplicitLibraryMakesTheBridgeUnavailable() throws Exception {
        String line = probe(List.of("--library", "/nonexistent/libhcomm_soft.so"));
        assertTrue(line.startsWith("UNAVAILABLE java.lang.UnsatisfiedLinkError"), line);
        assertTrue(line.contains("/nonexistent/libhcomm_soft.so"), line);
    }

    @Test
    @Timeout(60)
    void cannProviderWithoutCannIsUnavailable() throws Exception {
        String line = probe(List.of("--provider", "cann"));
        assertTrue(line.startsWith("UNAVAILABLE java.lang.UnsatisfiedLinkError"), line);
        assertTrue(line.contains("libhcomm.so"), line);
    }

    private static String probe(List<String> options) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("probe"));
        args.addAll(options);
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
