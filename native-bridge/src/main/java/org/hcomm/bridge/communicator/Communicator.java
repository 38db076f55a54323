package org.hcomm.bridge.communicator;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.AclRuntime;
import org.hcomm.bridge.raw.HcclChannelDesc;
import org.hcomm.bridge.raw.HcclCommConfig;
import org.hcomm.bridge.raw.HcclCommLockLibrary;
import org.hcomm.bridge.raw.HcclLibrary;
import org.hcomm.bridge.raw.HcommAbi;

/**
 * An HCCL communicator, the Atlas A2/A3 route to one-sided reads (docs/COMMUNICATOR.md): created collectively by
 * all its ranks ({@link #rootInfo} on one, {@link #join} on every rank within the connect timeout), with one HCCL
 * buffer per rank in device memory ({@link #bufferAddress()}, reached by the host only through {@link Acl}'s copies
 * and the data plane), channels acquired by both ends and released only with the communicator, and streams whose
 * threads read from a peer's HCCL buffer into this rank's. {@link #close()} is {@code HcclCommDestroy}, then the
 * streams it made are destroyed ({@code aclrtDestroyStream}), the order of CANN's own samples.
 *
 * <p>Threading: {@link #acquireChannels} must not run concurrently with itself (CANN's rule per communicator);
 * the inits of one device's communicators in this process run one at a time ({@link #join}: CANN does not support
 * concurrent inits on one card); data-plane work is issued under {@link #claim()}, one user at a time; the rest may
 * be called from any thread; close must not overlap with reads.
 */
public final class Communicator extends NativeOwner {
    /** {@code HCCL_ROOT_INFO_BYTES}. */
    public static final int ROOT_INFO_BYTES = 4108;
    /** {@code HCCL_COMM_NAME_MAX_LENGTH}. */
    private static final int NAME_BYTES = 128;
    /** One lock per device: {@code HcclCommInitRootInfoConfig} calls on one device run one after the other. */
    private static final ConcurrentHashMap<Integer, Object> INIT_LOCKS = new ConcurrentHashMap<>();

    /**
     * The notifies every channel is acquired with ({@link #NOTIFY_NUM}), by index, as HCCL's read templates use
     * three per channel ({@code NORMAL_NOTIFY_NUM}): the reader records {@link #ACK} after its reads, the owner
     * records {@link #DATA} once data is staged, {@link #WINDOW} is for flow control of a staging window.
     */
    public enum Notify {
        ACK(0),
        DATA(1),
        WINDOW(2);

        private final int index;

        Notify(int index) {
            this.index = index;
        }

        /** The notify's index on a channel, in {@code [0, NOTIFY_NUM)}. */
        public int index() {
            return index;
        }
    }

    /** {@code notifyNum} of every channel the bridge acquires. */
    public static final int NOTIFY_NUM = Notify.values().length;

    private final Pointer handle;
    private final int device;
    private final int rank;
    private final int size;
    private final long buffer;
    private final long bufferSize;
    private final String name;
    private final List<Pointer> streams = new ArrayList<>();
    /**
     * One user at a time ({@link #claim()}) per communicator name in this process (several ranks of one communicator
     * in one process, as in tests, share {@code HcommAcquireComm}'s hold, which is by name); a semaphore, as a claim
     * may end on another thread than its start.
     */
    private static final ConcurrentHashMap<String, Semaphore> IN_USE = new ConcurrentHashMap<>();
    private final Semaphore inUse;
    private volatile Thread claimedBy;

    private Communicator(Pointer handle, int device, int rank, int size, long buffer, long bufferSize, String name) {
        super("Communicator rank " + rank + "/" + size + " on device " + device);
        this.handle = handle;
        this.name = name;
        this.device = device;
        this.rank = rank;
        this.size = size;
        this.buffer = buffer;
        this.bufferSize = bufferSize;
        this.inUse = IN_USE.computeIfAbsent(name, n -> new Semaphore(1, true));
    }

    /** {@code HcclGetRootInfo} on {@code device}: the 4,108 bytes every rank needs, carried out of band. */
    public static byte[] rootInfo(int device) {
        HcommNative.ensureCommunicator();
        Acl.useDevice(device);
        Memory info = new Memory(ROOT_INFO_BYTES);
        int rc = HcclLibrary.HcclGetRootInfo(info);
        HcommException.check(rc, "HcclGetRootInfo", "device=" + device);
        return info.getByteArray(0, ROOT_INFO_BYTES);
    }

    /**
     * {@code HcclCommInitRootInfoConfig}: joins a communicator of {@code nRanks} as {@code rank}; blocks until every
     * rank joined or the connect timeout passed ({@code HCCL_E_TIMEOUT}). An init on {@code device} still blocking
     * in this process (an earlier epoch's) is waited for first.
     *
     * @param bufferMb {@code hcclBufferSize} (the HCCL buffer is twice this), or 0 for the library's default
     *     ({@code HCCL_BUFFSIZE}, else 200)
     */
    public static Communicator join(byte[] rootInfo, int nRanks, int rank, int device, int bufferMb, String name) {
        Objects.requireNonNull(rootInfo, "rootInfo");
        if (rootInfo.length != ROOT_INFO_BYTES) {
            throw new IllegalArgumentException("root info must be " + ROOT_INFO_BYTES + " bytes, got "
                    + rootInfo.length);
        }
        if (nRanks < 1 || rank < 0 || rank >= nRanks) {
            throw new IllegalArgumentException("rank " + rank + " of " + nRanks + " is not a rank");
        }
        if (bufferMb < 0) {
            throw new IllegalArgumentException("bufferMb must be >= 0, got " + bufferMb);
        }
        HcommNative.ensureCommunicator();
        Acl.useDevice(device);
        Memory info = new Memory(ROOT_INFO_BYTES);
        info.write(0, rootInfo, 0, ROOT_INFO_BYTES);
        HcclCommConfig config = new HcclCommConfig().init();
        if (bufferMb > 0) {
            config.hcclBufferSize = bufferMb;
        }
        if (name != null) {
            config.commName(name);
        }
        PointerByReference out = new PointerByReference();
        String context = "rank " + rank + " of " + nRanks + " on device " + device + ", hcclBufferSize "
                + (bufferMb > 0 ? bufferMb + " MB" : "default");
        int rc;
        synchronized (INIT_LOCKS.computeIfAbsent(device, d -> new Object())) {
            rc = HcclLibrary.HcclCommInitRootInfoConfig(nRanks, info, rank, config, out);
        }
        HcommException.check(rc, "HcclCommInitRootInfoConfig", context);
        Pointer comm = out.getValue();
        PointerByReference buf = new PointerByReference();
        LongByReference bytes = new LongByReference();
        rc = HcclLibrary.HcclGetHcclBuffer(comm, buf, bytes);
        if (rc != 0) {
            HcclLibrary.HcclCommDestroy(comm);
            throw new HcommException("HcclGetHcclBuffer", rc, context);
        }
        Memory named = new Memory(NAME_BYTES);
        named.clear();
        rc = HcclLibrary.HcclGetCommName(comm, named);
        String commName = rc == 0 ? named.getString(0) : name != null ? name : "";
        return new Communicator(comm, device, rank, nRanks, Pointer.nativeValue(buf.getValue()), bytes.getValue(),
                commName);
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    public int device() {
        return device;
    }

    /** The communicator's name ({@code HcclGetCommName}), the id {@code HcommAcquireComm} takes. */
    public String name() {
        return name;
    }

    /**
     * Claims the communicator for one use (the issue of a batch of reads and notifies, up to its
     * {@code HcommBatchModeEnd}): waits while another claim is held, then calls {@code HcommAcquireComm} when the
     * library has it ({@link HcommNative#hasCommLock()}). CANN's transports keep per-channel state without a lock
     * and HCCL's own host operators take this lock around their data-plane calls. Not reentrant: a second claim on
     * the thread that holds one throws {@link IllegalStateException} instead of waiting for itself.
     */
    public Claim claim() {
        checkOpen();
        if (claimedBy == Thread.currentThread()) {
            throw new IllegalStateException(context() + " is claimed by this thread already ("
                    + Thread.currentThread().getName() + "): flush one batch before filling the next");
        }
        inUse.acquireUninterruptibly();
        claimedBy = Thread.currentThread();
        if (HcommNative.hasCommLock()) {
            int rc = HcclCommLockLibrary.HcommAcquireComm(name);
            if (rc != 0) {
                claimedBy = null;
                inUse.release();
                throw new HcommException("HcommAcquireComm", rc, context() + " name " + name);
            }
        }
        return new Claim();
    }

    /** A held {@link #claim()}; {@link #close()} releases it (once; from any thread). */
    public final class Claim implements AutoCloseable {
        private boolean released;

        private Claim() {}

        @Override
        public void close() {
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
            }
            int rc = HcommNative.hasCommLock() ? HcclCommLockLibrary.HcommReleaseComm(name) : 0;
            claimedBy = null;
            inUse.release();
            HcommException.check(rc, "HcommReleaseComm", context() + " name " + name);
        }
    }

    /** This rank's HCCL buffer: a device address the host may not dereference. */
    public long bufferAddress() {
        checkOpen();
        return buffer;
    }

    public long bufferSize() {
        return bufferSize;
    }

    /**
     * {@code HcclChannelAcquire} for one channel to each of {@code remoteRanks} with the matching protocol
     * ({@link HcommAbi#COMM_PROTOCOL_HCCS} within a server, {@link HcommAbi#COMM_PROTOCOL_ROCE} between servers),
     * engine {@code COMM_ENGINE_CPU_TS}, {@code notifyNum} notifies each (the bridge's channels: {@link #NOTIFY_NUM});
     * the peers call it too. Returns the channel handles in order; they live as long as the communicator.
     */
    public long[] acquireChannels(int[] remoteRanks, int[] protocols, int notifyNum) {
        checkOpen();
        if (remoteRanks.length == 0 || remoteRanks.length != protocols.length) {
            throw new IllegalArgumentException("one protocol per remote rank, at least one");
        }
        Acl.useDevice(device);
        HcclChannelDesc[] descs = (HcclChannelDesc[]) new HcclChannelDesc().toArray(remoteRanks.length);
        for (int i = 0; i < descs.length; i++) {
            descs[i].init();
            descs[i].remoteRank = remoteRanks[i];
            descs[i].channelProtocol = protocols[i];
            descs[i].notifyNum = notifyNum;
            descs[i].write();
        }
        long[] out = new long[remoteRanks.length];
        int rc = HcclLibrary.HcclChannelAcquire(handle, HcommAbi.COMM_ENGINE_CPU_TS, descs[0].getPointer(),
                descs.length, out);
        HcommException.check(rc, "HcclChannelAcquire", context() + " to ranks " + java.util.Arrays.toString(
                remoteRanks));
        return out;
    }

    /**
     * {@code HcclChannelGetHcclBuffer}: the peer's HCCL buffer as this rank's reads over {@code channel} must name it,
     * {address, size}; over HCCS the address is where the buffer is mapped here, not the peer's own address.
     */
    public long[] peerBuffer(long channel) {
        checkOpen();
        PointerByReference buf = new PointerByReference();
        LongByReference bytes = new LongByReference();
        int rc = HcclLibrary.HcclChannelGetHcclBuffer(handle, channel, buf, bytes);
        HcommException.check(rc, "HcclChannelGetHcclBuffer", context());
        return new long[] {Pointer.nativeValue(buf.getValue()), bytes.getValue()};
    }

    /**
     * A new stream with a communicator thread on it ({@code aclrtCreateStream} +
     * {@code HcclThreadAcquireWithStream(COMM_ENGINE_CPU_TS)}). CANN has no call that gives a thread back: it lives
     * until the communicator ends, so callers pool streams.
     */
    public synchronized CommStream newStream() {
        checkOpen();
        Acl.useDevice(device);
        PointerByReference s = new PointerByReference();
        int rc = AclRuntime.aclrtCreateStream(s);
        HcommException.check(rc, "aclrtCreateStream", context());
        long[] thread = new long[1];
        rc = HcclLibrary.HcclThreadAcquireWithStream(handle, HcommAbi.COMM_ENGINE_CPU_TS, s.getValue(), 0, thread);
        if (rc != 0) {
            AclRuntime.aclrtDestroyStream(s.getValue());
            throw new HcommException("HcclThreadAcquireWithStream", rc, context());
        }
        streams.add(s.getValue());
        return new CommStream(this, s.getValue(), thread[0]);
    }

    /** soft HComm: "shm" or "tcp", the way a channel's reads travel; "hcomm" on CANN. */
    public String channelPath(long channel) {
        return SoftHcomm.isActive() ? SoftHcomm.channelPath(channel, context()) : "hcomm";
    }

    String context() {
        return "communicator rank " + rank + "/" + size + " device " + device;
    }

    /** {@code HcclCommDestroy}, then {@code aclrtDestroyStream} for every stream made by {@link #newStream()}. */
    @Override
    protected void release() {
        IN_USE.remove(name, inUse);
        Acl.useDevice(device);
        int rc = HcclLibrary.HcclCommDestroy(handle);
        List<Pointer> mine;
        synchronized (this) {
            mine = new ArrayList<>(streams);
            streams.clear();
        }
        for (Pointer s : mine) {
            AclRuntime.aclrtDestroyStream(s);
        }
        HcommException.check(rc, "HcclCommDestroy", context());
    }
}
