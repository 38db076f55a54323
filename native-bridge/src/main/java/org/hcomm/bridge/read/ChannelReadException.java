package org.hcomm.bridge.read;

import org.hcomm.bridge.endpoint.ChannelSet;
import org.hcomm.bridge.error.HcommException;

/**
 * A read on one channel failed: HComm refused to post it, or waiting for it on its channel reported a failure.
 * {@link #channel()} says which channel, so a reader that reads from several peers in one batch knows whose memory
 * could not be read. A batch whose completion failed on several channels throws the first, the others suppressed.
 */
public final class ChannelReadException extends HcommException {
    private static final long serialVersionUID = 1L;

    private final transient ChannelSet.Channel channel;

    ChannelReadException(String call, int code, ChannelSet.Channel channel, String context) {
        super(call, code, context);
        this.channel = channel;
    }

    /** The channel whose read failed (null after deserialisation: a channel is only meaningful in its process). */
    public ChannelSet.Channel channel() {
        return channel;
    }
}
