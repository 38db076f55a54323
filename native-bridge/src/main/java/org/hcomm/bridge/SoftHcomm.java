package org.hcomm.bridge;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.HcommSoftCounters;
import org.hcomm.bridge.raw.HcommSoftLibrary;

/**
 * The functions only soft HComm has ({@code hcomm_soft.h}): per-process configuration, object counters, version.
 * Every method throws {@link UnsupportedOperationException} when the provider is not soft, and
 * {@link IllegalStateException} when the library is unavailable. Thread-safe (the library serialises).
 */
public final class SoftHcomm {
    private SoftHcomm() {}

    /** True when the soft provider is loaded. */
    public static boolean isActive() {
        return HcommNative.isAvailable() && HcommNative.provider() == Provider.SOFT;
    }

    /**
     * {@code HcommSoftConfigure(key, value)}: keys {@code secret}, {@code force_tcp}, {@code exec_timeout_ms},
     * {@code connect_timeout_ms}. Affects channels created afterwards (and, for timeouts, later waits).
     */
    public static void configure(String key, String value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        int rc = lib().HcommSoftConfigure(key, value);
        // the secret's value never goes into a message
        HcommException.check(rc, "HcommSoftConfigure", "key=" + key + ("secret".equals(key) ? "" : " value=" + value));
    }

    /** {@code HcommSoftGetCounters}. */
    public static SoftCounters counters() {
        HcommSoftCounters c = new HcommSoftCounters();
        c.size = HcommSoftCounters.SIZE;
        int rc = lib().HcommSoftGetCounters(c);
        HcommException.check(rc, "HcommSoftGetCounters", "");
        return new SoftCounters(c.endpoints, c.regions, c.allocations, c.imports, c.channels, c.threads,
                c.bytesServed, c.bytesRead, c.opsRunByWaiter, c.comms, c.deviceBytes, c.h2dBytes, c.d2hBytes,
                c.notifies, c.events, c.hostBytes);
    }

    /**
     * {@code HcommSoftChannelPath}: how the reads of channel {@code channel} travel, {@code "shm"} or {@code "tcp"}
     * (null when the library has not chosen yet); {@code context} is what an error names.
     */
    public static String channelPath(long channel, String context) {
        PointerByReference path = new PointerByReference();
        int rc = lib().HcommSoftChannelPath(channel, path);
        HcommException.check(rc, "HcommSoftChannelPath", context);
        Pointer p = path.getValue();
        return p == null ? null : p.getString(0, StandardCharsets.US_ASCII.name());
    }

    /** {@code HcommSoftVersion()}, e.g. {@code "soft-hcomm 0.1.0 abi-v4"}. */
    public static String version() {
        return lib().HcommSoftVersion();
    }

    private static HcommSoftLibrary lib() {
        HcommSoftLibrary soft = HcommNative.soft();
        if (soft == null) {
            throw new UnsupportedOperationException("soft HComm functions need provider soft, not "
                    + HcommNative.provider());
        }
        return soft;
    }
}
