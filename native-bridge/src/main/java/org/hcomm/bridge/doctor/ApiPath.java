package org.hcomm.bridge.doctor;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.install.Finding;
import org.hcomm.bridge.install.Finding.Check;
import org.hcomm.bridge.install.Install;
import org.hcomm.bridge.install.InstallChecks;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.AclRuntime;

/**
 * Which API the doctor checks, as {@code spark.shuffle.hcomm.api} decides it in an executor: {@code endpoint} or
 * {@code communicator} when set, and for {@code auto} the SoC's ({@code aclrtGetSocName}: Atlas A2
 * {@code Ascend910B*} and A3 {@code Ascend910_93*} take the communicator path, every other SoC, or none known, the
 * endpoint API). The SoC is read before the HComm library is bound, so that the loader's quick checks judge the
 * path the SoC takes: from {@code libascendcl.so} with CANN, from soft HComm itself (its profile,
 * {@code HCOMM_SOFT_SOC}) with soft.
 *
 * @param requested any API
 * @param chosen {@link Api#ENDPOINT} or {@link Api#COMMUNICATOR}
 * @param soc the SoC's name, or null when it could not be read ({@code socProblem} says why)
 * @param product what the SoC is, or null when unknown
 * @param soft whether the SoC is soft HComm's profile
 */
record ApiPath(Api requested, Api chosen, String soc, String socProblem, ProductCheck.Product product,
        boolean soft) {
    boolean communicator() {
        return chosen == Api.COMMUNICATOR;
    }

    /** Reads the SoC of {@code install} and decides as the plugin does. */
    static ApiPath decide(Api requested, Install install) {
        String soc = null;
        String problem = null;
        try {
            soc = InstallChecks.socName(install);
            if (soc == null || soc.isBlank()) {
                soc = null;
                problem = "aclrtGetSocName returned no name";
            }
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            problem = firstLines(e);
        }
        ProductCheck.Product product = soc == null ? null : ProductCheck.Product.of(soc);
        boolean a2a3 = product == ProductCheck.Product.A2 || product == ProductCheck.Product.A3;
        Api chosen = requested != Api.AUTO ? requested : a2a3 ? Api.COMMUNICATOR : Api.ENDPOINT;
        return new ApiPath(requested, chosen, soc, problem, product, install.provider() == Provider.SOFT);
    }

    /** Why this path, in words. */
    String why() {
        if (requested != Api.AUTO) {
            return "api=" + chosen + " is set";
        }
        return communicator() ? "api auto takes the communicator path on Atlas A2/A3, as the plugin does"
                : "api auto takes the endpoint API " + (soc == null ? "when the SoC is unknown" : "on this SoC")
                + ", as the plugin does";
    }

    /** JNA's "Unable to load library 'x':" and dlerror's line after it, on one line. */
    private static String firstLines(Throwable e) {
        return String.join(" ", String.valueOf(e.getMessage()).lines().limit(2).toList());
    }

    /** The ACL functions the binding calls ({@link AclRuntime}'s): the communicator path needs every one. */
    static List<String> aclFunctions() {
        List<String> out = new ArrayList<>();
        for (Method m : AclRuntime.class.getDeclaredMethods()) {
            if (Modifier.isNative(m.getModifiers())) {
                out.add(m.getName());
            }
        }
        out.sort(null);
        return out;
    }

    /**
     * The symbols finding for the communicator path with CANN, where the ACL functions come from
     * {@code libascendcl.so}: FAIL naming those it lacks (or that it does not open), else the finding as it was,
     * saying that ACL has them. Soft HComm exports them itself (the loader binds them or is unavailable).
     */
    static Finding withAcl(Finding symbols, Install install) {
        if (install == null || install.provider() != Provider.CANN || symbols.status() == Finding.Status.SKIP) {
            return symbols;
        }
        List<String> want = aclFunctions();
        List<String> missing = new ArrayList<>();
        String file;
        try {
            NativeLibrary acl = InstallChecks.ascendCl(install);
            file = acl.getFile() == null ? acl.getName() : acl.getFile().getAbsolutePath();
            for (String f : want) {
                try {
                    acl.getFunction(f);
                } catch (UnsatisfiedLinkError e) {
                    missing.add(f);
                }
            }
        } catch (UnsatisfiedLinkError e) {
            file = System.mapLibraryName("ascendcl") + " (" + firstLines(e) + ")";
            missing.addAll(want);
        }
        if (missing.isEmpty()) {
            return new Finding(Check.SYMBOLS, symbols.status(), symbols.summary() + "; " + file + " has the "
                    + want.size() + " ACL functions the communicator path calls", symbols.advice());
        }
        String what = file + ": missing " + missing + ", which api=communicator needs (ACL: devices, streams, "
                + "copies between host and device)";
        return symbols.failed() ? Finding.fail(Check.SYMBOLS, symbols.summary() + "; " + what, symbols.advice())
                : Finding.fail(Check.SYMBOLS, what + "; " + symbols.summary(), "source the set_env.sh of the CANN "
                + "this libhcomm.so belongs to, so that its libascendcl.so (the runtime package) is found");
    }
}
