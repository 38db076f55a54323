package org.hcomm.bridge.endpoint;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.hcomm.bridge.BridgeLog;
import org.hcomm.bridge.Engine;
import org.hcomm.bridge.HcommNative;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.error.Failures;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.install.Provider;
import org.hcomm.bridge.raw.CommMem;
import org.hcomm.bridge.raw.EndpointDesc;
import org.hcomm.bridge.raw.HcommAbi;
import org.hcomm.bridge.raw.HcommDescInit;
import org.hcomm.bridge.raw.HcommLibrary;

/**
 * A host RoCE endpoint on one local IPv4 address ({@code HcommEndpointCreate}); owns the endpoint handle and is the
 * factory of everything that hangs off it: registered memory, imported peer memory and channels.
 *
 * <p>Ownership: each object it creates is its own {@link AutoCloseable} owner and should be closed by the caller;
 * {@link #close()} closes whatever is still open (channels, then imports, then registered memory, with a warning)
 * before it destroys the endpoint, so nothing outlives it. {@code close()} is idempotent; any other method after
 * close throws {@link IllegalStateException}.
 *
 * <p>Threading: all methods are thread-safe (set-up calls are serialised on the endpoint), but closing the endpoint
 * while another thread still uses one of its objects is a caller error.
 */
public final class Endpoint extends NativeOwner {
    private static final BridgeLog LOG = BridgeLog.of(Endpoint.class);

    private final Inet4Address address;
    private final byte[] descriptor;
    private final Pointer handle;
    private final List<ChannelSet> channelSets = new ArrayList<>();
    private final List<ImportedMemory> imports = new ArrayList<>();
    private final List<RegisteredMemory> regions = new ArrayList<>();
    private int listenPort = -1;

    private Endpoint(Inet4Address address, byte[] descriptor, Pointer handle) {
        super("Endpoint " + address.getHostAddress());
        this.address = address;
        this.descriptor = descriptor;
        this.handle = handle;
    }

    /**
     * Creates a HOST endpoint, protocol ROCE, on {@code address} (an IPv4 address of this host).
     *
     * @throws IllegalArgumentException if the address is not IPv4
     * @throws IllegalStateException if the HComm library is unavailable
     * @throws HcommException if {@code HcommEndpointCreate} fails
     */
    public static Endpoint create(InetAddress address) {
        Objects.requireNonNull(address, "address");
        if (!(address instanceof Inet4Address)) {
            throw new IllegalArgumentException("only IPv4 endpoints are supported, got " + address);
        }
        HcommNative.ensureEndpointApi();
        EndpointDesc desc = new EndpointDesc();
        HcommDescInit.endpointDescInit(desc);
        desc.protocol = HcommAbi.COMM_PROTOCOL_ROCE;
        desc.commAddr.type = HcommAbi.COMM_ADDR_TYPE_IP_V4;
        System.arraycopy(address.getAddress(), 0, desc.commAddr.raws, 0, 4); // struct in_addr: network order
        desc.loc.locType = HcommAbi.ENDPOINT_LOC_TYPE_HOST;
        desc.write();
        PointerByReference out = new PointerByReference();
        int rc = HcommLibrary.HcommEndpointCreate(desc, out);
        HcommException.check(rc, "HcommEndpointCreate", "endpoint=" + address.getHostAddress());
        byte[] bytes = desc.getPointer().getByteArray(0, EndpointDesc.SIZE);
        return new Endpoint((Inet4Address) address, bytes, out.getValue());
    }

    /** The local address the endpoint was created on. */
    public InetAddress address() {
        return address;
    }

    /**
     * The 160-byte {@code EndpointDesc} this endpoint was created from, to send to peers: they name it as the
     * remote endpoint of their channels. A copy.
     */
    public synchronized byte[] descriptor() {
        checkOpen();
        return descriptor.clone();
    }

    /** The port this endpoint listens on for SERVER channels (started by the library on first call). */
    public synchronized int listenPort() {
        checkOpen();
        if (listenPort < 0) {
            IntByReference port = new IntByReference();
            int rc = HcommLibrary.HcommEndpointGetListenPort(handle, port);
            HcommException.check(rc, "HcommEndpointGetListenPort", context());
            listenPort = port.getValue();
        }
        return listenPort;
    }

    /**
     * Allocates {@code size} bytes of host memory and registers it under {@code tag}: with soft HComm from
     * {@code HcommMemAlloc} (shareable memory peers on this host map), with CANN an anonymous mapping of this
     * process ({@code HcommMemAlloc} is device HBM there, docs/HCOMM_ABI.md §3.2, which Java must not touch as host
     * memory). Register memory before creating the channels that must reach it: a channel sees only the regions
     * registered when it was created.
     */
    public RegisteredMemory allocate(String tag, long size) {
        checkTag(tag);
        if (size <= 0) {
            throw new IllegalArgumentException("size must be > 0, got " + size);
        }
        synchronized (this) {
            checkOpen();
            RegisteredMemory.Backing backing = HcommNative.provider() == Provider.SOFT
                    ? RegisteredMemory.Backing.HCOMM_ALLOC : RegisteredMemory.Backing.HOST_MAPPING;
            Pointer block = backing.allocate(size, context() + " tag=" + tag);
            try {
                RegisteredMemory m = register(tag, block, size, backing);
                regions.add(m);
                return m;
            } catch (RuntimeException e) {
                try {
                    backing.free(block, size, context() + " tag=" + tag);
                } catch (RuntimeException f) {
                    e.addSuppressed(f);
                }
                throw e;
            }
        }
    }

    /**
     * Registers {@code size} bytes at {@code address} that the caller owns and keeps alive until the returned
     * object is closed. For memory peers on the same host can map, prefer {@link #allocate(String, long)}.
     */
    public RegisteredMemory register(String tag, long address, long size) {
        checkTag(tag);
        if (address == 0) {
            throw new IllegalArgumentException("address must not be 0");
        }
        if (size <= 0) {
            throw new IllegalArgumentException("size must be > 0, got " + size);
        }
        synchronized (this) {
            checkOpen();
            RegisteredMemory m = register(tag, new Pointer(address), size, RegisteredMemory.Backing.CALLER);
            regions.add(m);
            return m;
        }
    }

    private RegisteredMemory register(String tag, Pointer block, long size, RegisteredMemory.Backing backing) {
        CommMem mem = new CommMem();
        mem.type = HcommAbi.COMM_MEM_TYPE_HOST;
        mem.addr = block;
        mem.size = size;
        PointerByReference memHandle = new PointerByReference();
        int rc = HcommLibrary.HcommMemReg(handle, tag, mem, memHandle);
        HcommException.check(rc, "HcommMemReg", context() + " tag=" + tag + " size=" + size);
        return new RegisteredMemory(this, tag, block, size, memHandle.getValue(), backing);
    }

    /** Imports a peer's exported memory descriptor: the result names the peer's address to read from. */
    public ImportedMemory importMemory(byte[] memoryDescriptor) {
        Objects.requireNonNull(memoryDescriptor, "memoryDescriptor");
        if (memoryDescriptor.length == 0) {
            throw new IllegalArgumentException("empty memory descriptor");
        }
        byte[] desc = memoryDescriptor.clone();
        synchronized (this) {
            checkOpen();
            CommMem out = new CommMem();
            int rc = HcommLibrary.HcommMemImport(handle, desc, desc.length, out);
            HcommException.check(rc, "HcommMemImport", context() + " descLen=" + desc.length);
            ImportedMemory m = new ImportedMemory(this, desc, Pointer.nativeValue(out.addr), out.size, out.type);
            imports.add(m);
            return m;
        }
    }

    /** {@link #createChannels(Engine, List)} with {@link Engine#CPU}. */
    public ChannelSet createChannels(List<ChannelSpec> specs) {
        return createChannels(Engine.CPU, specs);
    }

    /**
     * Creates one channel per spec in a single {@code HcommChannelCreate} call. Non-blocking: the channels are
     * CONNECTING until {@link ChannelSet#awaitReady} (or {@link ChannelSet#statuses}) has driven them to READY, and
     * the peer must create and poll the matching channels too.
     */
    public ChannelSet createChannels(Engine engine, List<ChannelSpec> specs) {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(specs, "specs");
        if (specs.isEmpty() || specs.size() > HcommAbi.HCOMM_CHANNEL_NUM_MAX) {
            throw new IllegalArgumentException("channel count must be in [1, " + HcommAbi.HCOMM_CHANNEL_NUM_MAX
                    + "], got " + specs.size());
        }
        synchronized (this) {
            checkOpen();
            ChannelSet set = ChannelSet.create(this, engine, List.copyOf(specs));
            channelSets.add(set);
            return set;
        }
    }

    /**
     * Closes every object of this endpoint still open, then destroys the endpoint ({@link #close()}). The first
     * failure is thrown after everything was attempted; later ones are suppressed into it.
     */
    @Override
    protected void release() {
        List<AutoCloseable> leftovers = new ArrayList<>();
        synchronized (this) {
            leftovers.addAll(channelSets);
            leftovers.addAll(imports);
            leftovers.addAll(regions);
        }
        RuntimeException failure = null;
        if (!leftovers.isEmpty()) {
            LOG.warn("Endpoint {} closed with {} objects still open; closing them", address.getHostAddress(),
                    leftovers.size());
        }
        for (AutoCloseable c : leftovers) {
            try {
                c.close();
            } catch (Exception e) {
                failure = Failures.accumulate(failure, e);
            }
        }
        int rc = HcommLibrary.HcommEndpointDestroy(handle);
        if (rc != 0) {
            failure = Failures.accumulate(failure, new HcommException("HcommEndpointDestroy", rc, context()));
        }
        if (failure != null) {
            throw failure;
        }
    }

    // ---- package-private plumbing for the objects this endpoint owns ----

    /** The endpoint handle for a child's native call; the child must hold no other lock order than child→endpoint. */
    Pointer handleForChild() {
        return handle;
    }

    synchronized void forget(Object child) {
        channelSets.remove(child);
        imports.remove(child);
        regions.remove(child);
    }

    String context() {
        return "endpoint=" + address.getHostAddress();
    }

    private static void checkTag(String tag) {
        Objects.requireNonNull(tag, "tag");
        if (tag.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("tag must not contain NUL");
        }
    }
}
