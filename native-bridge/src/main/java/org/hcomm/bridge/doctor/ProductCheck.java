package org.hcomm.bridge.doctor;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import java.util.Locale;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.Install;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * Which Ascend product this host has ({@code aclrtGetSocName} from {@code libascendcl.so}) and what that means for
 * the endpoint API the plugin provisions channels with and for each read strategy (HCOMM_ABI.md §3.8): a
 * recommendation, or "unknown product: try both" rather than a guess.
 */
final class ProductCheck {
    /** The products HCOMM_ABI.md §3.8 distinguishes. */
    enum Product {
        A2("Atlas A2 (910B)", Need.ON_THREAD),
        A3("Atlas A3 (910_93)", Need.ON_THREAD),
        P950("Atlas 350 / Ascend 950", Need.NBI_FENCE);

        final String label;
        final Need strategy;

        Product(String label, Need strategy) {
            this.label = label;
            this.strategy = strategy;
        }

        /** The product of a SoC name, or null when the name is not one HCOMM_ABI.md documents. */
        static Product of(String soc) {
            String s = soc.toLowerCase(Locale.ROOT);
            if (s.startsWith("ascend910_93")) {
                return A3;
            }
            if (s.startsWith("ascend910b")) {
                return A2;
            }
            if (s.startsWith("ascend950")) {
                return P950;
            }
            return null;
        }
    }

    private ProductCheck() {}

    static Finding check(Install install, Need strategy) {
        String chosen = "readStrategy=" + InstallChecks.strategyName(strategy);
        if (install.provider() == Provider.SOFT) {
            return Finding.pass(Check.PRODUCT, "soft HComm: no Ascend SoC; it implements the endpoint API and both "
                    + "read strategies on any Linux host (" + chosen + " is fine; onThread is the default)");
        }
        String soc;
        try {
            soc = socName(install);
        } catch (UnsatisfiedLinkError e) {
            return Finding.warn(Check.PRODUCT, "the SoC could not be read (" + e.getMessage() + "): unknown product",
                    "try both strategies: doctor --read-strategy onThread, then --read-strategy nbiFence");
        }
        if (soc == null || soc.isBlank()) {
            return Finding.warn(Check.PRODUCT, "aclrtGetSocName returned no name: unknown product",
                    "try both strategies: doctor --read-strategy onThread, then --read-strategy nbiFence");
        }
        Product product = Product.of(soc);
        if (product == null) {
            return Finding.warn(Check.PRODUCT, "SoC " + soc + " is not one of the products the binding knows "
                    + "(Atlas A2 Ascend910B, A3 Ascend910_93, 350 Ascend950): "
                    + "unknown which strategy it supports", "try both strategies: doctor --read-strategy onThread, "
                    + "then --read-strategy nbiFence");
        }
        String recommend = "spark.shuffle.hcomm.readStrategy=" + InstallChecks.strategyName(product.strategy);
        if (product == Product.P950) {
            String what = "SoC " + soc + " = " + product.label + ": endpoint API documented; HcommReadNbi + "
                    + "HcommChannelFence on host CPU RoCE channels; HcommChannelDrainOnThread is not supported and "
                    + "HcommReadOnThread only on AICPU UB channels";
            return strategy == product.strategy ? Finding.pass(Check.PRODUCT, what + "; " + chosen + " fits")
                    : Finding.fail(Check.PRODUCT, what + ", so " + chosen + " cannot complete its reads",
                            "set " + recommend);
        }
        String what = "SoC " + soc + " = " + product.label + ": HcommReadOnThread in batch mode with "
                + "HcommChannelDrainOnThread is documented, HcommReadNbi/HcommChannelFence are not; the endpoint "
                + "API (HcommEndpointCreate, HcommChannelCreate) that provisions the plugin's channels is documented "
                + "for Atlas 350 only";
        String endpointAdvice = "the end-to-end check shows whether this CANN's endpoint API answers here";
        return strategy == product.strategy
                ? Finding.warn(Check.PRODUCT, what + "; " + chosen + " fits the reads", endpointAdvice)
                : Finding.fail(Check.PRODUCT, what + ", so " + chosen + " is not supported", "set " + recommend
                        + "; " + endpointAdvice);
    }

    /**
     * {@code aclrtGetSocName()}; when it answers nothing before {@code aclInit(NULL)}, inits ACL and asks again. ACL
     * then stays initialized for the rest of the doctor's run, as in an executor that used it (CANN may refuse a
     * second {@code aclInit} after {@code aclFinalize}).
     */
    private static String socName(Install install) {
        NativeLibrary acl = InstallChecks.ascendCl(install);
        Function name = acl.getFunction("aclrtGetSocName");
        String soc = name.invokeString(new Object[0], false);
        if (soc != null) {
            return soc;
        }
        Function init;
        try {
            init = acl.getFunction("aclInit");
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
        int rc = init.invokeInt(new Object[] {null});
        if (rc != 0) {
            throw new UnsatisfiedLinkError("aclrtGetSocName answered nothing and aclInit(NULL) returned " + rc);
        }
        return name.invokeString(new Object[0], false);
    }
}
