/*
 * HComm C ABI types, written from the layout facts in docs/HCOMM_ABI.md (sizes and offsets measured against
 * the public CANN headers on x86-64 LP64). The public headers only compile as C++, so soft HComm carries its
 * own C definitions; the _Static_asserts at the end pin every size and offset the Java binding relies on.
 */
#ifndef HCOMM_TYPES_H
#define HCOMM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#define HCOMM_API __attribute__((visibility("default")))

typedef int32_t HcommResult;
typedef int32_t HcclResult;
typedef void *EndpointHandle;
typedef void *HcommMemHandle;
typedef void *HcommSocket;
typedef uint64_t ChannelHandle;
typedef uint64_t ThreadHandle;
typedef void *aclrtStream;

/* Status codes (HcclResult numbering). */
enum {
    HCCL_SUCCESS = 0,
    HCCL_E_PARA = 1,
    HCCL_E_PTR = 2,
    HCCL_E_MEMORY = 3,
    HCCL_E_INTERNAL = 4,
    HCCL_E_NOT_SUPPORT = 5,
    HCCL_E_NOT_FOUND = 6,
    HCCL_E_UNAVAIL = 7,
    HCCL_E_SYSCALL = 8,
    HCCL_E_TIMEOUT = 9,
    HCCL_E_OPEN_FILE_FAILURE = 10,
    HCCL_E_TCP_CONNECT = 11,
    HCCL_E_ROCE_CONNECT = 12,
    HCCL_E_TCP_TRANSFER = 13,
    HCCL_E_ROCE_TRANSFER = 14,
    HCCL_E_RUNTIME = 15,
    HCCL_E_DRV = 16,
    HCCL_E_PROFILING = 17,
    HCCL_E_CCE = 18,
    HCCL_E_NETWORK = 19,
    HCCL_E_AGAIN = 20,
    HCCL_E_REMOTE = 21,
    HCCL_E_SUSPENDING = 22,
    HCCL_E_OPRETRY_FAIL = 23,
    HCCL_E_OOM = 24,
    HCCL_E_IN_STATUS = 1041
};

typedef enum {
    COMM_ENGINE_RESERVED = -1,
    COMM_ENGINE_CPU = 0,
    COMM_ENGINE_CPU_TS = 1,
    COMM_ENGINE_AICPU = 2,
    COMM_ENGINE_AICPU_TS = 3,
    COMM_ENGINE_AIV = 4,
    COMM_ENGINE_CCU = 5
} CommEngine;

typedef enum {
    COMM_PROTOCOL_RESERVED = -1,
    COMM_PROTOCOL_HCCS = 0,
    COMM_PROTOCOL_ROCE = 1,
    COMM_PROTOCOL_PCIE = 2,
    COMM_PROTOCOL_SIO = 3,
    COMM_PROTOCOL_UB_CTP = 4,
    COMM_PROTOCOL_UBC_TP = 5,
    COMM_PROTOCOL_UB_MEM = 6,
    COMM_PROTOCOL_UBOE = 7,
    COMM_PROTOCOL_HCCS_ONLY = 8,
    COMM_PROTOCOL_UB_RTP = 9
} CommProtocol;

typedef enum { COMM_ADDR_TYPE_RESERVED = -1, COMM_ADDR_TYPE_IP_V4 = 0, COMM_ADDR_TYPE_IP_V6 = 1,
               COMM_ADDR_TYPE_ID = 2, COMM_ADDR_TYPE_EID = 3 } CommAddrType;
typedef enum { ENDPOINT_LOC_TYPE_RESERVED = -1, ENDPOINT_LOC_TYPE_DEVICE = 0, ENDPOINT_LOC_TYPE_HOST = 1 } EndpointLocType;
typedef enum { COMM_MEM_TYPE_INVALID = -1, COMM_MEM_TYPE_DEVICE = 0, COMM_MEM_TYPE_HOST = 1 } CommMemType;
typedef enum { HCOMM_SOCKET_ROLE_RESERVED = -1, HCOMM_SOCKET_ROLE_CLIENT = 0, HCOMM_SOCKET_ROLE_SERVER = 1 } HcommSocketRole;
typedef enum { THREAD_RES_TYPE_INVALID = -1, THREAD_RES_TYPE_STREAM = 0 } ThreadResType;

/* Channel status values reported by HcommChannelGetStatus. */
enum {
    HCOMM_CHANNEL_STATUS_READY = 0,
    HCOMM_CHANNEL_STATUS_CONNECTING = 1,
    HCOMM_CHANNEL_STATUS_FAILED = 2,
    HCOMM_CHANNEL_STATUS_TIMEOUT = 3,
    HCOMM_CHANNEL_STATUS_RES_LOC_UNAVAIL = 4,
    HCOMM_CHANNEL_STATUS_RES_RMT_UNAVAIL = 5
};

#define HCOMM_CHANNEL_MAGIC_WORD 0x0FCF0F0Fu
#define HCOMM_CHANNEL_VERSION 4u
#define HCOMM_CHANNEL_NAME_MAX_LEN 191u
#define HCOMM_CHANNEL_NUM_MAX 1048576u
#define HCOMM_DEFAULT_CHANNEL_PORT 60001u
#define THREAD_CONFIG_MAGIC_WORD 0x0F0F0F2Fu

typedef struct {
    uint32_t version;
    uint32_t magicWord;
    uint32_t size;
    uint32_t reserved;
} CommAbiHeader;

typedef struct {
    int32_t type; /* CommAddrType */
    union {
        uint8_t raws[36];
        struct in_addr addr;
        struct in6_addr addr6;
        uint32_t id;
        uint8_t eid[16];
    };
} CommAddr;

typedef struct {
    int32_t locType; /* EndpointLocType */
    union {
        uint8_t raws[60];
        struct {
            uint32_t devPhyId;
            uint32_t superDevId;
            uint32_t serverIdx;
            uint32_t superPodIdx;
        } device;
        struct {
            uint32_t id;
        } host;
    };
} EndpointLoc;

typedef struct {
    int32_t protocol; /* CommProtocol */
    CommAddr commAddr;
    EndpointLoc loc;
    union {
        uint8_t raws[52];
    };
} EndpointDesc;

typedef struct {
    int32_t type; /* CommMemType */
    void *addr;
    uint64_t size;
} CommMem;

typedef struct {
    CommAbiHeader header;
    uint16_t notifyNumPerThread;
    uint8_t reserved[14];
} ThreadConfig;

typedef struct {
    uint32_t queueNum;
    uint32_t retryCnt;
    uint32_t retryInterval;
    uint8_t tc;
    uint8_t sl;
    uint32_t qpThreshold;
    uint32_t cqAttrFlags;
    uint16_t *srcPortList;
} HcommRoceAttr;

typedef struct {
    CommAbiHeader header;
    EndpointDesc remoteEndpoint;
    uint32_t notifyNum;
    bool exchangeAllMems;
    HcommMemHandle *memHandles;
    uint32_t memHandleNum;
    HcommSocket socket;
    int32_t role; /* HcommSocketRole */
    uint16_t port;
    union {
        uint8_t raws[128];
        HcommRoceAttr roceAttr;
        struct { uint32_t qos; } hccsAttr;
        struct { uint32_t sqDepth; } ubAttr;
        struct { uint8_t pathMode; } ubMemAttr;
    };
    uint32_t qos;
    const char *channelName;
} HcommChannelDesc;

typedef struct {
    uint32_t transType;
    uint32_t reserved;
    union {
        uint8_t raws[56];
        struct { uint64_t len; void *dst; const void *src; } rw;
    } transferInfo;
} HcommBatchTransferDesc;

#define HCOMM_CHANNEL_DESC_ABI_V1_SIZE offsetof(HcommChannelDesc, qos)

/* ---- the HCCL communicator path (Atlas A2/A3; docs/COMMUNICATOR.md) ---- */
typedef void *HcclComm;
typedef void *HcclMemHandle;
#define HCCL_ROOT_INFO_BYTES 4108
typedef struct {
    char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

#define HCCL_COMM_CONFIG_MAGIC_WORD 0xF0F0F0F0u
#define HCCL_COMM_CONFIG_VERSION 11u
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET 0xFFFFFFFFu
typedef struct {
    size_t size;
    uint32_t magicWord;
    uint32_t version;
    uint64_t reserved;
    uint32_t hcclBufferSize; /* MB; the communicator's HCCL buffer is twice this */
    uint32_t hcclDeterministic;
    char hcclCommName[128];
    char hcclUdi[128];
    uint32_t hcclOpExpansionMode;
    uint32_t hcclRdmaTrafficClass;
    uint32_t hcclRdmaServiceLevel;
    uint32_t hcclWorldRankID;
    uint64_t hcclJobID;
    uint8_t aclGraphZeroCopyEnable;
    int32_t hcclExecTimeOut;
    char hcclAlgo[1600];
    char hcclRetryEnable[50];
    char hcclRetryParams[128];
    char hcclBufferName[128];
    uint32_t hcclQos;
    uint64_t hcclSymWinMaxMemSizePerRank;
    uint32_t hcclChannelSqDepth;
} HcclCommConfig;

#define HCCL_CHANNEL_MAGIC_WORD 0x0F0F0F0Fu
#define HCCL_CHANNEL_VERSION 1u
#define HCCL_CHANNEL_NOTIFY_MAX 64u
typedef struct {
    CommAbiHeader header;
    uint32_t remoteRank;
    int32_t channelProtocol; /* CommProtocol */
    EndpointDesc localEndpoint;
    EndpointDesc remoteEndpoint;
    uint32_t notifyNum;
    HcclMemHandle *memHandles;
    uint32_t memHandleNum;
    union {
        uint8_t raws[128];
        struct { uint32_t queueNum; uint32_t retryCnt; uint32_t retryInterval; uint8_t tc; uint8_t sl; } roceAttr;
        struct { uint8_t pathMode; } ubMemAttr;
    };
} HcclChannelDesc;

/* ACL (libascendcl on a real host). */
typedef int aclError;
typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;
enum {
    ACL_SUCCESS = 0,
    ACL_ERROR_INVALID_PARAM = 100000,
    ACL_ERROR_UNINITIALIZE = 100001,
    ACL_ERROR_REPEAT_INITIALIZE = 100002,
    ACL_ERROR_RT_PARAM_INVALID = 107000,
    ACL_ERROR_RT_INVALID_DEVICEID = 107001,
    ACL_ERROR_RT_CONTEXT_NULL = 107002,
    ACL_ERROR_RT_STREAM_ABORT = 107023,
    ACL_ERROR_RT_MEMORY_ALLOCATION = 207001,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046,
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047
};
/* An event (acl_base_rt.h: typedef void *aclrtEvent) and what aclrtQueryEventStatus reports (acl_rt.h). */
typedef void *aclrtEvent;
typedef enum {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/* The layout facts the Java binding relies on (docs/HCOMM_ABI.md §2). */
_Static_assert(sizeof(CommAbiHeader) == 16, "CommAbiHeader");
_Static_assert(sizeof(CommAddr) == 40, "CommAddr");
_Static_assert(sizeof(EndpointLoc) == 64, "EndpointLoc");
_Static_assert(sizeof(EndpointDesc) == 160, "EndpointDesc");
_Static_assert(offsetof(EndpointDesc, loc) == 44, "EndpointDesc.loc");
_Static_assert(offsetof(EndpointDesc, raws) == 108, "EndpointDesc.raws");
_Static_assert(sizeof(CommMem) == 24, "CommMem");
_Static_assert(offsetof(CommMem, addr) == 8, "CommMem.addr");
_Static_assert(sizeof(ThreadConfig) == 32, "ThreadConfig");
_Static_assert(sizeof(HcommChannelDesc) == 360, "HcommChannelDesc");
_Static_assert(offsetof(HcommChannelDesc, notifyNum) == 176, "notifyNum");
_Static_assert(offsetof(HcommChannelDesc, exchangeAllMems) == 180, "exchangeAllMems");
_Static_assert(offsetof(HcommChannelDesc, memHandles) == 184, "memHandles");
_Static_assert(offsetof(HcommChannelDesc, memHandleNum) == 192, "memHandleNum");
_Static_assert(offsetof(HcommChannelDesc, socket) == 200, "socket");
_Static_assert(offsetof(HcommChannelDesc, role) == 208, "role");
_Static_assert(offsetof(HcommChannelDesc, port) == 212, "port");
_Static_assert(offsetof(HcommChannelDesc, raws) == 216, "raws");
_Static_assert(offsetof(HcommChannelDesc, roceAttr.srcPortList) == 240, "srcPortList");
_Static_assert(offsetof(HcommChannelDesc, qos) == 344, "qos");
_Static_assert(offsetof(HcommChannelDesc, channelName) == 352, "channelName");
_Static_assert(sizeof(HcommBatchTransferDesc) == 64, "HcommBatchTransferDesc");

_Static_assert(sizeof(HcclRootInfo) == 4108, "HcclRootInfo");
_Static_assert(sizeof(HcclCommConfig) == 2248, "HcclCommConfig");
_Static_assert(offsetof(HcclCommConfig, hcclBufferSize) == 24, "hcclBufferSize");
_Static_assert(offsetof(HcclCommConfig, hcclWorldRankID) == 300, "hcclWorldRankID");
_Static_assert(offsetof(HcclCommConfig, hcclExecTimeOut) == 316, "hcclExecTimeOut");
_Static_assert(offsetof(HcclCommConfig, hcclBufferName) == 2098, "hcclBufferName");
_Static_assert(offsetof(HcclCommConfig, hcclChannelSqDepth) == 2240, "hcclChannelSqDepth");
_Static_assert(sizeof(HcclChannelDesc) == 496, "HcclChannelDesc");
_Static_assert(offsetof(HcclChannelDesc, remoteRank) == 16, "remoteRank");
_Static_assert(offsetof(HcclChannelDesc, channelProtocol) == 20, "channelProtocol");
_Static_assert(offsetof(HcclChannelDesc, remoteEndpoint) == 184, "remoteEndpoint");
_Static_assert(offsetof(HcclChannelDesc, notifyNum) == 344, "HcclChannelDesc.notifyNum");
_Static_assert(offsetof(HcclChannelDesc, memHandles) == 352, "HcclChannelDesc.memHandles");
_Static_assert(offsetof(HcclChannelDesc, memHandleNum) == 360, "HcclChannelDesc.memHandleNum");
_Static_assert(offsetof(HcclChannelDesc, raws) == 364, "HcclChannelDesc.raws");
#endif
