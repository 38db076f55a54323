/*
 * The ACL calls a host program of the communicator path needs (libascendcl on a real host): process init, the
 * calling OS thread's device, streams, and the copies between host memory and soft device memory (HCCL buffers,
 * which the host cannot touch at their device address). Errors are ACL's codes, except aclrtSynchronizeStream
 * (soft_stream.c), which answers with HComm's. The device is per calling OS thread, as on a card.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "soft_internal.h"

#define SOFT_DEFAULT_DEVICES 8

static pthread_mutex_t g_acl_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_acl_initialised;
static __thread int32_t tl_device = -1;

/* Devices per host: $HCOMM_SOFT_DEVICES (1..64), default 8 as on an Atlas 800T A2. */
static int32_t device_count(void)
{
    const char *v = getenv("HCOMM_SOFT_DEVICES");
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    if (v == NULL || end == v || *end != '\0' || n < 1 || n > 64) return SOFT_DEFAULT_DEVICES;
    return (int32_t)n;
}

int32_t acl_current_device(void) { return tl_device; }

HCOMM_API aclError aclInit(const char *configPath)
{
    pthread_mutex_lock(&g_acl_lock);
    int again = g_acl_initialised;
    g_acl_initialised = 1;
    pthread_mutex_unlock(&g_acl_lock);
    soft_init();
    return again ? ACL_ERROR_REPEAT_INITIALIZE : ACL_SUCCESS;
}

HCOMM_API aclError aclFinalize(void)
{
    pthread_mutex_lock(&g_acl_lock);
    int was = g_acl_initialised;
    g_acl_initialised = 0;
    pthread_mutex_unlock(&g_acl_lock);
    return was ? ACL_SUCCESS : ACL_ERROR_UNINITIALIZE;
}

/* The devices this host has ($HCOMM_SOFT_DEVICES); aclrtSetDevice takes 0 .. count - 1. */
HCOMM_API aclError aclrtGetDeviceCount(uint32_t *count)
{
    if (count == NULL) return ACL_ERROR_INVALID_PARAM;
    *count = (uint32_t)device_count();
    return ACL_SUCCESS;
}

HCOMM_API aclError aclrtSetDevice(int32_t deviceId)
{
    if (deviceId < 0 || deviceId >= device_count()) return ACL_ERROR_RT_INVALID_DEVICEID;
    tl_device = deviceId;
    return ACL_SUCCESS;
}

HCOMM_API aclError aclrtResetDevice(int32_t deviceId)
{
    if (deviceId < 0 || deviceId >= device_count()) return ACL_ERROR_RT_INVALID_DEVICEID;
    if (tl_device == deviceId) tl_device = -1;
    return ACL_SUCCESS;
}

HCOMM_API aclError aclrtGetDevice(int32_t *deviceId)
{
    if (deviceId == NULL) return ACL_ERROR_INVALID_PARAM;
    if (tl_device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
    *deviceId = tl_device;
    return ACL_SUCCESS;
}

/* A stream is a soft stream (a thread of tasks) known by a handle with the stream bit, as HcommThreadResGetInfo
 * reports threads' streams. */
HCOMM_API aclError aclrtCreateStream(aclrtStream *stream)
{
    if (stream == NULL) return ACL_ERROR_INVALID_PARAM;
    if (tl_device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
    ThreadHandle t = 0;
    uint32_t none = 0;
    if (HcommThreadAlloc(COMM_ENGINE_CPU_TS, 1, &none, &t) != HCCL_SUCCESS) return ACL_ERROR_RT_MEMORY_ALLOCATION;
    void *info = NULL;
    HcommThreadResGetInfo(t, THREAD_RES_TYPE_STREAM, sizeof(aclrtStream), &info);
    *stream = info;
    return ACL_SUCCESS;
}

HCOMM_API aclError aclrtDestroyStream(aclrtStream stream)
{
    soft_thread *t = stream_thread(stream);
    if (t == NULL) return ACL_ERROR_INVALID_PARAM;
    ThreadHandle id = t->id;
    thread_put(t);
    return HcommThreadFree(&id, 1) == HCCL_SUCCESS ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

/* The direction of a copy from its kind and what the two addresses are (DEFAULT: found from the addresses). */
static int copy_direction(void *dst, const void *src, size_t count, aclrtMemcpyKind kind)
{
    int dst_dev = device_host_of((uint64_t)(uintptr_t)dst, count) != NULL;
    int src_dev = device_host_of((uint64_t)(uintptr_t)src, count) != NULL;
    int dir = (src_dev ? 2 : 0) | (dst_dev ? 1 : 0); /* 0 H2H, 1 H2D, 2 D2H, 3 D2D */
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return dir == 0 ? 0 : -1;
    case ACL_MEMCPY_HOST_TO_DEVICE: return dir == 1 ? 1 : -1;
    case ACL_MEMCPY_DEVICE_TO_HOST: return dir == 2 ? 2 : -1;
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return dir == 3 ? 3 : -1;
    case ACL_MEMCPY_DEFAULT: return dir;
    default: return -1;
    }
}

/* Checks a copy and makes its task on t (NULL: a task run by the caller). */
static aclError make_copy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          soft_thread *t, op *out)
{
    if (dst == NULL || src == NULL) return ACL_ERROR_INVALID_PARAM;
    if (tl_device < 0) return ACL_ERROR_RT_CONTEXT_NULL;
    if (count > destMax) return ACL_ERROR_INVALID_PARAM;
    int dir = copy_direction(dst, src, count, kind);
    if (dir < 0) return ACL_ERROR_INVALID_PARAM; /* the kind does not say where the memory is */
    out->kind = OP_COPY;
    out->th = t;
    out->dst = dst;
    out->src = (uint64_t)(uintptr_t)src;
    out->len = count;
    out->copy_dir = dir;
    return ACL_SUCCESS;
}

HCOMM_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    op o;
    memset(&o, 0, sizeof o);
    aclError rc = make_copy(dst, destMax, src, count, kind, NULL, &o);
    if (rc != ACL_SUCCESS || count == 0) return rc;
    /* the same copy a stream task makes, run now */
    uint8_t *d = o.copy_dir & 1 ? device_host_of((uint64_t)(uintptr_t)dst, count) : dst;
    const uint8_t *s = o.copy_dir & 2 ? device_host_of((uint64_t)(uintptr_t)src, count) : src;
    if (d == NULL || s == NULL) return ACL_ERROR_INVALID_PARAM;
    memmove(d, s, count);
    if (o.copy_dir == 1) g_count.h2d_bytes += count;
    if (o.copy_dir == 2) g_count.d2h_bytes += count;
    return ACL_SUCCESS;
}

HCOMM_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                                    aclrtStream stream)
{
    soft_thread *t = stream_thread(stream);
    if (t == NULL) return ACL_ERROR_INVALID_PARAM;
    if (__atomic_load_n(&t->aborted, __ATOMIC_ACQUIRE)) {
        thread_put(t);
        return ACL_ERROR_RT_STREAM_ABORT;
    }
    op probe;
    memset(&probe, 0, sizeof probe);
    aclError rc = make_copy(dst, destMax, src, count, kind, t, &probe);
    op *o = rc == ACL_SUCCESS && count > 0 ? op_new(OP_COPY, t, NULL) : NULL;
    if (rc == ACL_SUCCESS && count > 0 && o == NULL) rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
    if (o != NULL) {
        o->dst = probe.dst;
        o->src = probe.src;
        o->len = probe.len;
        o->copy_dir = probe.copy_dir;
        thread_submit(t, o); /* an ACL task: on the stream now, batch mode or not */
    }
    thread_put(t);
    return rc;
}

/* timeout in ms: -1 or 0 waits as long as aclrtSynchronizeStream (exec_timeout_ms, then HCCL_E_TIMEOUT); below -1
 * ACL_ERROR_RT_PARAM_INVALID; a stream not done within timeout > 0: ACL_ERROR_RT_STREAM_SYNC_TIMEOUT (CANN's,
 * hicann/runtime src/acl/aclrt_impl/stream.cpp:141-153); a task's failure: its HComm code, as aclrtSynchronizeStream. */
HCOMM_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    if (timeout < -1) return ACL_ERROR_RT_PARAM_INVALID;
    if (timeout < 1) return aclrtSynchronizeStream(stream);
    soft_thread *t = stream_thread(stream);
    if (t == NULL) return HCCL_E_NOT_FOUND;
    int expired = 0;
    int32_t rc = thread_wait_timed(t, NULL, timeout, &expired);
    thread_put(t);
    return expired && rc == HCCL_E_TIMEOUT ? ACL_ERROR_RT_STREAM_SYNC_TIMEOUT : rc;
}

/* ---- pinned host memory: plain page-aligned host memory here, which aclrtMemcpy[Async] reads and writes ---- */

typedef struct host_block {
    struct host_block *next;
    void *ptr;
    size_t size;
} host_block;

static host_block *g_host_blocks; /* under g_acl_lock */

HCOMM_API aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    if (hostPtr == NULL || size == 0) return ACL_ERROR_INVALID_PARAM;
    host_block *b = malloc(sizeof *b);
    void *p = NULL;
    if (b == NULL || posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), size) != 0) {
        free(b);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    *b = (host_block){NULL, p, size};
    pthread_mutex_lock(&g_acl_lock);
    b->next = g_host_blocks;
    g_host_blocks = b;
    pthread_mutex_unlock(&g_acl_lock);
    g_count.host_bytes += size;
    *hostPtr = p;
    return ACL_SUCCESS;
}

/* Only what aclrtMallocHost returned (else ACL_ERROR_INVALID_PARAM). */
HCOMM_API aclError aclrtFreeHost(void *hostPtr)
{
    if (hostPtr == NULL) return ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&g_acl_lock);
    host_block **pp = &g_host_blocks;
    while (*pp != NULL && (*pp)->ptr != hostPtr) pp = &(*pp)->next;
    host_block *b = *pp;
    if (b != NULL) *pp = b->next;
    pthread_mutex_unlock(&g_acl_lock);
    if (b == NULL) return ACL_ERROR_INVALID_PARAM;
    g_count.host_bytes -= b->size;
    free(b->ptr);
    free(b);
    return ACL_SUCCESS;
}
