package org.hcomm.bridge;

import org.hcomm.bridge.raw.HcommAbi;
import org.hcomm.bridge.raw.HcommNbiLibrary;

/** {@link ReadStrategy.Kind#NBI_FENCE}: HcommReadNbi, completed by HcommChannelFence per channel touched. */
final class NbiFenceReads extends ChannelReads {

    @Override
    public Kind kind() {
        return Kind.NBI_FENCE;
    }

    /** No batch: each read is posted by its submit. */
    @Override
    void open() {}

    @Override
    int post(long ch, long dstAddress, long srcAddress, long length) {
        int rc = HcommNbiLibrary.HcommReadNbi(ch, dstAddress, srcAddress, length);
        if (rc == HcommAbi.HCCL_E_AGAIN) { // send queue full: wait for this channel's reads, then post again
            int frc = HcommNbiLibrary.HcommChannelFence(ch);
            rc = frc != 0 ? frc : HcommNbiLibrary.HcommReadNbi(ch, dstAddress, srcAddress, length);
        }
        return rc;
    }

    @Override
    String postCall() {
        return "HcommReadNbi";
    }

    @Override
    String context() {
        return "";
    }

    /** Reads are posted by {@link #submit}: nothing to hand over. */
    @Override
    public void flush() {}

    @Override
    public void complete() {
        awaitEach("HcommChannelFence", HcommNbiLibrary::HcommChannelFence, false); // a fence is per channel
    }
}
