package org.apache.spark.shuffle.hcomm.internal.executor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommConf;
import org.apache.spark.shuffle.hcomm.internal.conf.HcommSettings;
import org.apache.spark.shuffle.hcomm.internal.conf.LogCategory;
import org.apache.spark.shuffle.hcomm.internal.rpc.Messages;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.communicator.Acl;
import org.hcomm.bridge.install.Api;
import org.hcomm.bridge.transport.CommunicatorTransport;
import org.hcomm.bridge.transport.TransportException;
import org.slf4j.Logger;

/**
 * The executor's side of the communicator path (Atlas A2/A3): which API the executor uses, which NPU, and its part
 * in forming a communicator (the root info when it is the first member, its join when the driver says). Immutable;
 * the agent asks for the root info on its RPC thread and joins on a thread of its own, as a join blocks until every
 * member joined.
 */
final class CommunicatorMember {
    private static final Logger LOG = LogCategory.EXECUTOR_RUNTIME.logger();

    private final String executorId;
    private final String host;
    private final int device;
    private final int bufferMb;
    private final String secret;
    private final Duration formTimeout;
    private final Duration readTimeout;
    private volatile int joinedDevice = -1;
    /** How the HCCL buffer is cut into windows. */
    private final CommunicatorTransport.WindowSpec window;

    CommunicatorMember(HcommSettings settings, String executorId, String host, int device, String secret) {
        this.executorId = executorId;
        this.host = host;
        this.device = device;
        this.bufferMb = (int) ((settings.communicatorBufferSize() + (2L << 20) - 1) / (2L << 20));
        this.secret = secret;
        this.formTimeout = settings.communicatorFormTimeout();
        this.readTimeout = settings.readTimeout();
        this.window = new CommunicatorTransport.WindowSpec(settings.communicatorSlots(),
                settings.communicatorSliceSize(), settings.readTimeout().toMillis());
        if (settings.writeTarget() == HcommSettings.WriteTarget.ARENA) {
            LOG.warn("HComm on executor {}: {}=arena does not apply to the communicator path with windows ({}=window): "
                    + "map outputs go to Spark's files, and owners stream them from there through windows", executorId,
                    HcommConf.WRITE_TARGET.key(), HcommConf.COMMUNICATOR_TRANSFER.key());
        }
    }

    /**
     * {@link Api#ENDPOINT} or {@link Api#COMMUNICATOR}: the configured API, or for {@code auto} the one the SoC
     * supports (A2 and A3: communicator; the loader reads the SoC before it judges the install for that API). Loads
     * the library as {@code settings} say; when it cannot load, endpoint (its failure then takes the usual fallback
     * path).
     */
    static Api chooseApi(HcommSettings settings) {
        HcommNative.load(settings.loadOptions());
        return HcommNative.api(); // the loader decided auto by the SoC before judging the install
    }

    static boolean isA2OrA3(String soc) {
        return Api.AUTO.resolve(soc) == Api.COMMUNICATOR;
    }

    /**
     * The NPU Spark's resource scheduler gave this executor ({@link HcommConf#COMMUNICATOR_RESOURCE}), or
     * {@link Messages.RegisterExecutor#NO_DEVICE} when no resource is configured (the driver then assigns the lowest
     * logical id free on the executor's host); says which in the log.
     */
    static int device(PluginContext plugin, HcommSettings settings) {
        String name = settings.communicatorResource();
        if (name.isEmpty()) {
            LOG.info("HComm on executor {}: the driver assigns its NPU, the lowest logical id free on its host ({} is "
                    + "not set)", plugin.executorID(), HcommConf.COMMUNICATOR_RESOURCE.key());
            return Messages.RegisterExecutor.NO_DEVICE;
        }
        Map<String, ResourceInformation> resources = plugin.resources();
        ResourceInformation info = resources.get(name);
        if (info == null || info.addresses().length == 0) {
            throw new IllegalStateException("Spark assigned executor " + plugin.executorID() + " no '" + name
                    + "' resource (" + HcommConf.COMMUNICATOR_RESOURCE.key() + "); it has " + resources.keySet());
        }
        String address = info.addresses()[0];
        int device;
        try {
            device = Integer.parseInt(address.trim());
        } catch (NumberFormatException e) {
            throw new UnusableDevice("resource '" + name + "' of executor " + plugin.executorID()
                    + " has address '" + address + "', not an NPU number (" + HcommConf.COMMUNICATOR_RESOURCE.key()
                    + "; its addresses must be logical ids, as ASCEND_RT_VISIBLE_DEVICES leaves them to this "
                    + "process)", e);
        }
        LOG.info("HComm on executor {}: NPU {} (resource '{}', addresses {})", plugin.executorID(), device, name,
                String.join(",", info.addresses()));
        return device;
    }

    /** Which setting a failure on NPU {@code device} points at, by its code. */
    private String hint(int code, int device) {
        switch (code) {
            case 3: // HCCL_E_MEMORY
            case 24: // HCCL_E_OOM
                return " (the HCCL buffer, " + (2L * bufferMb) + " MB, does not fit the device: lower "
                        + HcommConf.COMMUNICATOR_BUFFER_SIZE.key() + ")";
            case 9: // HCCL_E_TIMEOUT
                return " (not every member joined within " + HcommConf.COMMUNICATOR_FORM_TIMEOUT.key() + ")";
            case 15: // HCCL_E_RUNTIME
            case 107001: // ACL_ERROR_RT_INVALID_DEVICEID
                return deviceHint(device);
            default:
                return "";
        }
    }

    /** What an NPU id the process cannot use points at: the setting that chose it, and the variable that numbers. */
    private static String deviceHint(int device) {
        return " (NPU " + device + " is not usable here: " + HcommConf.COMMUNICATOR_RESOURCE.key() + "; it is a "
                + "logical id, counted among the devices ASCEND_RT_VISIBLE_DEVICES leaves this process)";
    }

    /** An NPU this executor cannot use: an address that is not a number, or an id outside the visible devices. */
    static final class UnusableDevice extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        UnusableDevice(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Why this executor cannot take part in communicators at all, checked at start before any communicator init
     * ({@link CommunicatorChecks}): {@code HCCL_OP_EXPANSION_MODE} in its environment, and the NPU Spark's resource
     * gave it against the devices it sees; null when it can.
     */
    String preflight() {
        String mode = CommunicatorChecks.expansionMode(System.getenv(CommunicatorChecks.EXPANSION_MODE),
                Acl.socName());
        if (mode != null) {
            return "executor " + executorId + " cannot read through communicators: " + mode;
        }
        String npu = device >= 0 ? unusable(device) : null;
        return npu == null ? null : "executor " + executorId + " cannot read through communicators: " + npu;
    }

    /**
     * Why NPU {@code npu} is not among the devices this process sees ({@code aclrtGetDeviceCount}), with the
     * settings it points at; null when it is, or when the library cannot say (then {@code aclrtSetDevice} judges).
     */
    private String unusable(int npu) {
        int count;
        try {
            count = Acl.deviceCount();
        } catch (RuntimeException | LinkageError e) {
            LOG.debug("HComm on executor {}: no device count ({}); aclrtSetDevice judges NPU {}", executorId, e, npu);
            return null;
        }
        String why = CommunicatorChecks.device(npu, count, device < 0);
        return why == null ? null : why + deviceHint(npu);
    }

    /** Throws when NPU {@code npu} is not among the visible devices (before any {@code aclrtSetDevice}). */
    private void checkDevice(int npu, String doing) {
        String why = unusable(npu);
        if (why != null) {
            throw new UnusableDevice("executor " + executorId + " could not " + doing + " on NPU " + npu + ": " + why,
                    null);
        }
    }

    /** The NPU Spark named for this executor, or {@link Messages.RegisterExecutor#NO_DEVICE}. */
    int device() {
        return device;
    }

    /** The NPU to use: the one the driver holds for this executor, else Spark's, else 0. */
    private int device(int asked) {
        return asked >= 0 ? asked : Math.max(device, 0);
    }

    /** The NPU this executor's latest communicator is on, or -1 before it joined one. */
    int joinedDevice() {
        return joinedDevice;
    }

    /** The channel secret, which the window server's connections prove too. */
    String secret() {
        return secret;
    }

    /** Applies the soft settings (secret, timeouts, the address communicators listen on). */
    void configureSoft() {
        if (SoftHcomm.isActive()) {
            if (secret != null) {
                SoftHcomm.configure("secret", secret);
            }
            SoftHcomm.configure("exec_timeout_ms", Long.toString(Math.max(1, readTimeout.toMillis())));
            SoftHcomm.configure("connect_timeout_ms", Long.toString(Math.max(1, formTimeout.toMillis())));
            SoftHcomm.configure("if_ip", resolve(host));
        }
    }

    private static String resolve(String host) {
        try {
            return java.net.InetAddress.getByName(host).getHostAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("host " + host + " does not resolve", e);
        }
    }

    /** {@code HcclGetRootInfo} on this executor's NPU (the driver asks the first member of a communicator). */
    Messages.RootInfo rootInfo(Messages.RootInfoAsk ask) throws TransportException {
        configureSoft();
        int npu = device(ask.device());
        checkDevice(npu, "make the root info of communicator " + ask.epoch());
        try {
            return new Messages.RootInfo(ask.epoch(), CommunicatorTransport.rootInfo(npu));
        } catch (TransportException e) {
            throw new TransportException(e.call(), e.code(), "executor " + executorId + " could not make the root "
                    + "info of communicator " + ask.epoch() + " on NPU " + npu + ": " + e.getMessage()
                    + hint(e.code(), npu), e);
        }
    }

    /** Joins the communicator the driver formed; blocks until every member joined (or the form timeout). */
    CommunicatorTransport join(Messages.JoinCommunicator j) throws TransportException {
        configureSoft();
        List<CommunicatorTransport.Member> members = new ArrayList<>();
        for (int i = 0; i < j.members().size(); i++) {
            members.add(new CommunicatorTransport.Member(j.members().get(i), j.hosts().get(i)));
        }
        long start = System.nanoTime();
        int npu = device(j.device());
        checkDevice(npu, "join communicator " + j.epoch());
        CommunicatorTransport t;
        try {
            t = CommunicatorTransport.formWindowed(j.rootInfo(), members, j.rank(), npu, bufferMb,
                    "hcomm-shuffle-" + j.epoch(), window);
        } catch (TransportException e) {
            throw new TransportException(e.call(), e.code(), "executor " + executorId + " could not join communicator "
                    + j.epoch() + " on NPU " + npu + ": " + e.getMessage() + hint(e.code(), npu), e);
        }
        joinedDevice = npu;
        LOG.info("HComm on executor {}: joined communicator {} as rank {} of {} on NPU {} in {} ms ({})", executorId,
                j.epoch(), j.rank(), members.size(), npu, (System.nanoTime() - start) / 1_000_000, t.describe());
        return t;
    }
}
