/*
 * soft HComm: the HComm C ABI implemented in software on any Linux host, plus a small set of functions that
 * exist only in the soft library (prefix HcommSoft). Callers that bind the real libhcomm.so must treat the
 * HcommSoft* functions as optional symbols.
 */
#ifndef HCOMM_SOFT_H
#define HCOMM_SOFT_H

#include "hcomm_types.h"

/*
 * Per-process configuration. Keys and values (strings):
 *   "secret"             shared secret carried (as a keyed hash, never in clear) by every channel handshake;
 *                        peers with a different secret are refused. Default: $HCOMM_SOFT_SECRET or "".
 *   "force_tcp"          "1" makes every new channel use the TCP soft NIC even between processes on one host.
 *                        Default: $HCOMM_SOFT_FORCE_TCP or "0".
 *   "exec_timeout_ms"    how long drain, fence and stream sync wait for reads before HCCL_E_TIMEOUT, and how
 *                        long a TCP read may stall. Default: $HCOMM_SOFT_EXEC_TIMEOUT_MS or 60000.
 *   "connect_timeout_ms" how long a channel may stay CONNECTING before GetStatus reports TIMEOUT, and how long
 *                        a communicator's ranks and HcclChannelAcquire's peers have to join.
 *                        Default: $HCCL_CONNECT_TIMEOUT (seconds) * 1000, or 120000.
 *   "if_ip"              the IPv4 address communicators listen on and tell their peers. Default: $HCCL_IF_IP, else
 *                        the first non-loopback IPv4 address of the host, else 127.0.0.1.
 *   "handshake_timeout_ms" how long an accepted connection may take to deliver its whole hello (a rank its join at
 *                        a communicator's root) before it is closed; never longer than the connect timeout.
 *                        Default: $HCOMM_SOFT_HANDSHAKE_TIMEOUT_MS or 10000.
 *   "zerocopy"           "0" makes the soft NIC copy every answer into the socket (send()); "1" lets it hand the
 *                        kernel the registered pages (MSG_ZEROCOPY) where the kernel does not copy them anyway.
 *                        Read when a channel serves its first answer. Default: $HCOMM_SOFT_ZEROCOPY or "1".
 * Returns HCCL_E_PTR for NULL, HCCL_E_PARA for an unknown key or a value out of range.
 *
 * Environment read by the communicator path only (no key): HCOMM_SOFT_DEVICES (devices per host, 1..64, default 8),
 * HCOMM_SOFT_DEVICE_MEM_MB (device memory per device and process, default 65536), HCOMM_SOFT_ROCE_LAND_DELAY_MS
 * (ms after its post that a read or write over a communicator's ROCE channel lands, 0..600000, default 0; read when
 * the channel is made; hcomm_api.h says what it changes), HCOMM_SOFT_ROCE_READ_FENCE ("0": a notify record after
 * such a read is not held until the read landed, as on CANN; default "1"; read when the channel is made),
 * HCOMM_SOFT_NOTIFY_FLAG ("1": a notify is a flag, as CANN's, so two records before one wait count once; default
 * "0": records count).
 */
HCOMM_API int32_t HcommSoftConfigure(const char *key, const char *value);

/* Live objects of this process, for leak checks. Versioned by size: the caller sets size = sizeof; a caller built
 * against an older, shorter struct (at least up to bytesRead) gets the fields it has. */
typedef struct {
    uint32_t size;
    uint32_t reserved;
    uint64_t endpoints;
    uint64_t regions;     /* registered regions (handles, aliases included) */
    uint64_t allocations; /* HcommMemAlloc blocks not yet freed */
    uint64_t imports;
    uint64_t channels;
    uint64_t threads;
    uint64_t bytesServed;  /* bytes this process's soft NIC sent to TCP readers */
    uint64_t bytesRead;    /* bytes this process read (all paths) */
    uint64_t opsRunByWaiter; /* reads a completion wait ran itself because the thread's worker had not started them */
    uint64_t comms;       /* live communicators (HcclCommInitRootInfo*, not yet HcclCommDestroy'd) */
    uint64_t deviceBytes; /* live soft device memory: the communicators' HCCL buffers */
    uint64_t h2dBytes;    /* bytes copied host to device (aclrtMemcpy, aclrtMemcpyAsync) */
    uint64_t d2hBytes;    /* bytes copied device to host */
    uint64_t notifies;    /* channel notifies this process recorded */
    uint64_t events;      /* live ACL events (aclrtCreateEvent, not yet aclrtDestroyEvent'd) */
    uint64_t hostBytes;   /* live pinned host memory (aclrtMallocHost, not yet aclrtFreeHost'd) */
} HcommSoftCounters;

HCOMM_API int32_t HcommSoftGetCounters(HcommSoftCounters *out);

/* "shm" or "tcp": the data path a READY channel uses; HCCL_E_NOT_FOUND for an unknown channel. */
HCOMM_API int32_t HcommSoftChannelPath(ChannelHandle channel, const char **path);

/* The soft library's version string, e.g. "soft-hcomm 0.1.0 abi-v4". */
HCOMM_API const char *HcommSoftVersion(void);

#endif
