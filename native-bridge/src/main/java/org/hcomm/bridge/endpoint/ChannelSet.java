package org.hcomm.bridge.endpoint;

import com.sun.jna.Memory;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.hcomm.bridge.Engine;
import org.hcomm.bridge.NativeOwner;
import org.hcomm.bridge.SoftHcomm;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.raw.EndpointDesc;
import org.hcomm.bridge.raw.HcommChannelDesc;
import org.hcomm.bridge.raw.HcommDescInit;
import org.hcomm.bridge.raw.HcommLibrary;

/**
 * Channels created together by one {@code HcommChannelCreate} call and destroyed together by one
 * {@code HcommChannelDestroy} call ({@link #close()}); the unit of the plugin's per-stage channel lifecycle.
 *
 * <p>Ownership: the set owns every handle; {@link #close()} is idempotent, and afterwards every method, and every
 * {@link Channel} of the set, throws {@link IllegalStateException}.
 *
 * <p>Threading: HComm forbids driving one channel from several threads at once, so {@link #statuses()},
 * {@link #awaitReady(Duration)} and {@link #close()} must not overlap with each other or with reads on the set.
 * Reads on different channels of a READY set may run on different threads.
 */
public final class ChannelSet extends NativeOwner {
    private static final long MAX_POLL_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final Endpoint endpoint;
    private final Engine engine;
    private final long[] handles;
    private final Channel[] channels;

    private ChannelSet(Endpoint endpoint, Engine engine, long[] handles, List<ChannelSpec> specs) {
        super("ChannelSet of " + handles.length + " channels starting with " + specs.get(0).name());
        this.endpoint = endpoint;
        this.engine = engine;
        this.handles = handles;
        this.channels = new Channel[handles.length];
        for (int i = 0; i < handles.length; i++) {
            channels[i] = new Channel(i, specs.get(i).name());
        }
    }

    /** Called by {@link Endpoint#createChannels} under the endpoint's lock. */
    static ChannelSet create(Endpoint endpoint, Engine engine, List<ChannelSpec> specs) {
        int n = specs.size();
        HcommChannelDesc first = new HcommChannelDesc();
        HcommChannelDesc[] descs = n == 1 ? new HcommChannelDesc[] {first} : (HcommChannelDesc[]) first.toArray(n);
        List<Memory> names = new ArrayList<>(n); // must stay reachable until HcommChannelCreate returns
        for (int i = 0; i < n; i++) {
            ChannelSpec spec = specs.get(i);
            HcommChannelDesc d = descs[i];
            HcommDescInit.hcommChannelDescInit(d);
            d.remoteEndpoint.getPointer().write(0, spec.remoteEndpointUnsafe(), 0, EndpointDesc.SIZE);
            d.remoteEndpoint.read();
            d.notifyNum = spec.notifyNum();
            d.exchangeAllMems = 1;
            d.role = spec.role().code();
            d.port = (short) spec.port();
            byte[] utf8 = spec.name().getBytes(StandardCharsets.UTF_8);
            Memory name = new Memory(utf8.length + 1L);
            name.write(0, utf8, 0, utf8.length);
            name.setByte(utf8.length, (byte) 0);
            names.add(name);
            d.channelName = name;
            d.write();
        }
        long[] out = new long[n];
        int rc = HcommLibrary.HcommChannelCreate(endpoint.handleForChild(), engine.code(), first.getPointer(), n, out);
        Reference.reachabilityFence(names);
        Reference.reachabilityFence(descs);
        HcommException.check(rc, "HcommChannelCreate", endpoint.context() + " engine=" + engine + " channels=" + n
                + " first=" + specs.get(0).name());
        return new ChannelSet(endpoint, engine, out, specs);
    }

    public int size() {
        return handles.length;
    }

    public Engine engine() {
        return engine;
    }

    /** The channel at {@code index} (same order as the specs). */
    public Channel channel(int index) {
        checkOpen();
        return channels[index];
    }

    /** All channels, in spec order. */
    public List<Channel> channels() {
        checkOpen();
        return List.of(channels);
    }

    /**
     * One {@code HcommChannelGetStatus} call over every channel: drives each connection one step and returns the
     * statuses in spec order.
     */
    public List<ChannelStatus> statuses() {
        int[] raw = pollOnce();
        List<ChannelStatus> out = new ArrayList<>(raw.length);
        for (int s : raw) {
            out.add(ChannelStatus.of(s));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * Polls {@code HcommChannelGetStatus} until every channel is READY.
     *
     * @throws ChannelSetupException naming the first channel that reported FAILED, TIMEOUT or a resource status, or
     *     (status CONNECTING) the first one still not READY when {@code timeout} ran out
     * @throws InterruptedException if the thread is interrupted while waiting (the channels stay open)
     */
    public void awaitReady(Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        long sleep = 0;
        while (true) {
            int[] raw = pollOnce();
            int notReady = -1;
            for (int i = 0; i < raw.length; i++) {
                ChannelStatus s = ChannelStatus.of(raw[i]);
                if (s.isFailure()) {
                    throw failure(i, s, start);
                }
                if (s != ChannelStatus.READY && notReady < 0) {
                    notReady = i;
                }
            }
            if (notReady < 0) {
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw failure(notReady, ChannelStatus.CONNECTING, start);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for channels to become READY");
            }
            sleep = Math.min(MAX_POLL_SLEEP_NANOS, sleep == 0 ? 50_000 : sleep * 2);
            TimeUnit.NANOSECONDS.sleep(sleep);
        }
    }

    private ChannelSetupException failure(int index, ChannelStatus status, long start) {
        return new ChannelSetupException(index, channels[index].name(), status,
                Duration.ofNanos(System.nanoTime() - start), endpoint.context() + " channels=" + handles.length);
    }

    private int[] pollOnce() {
        checkOpen();
        int[] status = new int[handles.length];
        int rc = HcommLibrary.HcommChannelGetStatus(handles, handles.length, status);
        HcommException.check(rc, "HcommChannelGetStatus", endpoint.context() + " channels=" + handles.length);
        return status;
    }

    /** Destroys every channel of the set with one {@code HcommChannelDestroy} call ({@link #close()}). */
    @Override
    protected void release() {
        int rc = HcommLibrary.HcommChannelDestroy(handles, handles.length);
        HcommException.check(rc, "HcommChannelDestroy", endpoint.context() + " channels=" + handles.length
                + " first=" + channels[0].name());
    }

    @Override
    protected void released() {
        super.released();
        endpoint.forget(this);
    }

    /**
     * Destroys every channel of {@code sets} in ONE {@code HcommChannelDestroy} call (the per-stage bulk destroy of
     * channels that were created in several batches). Sets already closed are skipped; all must belong to one
     * endpoint.
     */
    public static void closeTogether(List<ChannelSet> sets) {
        List<ChannelSet> live = new ArrayList<>();
        int n = 0;
        for (ChannelSet s : sets) {
            if (s.claimClose()) {
                live.add(s);
                n += s.handles.length;
            }
        }
        if (live.isEmpty()) {
            return;
        }
        long[] all = new long[n];
        int at = 0;
        for (ChannelSet s : live) {
            System.arraycopy(s.handles, 0, all, at, s.handles.length);
            at += s.handles.length;
        }
        try {
            int rc = HcommLibrary.HcommChannelDestroy(all, n);
            HcommException.check(rc, "HcommChannelDestroy", live.get(0).endpoint.context() + " channels=" + n
                    + " sets=" + live.size() + " first=" + live.get(0).channels[0].name());
        } finally {
            for (ChannelSet s : live) {
                s.released();
            }
        }
    }

    /** One channel of the set: what reads are submitted on. Valid while the set is open; thread-safe. */
    public final class Channel {
        private final int index;
        private final String name;

        private Channel(int index, String name) {
            this.index = index;
            this.name = name;
        }

        public int index() {
            return index;
        }

        public String name() {
            return name;
        }

        public ChannelSet owner() {
            return ChannelSet.this;
        }

        /** soft HComm only: the data path of a READY channel, {@code "shm"} or {@code "tcp"}. */
        public String dataPath() {
            long h = handle();
            if (!SoftHcomm.isActive()) {
                throw new UnsupportedOperationException("dataPath() needs the soft HComm provider");
            }
            return SoftHcomm.channelPath(h, context());
        }

        /** The native handle, for reads on this channel; throws when the set is closed. */
        public long handle() {
            if (isClosed()) {
                throw new IllegalStateException("channel " + name + " belongs to a closed ChannelSet");
            }
            return handles[index];
        }

        /** The ids an error names. */
        public String context() {
            return endpoint.context() + " channel=" + name + " index=" + index;
        }

        @Override
        public String toString() {
            return "Channel[" + name + " #" + index + "]";
        }
    }
}
