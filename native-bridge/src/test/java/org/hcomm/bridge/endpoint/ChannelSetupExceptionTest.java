package org.hcomm.bridge.endpoint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.hcomm.bridge.error.HcommStatus;
import org.junit.jupiter.api.Test;

/** Channel statuses and how a channel that did not become READY is classified; pure Java, no library. */
class ChannelSetupExceptionTest {

    @Test
    void channelStatusesAndSetupFailures() {
        assertSame(ChannelStatus.READY, ChannelStatus.of(0));
        assertSame(ChannelStatus.RES_RMT_UNAVAIL, ChannelStatus.of(5));
        assertSame(ChannelStatus.UNKNOWN, ChannelStatus.of(6));
        assertTrue(ChannelStatus.FAILED.isFailure());
        assertTrue(!ChannelStatus.CONNECTING.isFailure());
        ChannelSetupException e = new ChannelSetupException(3, "shuffle-1", ChannelStatus.FAILED,
                Duration.ofMillis(20), "endpoint=127.0.0.1");
        assertEquals(3, e.channelIndex());
        assertSame(ChannelStatus.FAILED, e.channelStatus());
        assertSame(HcommStatus.HCCL_E_ROCE_CONNECT, e.status());
        assertTrue(e.getMessage().contains("channel 3 (shuffle-1)"), e.getMessage());
        assertTrue(e.getMessage().contains("status 2 FAILED"), e.getMessage());
        assertSame(HcommStatus.HCCL_E_TIMEOUT, new ChannelSetupException(0, "a", ChannelStatus.TIMEOUT,
                Duration.ZERO, "").status());
    }
}
