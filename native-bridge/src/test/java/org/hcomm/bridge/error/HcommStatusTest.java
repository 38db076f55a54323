package org.hcomm.bridge.error;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Status-code classification and messages; pure Java, no library. */
class HcommStatusTest {

    @Test
    void everyDocumentedCodeMapsToItsCName() {
        String[] names = {"HCCL_SUCCESS", "HCCL_E_PARA", "HCCL_E_PTR", "HCCL_E_MEMORY", "HCCL_E_INTERNAL",
            "HCCL_E_NOT_SUPPORT", "HCCL_E_NOT_FOUND", "HCCL_E_UNAVAIL", "HCCL_E_SYSCALL", "HCCL_E_TIMEOUT",
            "HCCL_E_OPEN_FILE_FAILURE", "HCCL_E_TCP_CONNECT", "HCCL_E_ROCE_CONNECT", "HCCL_E_TCP_TRANSFER",
            "HCCL_E_ROCE_TRANSFER", "HCCL_E_RUNTIME", "HCCL_E_DRV", "HCCL_E_PROFILING", "HCCL_E_CCE",
            "HCCL_E_NETWORK", "HCCL_E_AGAIN", "HCCL_E_REMOTE", "HCCL_E_SUSPENDING", "HCCL_E_OPRETRY_FAIL",
            "HCCL_E_OOM"};
        for (int code = 0; code < names.length; code++) {
            HcommStatus s = HcommStatus.of(code);
            assertEquals(names[code], s.name());
            assertEquals(code, s.code());
        }
        assertSame(HcommStatus.HCCL_E_IN_STATUS, HcommStatus.of(1041));
    }

    @Test
    void unknownCodesAreUnknownButKeepTheirValue() {
        assertSame(HcommStatus.UNKNOWN, HcommStatus.of(25));
        assertSame(HcommStatus.UNKNOWN, HcommStatus.of(-3));
        HcommException e = new HcommException("HcommReadNbi", 77, "channel=x");
        assertSame(HcommStatus.UNKNOWN, e.status());
        assertEquals(77, e.code());
        assertTrue(e.getMessage().startsWith("HcommReadNbi failed: 77 UNKNOWN"), e.getMessage());
    }

    @Test
    void exceptionNamesCallCodeNameMeaningAndIds() {
        HcommException e = new HcommException("HcommChannelCreate", 6, "endpoint=127.0.0.1 channels=3");
        assertEquals("HcommChannelCreate", e.call());
        assertEquals(6, e.code());
        assertSame(HcommStatus.HCCL_E_NOT_FOUND, e.status());
        assertEquals("endpoint=127.0.0.1 channels=3", e.context());
        assertEquals("HcommChannelCreate failed: 6 HCCL_E_NOT_FOUND (" + HcommStatus.HCCL_E_NOT_FOUND.meaning()
                + ") [endpoint=127.0.0.1 channels=3]", e.getMessage());
    }

    @Test
    void checkThrowsOnlyOnNonZero() {
        HcommException.check(0, "HcommChannelFence", "");
        HcommException e = org.junit.jupiter.api.Assertions.assertThrows(HcommException.class,
                () -> HcommException.check(9, "HcommChannelFence", "channel=a"));
        assertSame(HcommStatus.HCCL_E_TIMEOUT, e.status());
    }
}
