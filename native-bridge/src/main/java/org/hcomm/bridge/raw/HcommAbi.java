package org.hcomm.bridge.raw;

/** Constants of the HComm C ABI under their C names (docs/HCOMM_ABI.md §2.2–§2.4, hcomm_types.h). */
public final class HcommAbi {
    private HcommAbi() {}

    // HcclResult / HcommResult
    public static final int HCCL_SUCCESS = 0;
    public static final int HCCL_E_PARA = 1;
    public static final int HCCL_E_PTR = 2;
    public static final int HCCL_E_MEMORY = 3;
    public static final int HCCL_E_INTERNAL = 4;
    public static final int HCCL_E_NOT_SUPPORT = 5;
    public static final int HCCL_E_NOT_FOUND = 6;
    public static final int HCCL_E_UNAVAIL = 7;
    public static final int HCCL_E_SYSCALL = 8;
    public static final int HCCL_E_TIMEOUT = 9;
    public static final int HCCL_E_OPEN_FILE_FAILURE = 10;
    public static final int HCCL_E_TCP_CONNECT = 11;
    public static final int HCCL_E_ROCE_CONNECT = 12;
    public static final int HCCL_E_TCP_TRANSFER = 13;
    public static final int HCCL_E_ROCE_TRANSFER = 14;
    public static final int HCCL_E_RUNTIME = 15;
    public static final int HCCL_E_DRV = 16;
    public static final int HCCL_E_PROFILING = 17;
    public static final int HCCL_E_CCE = 18;
    public static final int HCCL_E_NETWORK = 19;
    public static final int HCCL_E_AGAIN = 20;
    public static final int HCCL_E_REMOTE = 21;
    public static final int HCCL_E_SUSPENDING = 22;
    public static final int HCCL_E_OPRETRY_FAIL = 23;
    public static final int HCCL_E_OOM = 24;
    public static final int HCCL_E_IN_STATUS = 1041;

    // CommEngine
    public static final int COMM_ENGINE_RESERVED = -1;
    public static final int COMM_ENGINE_CPU = 0;
    public static final int COMM_ENGINE_CPU_TS = 1;
    public static final int COMM_ENGINE_AICPU = 2;
    public static final int COMM_ENGINE_AICPU_TS = 3;
    public static final int COMM_ENGINE_AIV = 4;
    public static final int COMM_ENGINE_CCU = 5;

    // CommProtocol
    public static final int COMM_PROTOCOL_RESERVED = -1;
    public static final int COMM_PROTOCOL_HCCS = 0;
    public static final int COMM_PROTOCOL_ROCE = 1;
    public static final int COMM_PROTOCOL_PCIE = 2;
    public static final int COMM_PROTOCOL_SIO = 3;
    public static final int COMM_PROTOCOL_UB_CTP = 4;
    public static final int COMM_PROTOCOL_UBC_TP = 5;
    public static final int COMM_PROTOCOL_UB_MEM = 6;
    public static final int COMM_PROTOCOL_UBOE = 7;
    public static final int COMM_PROTOCOL_HCCS_ONLY = 8;
    public static final int COMM_PROTOCOL_UB_RTP = 9;

    // CommAddrType
    public static final int COMM_ADDR_TYPE_RESERVED = -1;
    public static final int COMM_ADDR_TYPE_IP_V4 = 0;
    public static final int COMM_ADDR_TYPE_IP_V6 = 1;
    public static final int COMM_ADDR_TYPE_ID = 2;
    public static final int COMM_ADDR_TYPE_EID = 3;

    // EndpointLocType
    public static final int ENDPOINT_LOC_TYPE_RESERVED = -1;
    public static final int ENDPOINT_LOC_TYPE_DEVICE = 0;
    public static final int ENDPOINT_LOC_TYPE_HOST = 1;

    // CommMemType
    public static final int COMM_MEM_TYPE_INVALID = -1;
    public static final int COMM_MEM_TYPE_DEVICE = 0;
    public static final int COMM_MEM_TYPE_HOST = 1;

    // HcommSocketRole
    public static final int HCOMM_SOCKET_ROLE_RESERVED = -1;
    public static final int HCOMM_SOCKET_ROLE_CLIENT = 0;
    public static final int HCOMM_SOCKET_ROLE_SERVER = 1;

    // ThreadResType
    public static final int THREAD_RES_TYPE_INVALID = -1;
    public static final int THREAD_RES_TYPE_STREAM = 0;

    // Channel status values reported by HcommChannelGetStatus (documented, not in a public header)
    public static final int HCOMM_CHANNEL_STATUS_READY = 0;
    public static final int HCOMM_CHANNEL_STATUS_CONNECTING = 1;
    public static final int HCOMM_CHANNEL_STATUS_FAILED = 2;
    public static final int HCOMM_CHANNEL_STATUS_TIMEOUT = 3;
    public static final int HCOMM_CHANNEL_STATUS_RES_LOC_UNAVAIL = 4;
    public static final int HCOMM_CHANNEL_STATUS_RES_RMT_UNAVAIL = 5;

    // ABI headers: magic words and current versions
    public static final int HCOMM_CHANNEL_MAGIC_WORD = 0x0FCF0F0F;
    public static final int HCOMM_CHANNEL_VERSION = 4;
    public static final int HCOMM_CHANNEL_VERSION_ONE = 1;
    public static final int HCCL_CHANNEL_MAGIC_WORD = 0x0F0F0F0F;
    public static final int HCCL_CHANNEL_VERSION = 1;
    public static final int THREAD_CONFIG_MAGIC_WORD = 0x0F0F0F2F;
    public static final int THREAD_CONFIG_VERSION = 1;

    // Limits
    public static final int HCOMM_CHANNEL_NAME_MAX_LEN = 191;
    public static final int HCOMM_CHANNEL_NUM_MAX = 1048576;
    public static final int HCOMM_DEFAULT_CHANNEL_PORT = 60001;
    /** {@code sizeof(aclrtStream)}: the only infoLen HcommThreadResGetInfo accepts. */
    public static final int ACLRT_STREAM_SIZE = 8;
}
