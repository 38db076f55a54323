package org.hcomm.bridge.doctor;

import java.util.Locale;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.raw.HcommSymbol.Need;

/**
 * Which Ascend product this host has ({@code aclrtGetSocName}, read by {@link ApiPath}: {@code libascendcl.so}, or
 * soft HComm's profile) and what that means for the path the doctor checks (docs/HCOMM_ABI.md §3.8,
 * docs/COMMUNICATOR.md §7): on Atlas A2/A3 the communicator path, and a FAIL when the endpoint API is forced there;
 * on Atlas 350 the endpoint API and the read strategy that completes there; a recommendation, or "unknown product:
 * try both" rather than a guess.
 */
final class ProductCheck {
    /** The products docs/HCOMM_ABI.md §3.8 distinguishes. */
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

        /** The product of a SoC name, or null when the name is not one docs/HCOMM_ABI.md documents. */
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

    static Finding check(Need strategy, ApiPath path) {
        String chosen = "readStrategy=" + InstallChecks.strategyName(strategy);
        if (path.soc() == null) {
            return Finding.warn(Check.PRODUCT, "the SoC could not be read (" + path.socProblem() + "): unknown "
                    + "product; " + path.why(), path.communicator() ? "the communicator path is documented for "
                    + "Atlas A2/A3: the end-to-end check shows whether it works here" : TRY_BOTH
                    + "; on an Atlas A2/A3 host: doctor --api communicator");
        }
        String soc = "SoC " + path.soc() + (path.soft() ? " (soft HComm's profile; HCOMM_SOFT_SOC sets it)" : "");
        Product product = path.product();
        if (product == Product.A2 || product == Product.A3) {
            String what = soc + " = " + product.label;
            if (path.communicator()) {
                return Finding.pass(Check.PRODUCT, what + ": " + path.why() + " (HcclCommInitRootInfoConfig, "
                        + "HcclChannelAcquire, HcommReadOnThread in batch mode completed by aclrtSynchronizeStream, "
                        + "as CANN documents for this product); readStrategy does not apply to it");
            }
            return Finding.fail(Check.PRODUCT, what + ": " + path.why() + ", but the endpoint API "
                    + "(HcommEndpointCreate, HcommMemReg, HcommChannelCreate) is documented for Atlas 350 only"
                    + (path.soft() ? ", and soft HComm's profile refuses it (HCCL_E_NOT_SUPPORT) as CANN does" : "")
                    + ": the shuffle cannot read here with it", "set spark.shuffle.hcomm.api=communicator (or auto, "
                    + "the default); doctor --api communicator checks that path");
        }
        if (product == null) {
            String what = soc + " is not one of the products the binding knows (Atlas A2 Ascend910B, A3 "
                    + "Ascend910_93, 350 Ascend950)";
            if (path.soft()) {
                String advice = "set HCOMM_SOFT_SOC to Ascend950PR (Atlas 350), Ascend910B3 (A2) or Ascend910_9391 "
                        + "(A3), or unset it";
                return path.communicator() ? Finding.warn(Check.PRODUCT, what + ", nor one soft HComm emulates; "
                        + path.why() + ", which reads in batch mode, as soft HComm then requires", advice)
                        : Finding.fail(Check.PRODUCT, what + ", nor one soft HComm emulates: it answers the endpoint "
                        + "API with HCCL_E_PARA; " + path.why(), advice);
            }
            return path.communicator() ? Finding.warn(Check.PRODUCT, what + "; " + path.why() + ", which CANN "
                    + "documents for Atlas A2/A3", "the end-to-end check shows whether it works here")
                    : Finding.warn(Check.PRODUCT, what + ": unknown which strategy it supports; " + path.why(),
                    TRY_BOTH + "; on an Atlas A2/A3 host: doctor --api communicator");
        }
        String what = soc + " = " + product.label;
        if (path.communicator()) {
            return Finding.warn(Check.PRODUCT, what + ": " + path.why() + "; the plugin takes the communicator "
                    + "path on Atlas A2/A3 and the endpoint API on this product (CANN 9.0's pages list "
                    + "HcclChannelGetHcclBuffer as not supported on Atlas 350)",
                    "set spark.shuffle.hcomm.api=auto (the default) or endpoint; the end-to-end check shows "
                    + "whether the communicator path works here");
        }
        if (path.soft()) {
            return Finding.pass(Check.PRODUCT, what + ": " + path.why() + "; soft HComm implements it and both read "
                    + "strategies on any Linux host (" + chosen + " is fine; onThread is the default)");
        }
        String recommend = "spark.shuffle.hcomm.readStrategy=" + InstallChecks.strategyName(product.strategy);
        what += ": " + path.why() + "; endpoint API documented; HcommReadNbi + HcommChannelFence on host CPU RoCE "
                + "channels; HcommChannelDrainOnThread is not supported and HcommReadOnThread only on AICPU UB "
                + "channels";
        return strategy == product.strategy ? Finding.pass(Check.PRODUCT, what + "; " + chosen + " fits")
                : Finding.fail(Check.PRODUCT, what + ", so " + chosen + " cannot complete its reads",
                        "set " + recommend);
    }

    private static final String TRY_BOTH = "try both strategies: doctor --read-strategy onThread, then "
            + "--read-strategy nbiFence";
}
