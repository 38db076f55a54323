package org.hcomm.bridge.endpoint;

import java.time.Duration;
import org.hcomm.bridge.error.HcommException;
import org.hcomm.bridge.error.HcommStatus;

/**
 * A channel did not become READY: it reported a failure status ({@link ChannelStatus#FAILED}, {@code TIMEOUT},
 * {@code RES_*}) or was still {@code CONNECTING} when the caller's wait ran out. Names the channel's index in its
 * {@link ChannelSet}, its name and the status. {@link #status()} is {@link HcommStatus#HCCL_E_TIMEOUT} for TIMEOUT
 * and an expired wait, {@link HcommStatus#HCCL_E_UNAVAIL} for the resource statuses, and
 * {@link HcommStatus#HCCL_E_ROCE_CONNECT} (connect failed) otherwise.
 */
public final class ChannelSetupException extends HcommException {
    private static final long serialVersionUID = 1L;

    private final int channelIndex;
    private final String channelName;
    private final ChannelStatus channelStatus;

    ChannelSetupException(int channelIndex, String channelName, ChannelStatus channelStatus, Duration waited,
            String context) {
        super("HcommChannelGetStatus", classify(channelStatus), context,
                "channel " + channelIndex + " (" + channelName + ") did not become READY: status "
                        + channelStatus.code() + " " + channelStatus + " after " + waited.toMillis() + " ms ["
                        + context + "]");
        this.channelIndex = channelIndex;
        this.channelName = channelName;
        this.channelStatus = channelStatus;
    }

    private static HcommStatus classify(ChannelStatus s) {
        switch (s) {
            case TIMEOUT:
            case CONNECTING:
                return HcommStatus.HCCL_E_TIMEOUT;
            case RES_LOC_UNAVAIL:
            case RES_RMT_UNAVAIL:
                return HcommStatus.HCCL_E_UNAVAIL;
            default:
                return HcommStatus.HCCL_E_ROCE_CONNECT;
        }
    }

    /** Index of the failing channel in its {@link ChannelSet}. */
    public int channelIndex() {
        return channelIndex;
    }

    public String channelName() {
        return channelName;
    }

    /** The status the channel last reported ({@code CONNECTING} when the wait expired). */
    public ChannelStatus channelStatus() {
        return channelStatus;
    }
}
