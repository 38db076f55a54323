package org.hcomm.bridge;

import org.hcomm.bridge.raw.HcommAbi;
import org.hcomm.bridge.raw.HcommLibrary;

/** {@link ReadStrategy.Kind#NBI_FENCE}: HcommReadNbi, completed by HcommChannelFence per channel touched. */
final class NbiFenceReads implements ReadStrategy {
    private final TouchedChannels touched = new TouchedChannels();

    @Override
    public Kind kind() {
        return Kind.NBI_FENCE;
    }

    @Override
    public void submit(ChannelSet.Channel channel, long dstAddress, long srcAddress, long length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        long ch = channel.handle();
        touched.add(channel);
        int rc = HcommLibrary.HcommReadNbi(ch, dstAddress, srcAddress, length);
        if (rc == HcommAbi.HCCL_E_AGAIN) { // send queue full: wait for this channel's reads, then post again
            int frc = HcommLibrary.HcommChannelFence(ch);
            rc = frc != 0 ? frc : HcommLibrary.HcommReadNbi(ch, dstAddress, srcAddress, length);
        }
        if (rc != 0) {
            HcommException e = new HcommException("HcommReadNbi", rc, channel.context() + " dst=0x"
                    + Long.toHexString(dstAddress) + " src=0x" + Long.toHexString(srcAddress) + " len=" + length);
            try {
                complete();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** Reads are posted by {@link #submit}: nothing to hand over. */
    @Override
    public void flush() {}

    @Override
    public void complete() {
        RuntimeException failure = null;
        try {
            for (ChannelSet.Channel c : touched.list()) {
                try {
                    int rc = HcommLibrary.HcommChannelFence(c.handle());
                    HcommException.check(rc, "HcommChannelFence", c.context());
                } catch (RuntimeException e) {
                    failure = OnThreadReads.first(failure, e);
                }
            }
        } finally {
            touched.clear();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
