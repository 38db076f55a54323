/*
 * C-level tests of soft HComm across real processes: a forked owner process exports memory and keeps a SERVER
 * channel end; this process reads it one-sidedly. Runs every scenario on the shared-memory path and on the
 * forced TCP path. Built and run under AddressSanitizer and UBSan by `make test`.
 */
#include <stddef.h>
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hcomm_api.h"
#include "hcomm_soft.h"

static int failures;
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            failures++;                                                               \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
        }                                                                             \
    } while (0)
#define CHECK_RC(expr, want)                                                          \
    do {                                                                              \
        int rc_ = (int)(expr);                                                        \
        CHECK(rc_ == (want), "got %d, want %d", rc_, (int)(want));                    \
    } while (0)

#define OWNER_SIZE (64u << 20)
#define PAGE_TAG "owner"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint8_t pattern(uint64_t i, uint32_t seed) { return (uint8_t)(((i * 2654435761u) >> 13) ^ seed ^ (i >> 7)); }

static EndpointDesc loopback_desc(void)
{
    EndpointDesc d;
    memset(&d, 0xFF, sizeof d);
    d.protocol = COMM_PROTOCOL_ROCE;
    d.commAddr.type = COMM_ADDR_TYPE_IP_V4;
    d.commAddr.addr.s_addr = htonl(INADDR_LOOPBACK);
    d.loc.locType = ENDPOINT_LOC_TYPE_HOST;
    return d;
}

static void channel_desc_init(HcommChannelDesc *d)
{
    memset(d, 0xFF, sizeof *d);
    d->header = (CommAbiHeader){HCOMM_CHANNEL_VERSION, HCOMM_CHANNEL_MAGIC_WORD, sizeof *d, 0};
    d->notifyNum = 0;
    d->exchangeAllMems = false;
    d->memHandles = NULL;
    d->memHandleNum = 0;
    d->socket = NULL;
    d->role = HCOMM_SOCKET_ROLE_RESERVED;
    d->port = 0;
    d->roceAttr.srcPortList = NULL;
    d->channelName = NULL;
}

static int await_ready(ChannelHandle *chs, uint32_t n, int64_t ms, int32_t *final)
{
    int32_t st[8];
    int64_t until = now_ms() + ms;
    while (now_ms() < until) {
        if (HcommChannelGetStatus(chs, n, st) != 0) return -1;
        int ready = 1;
        for (uint32_t i = 0; i < n; i++) {
            if (st[i] != 0 && st[i] != 1) {
                *final = st[i];
                return -1;
            }
            ready &= st[i] == 0;
        }
        if (ready) return 0;
        usleep(1000);
    }
    *final = 1;
    return -1;
}

/* What the owner tells the reader, over a pipe. */
typedef struct {
    EndpointDesc desc;
    uint32_t port;
    uint32_t desc_len;
    uint8_t mem_desc[1024];
} owner_info;

/* The owner: export OWNER_SIZE bytes of pattern(seed), serve one SERVER channel, then wait for a byte. */
static int owner_main(int to_parent, int from_parent, uint32_t seed, const char *secret, int unregister_first)
{
    if (secret) HcommSoftConfigure("secret", secret);
    EndpointDesc ed = loopback_desc();
    EndpointHandle ep;
    if (HcommEndpointCreate(&ed, &ep) != 0) return 10;
    void *buf;
    if (HcommMemAlloc(&buf, OWNER_SIZE) != 0) return 11;
    for (uint64_t i = 0; i < OWNER_SIZE; i++) ((uint8_t *)buf)[i] = pattern(i, seed);
    CommMem m = {COMM_MEM_TYPE_HOST, buf, OWNER_SIZE};
    HcommMemHandle mh;
    if (HcommMemReg(ep, PAGE_TAG, &m, &mh) != 0) return 12;
    owner_info info;
    memset(&info, 0, sizeof info);
    info.desc = ed;
    HcommEndpointGetListenPort(ep, &info.port);
    void *md;
    if (HcommMemExport(ep, mh, &md, &info.desc_len) != 0 || info.desc_len > sizeof info.mem_desc) return 13;
    memcpy(info.mem_desc, md, info.desc_len);
    if (write(to_parent, &info, sizeof info) != sizeof info) return 14;
    EndpointDesc reader;
    if (read(from_parent, &reader, sizeof reader) != sizeof reader) return 15;
    HcommChannelDesc cd;
    channel_desc_init(&cd);
    cd.remoteEndpoint = reader;
    cd.exchangeAllMems = true;
    cd.role = HCOMM_SOCKET_ROLE_SERVER;
    cd.port = (uint16_t)info.port;
    cd.channelName = "test-channel";
    ChannelHandle ch;
    if (HcommChannelCreate(ep, COMM_ENGINE_CPU, &cd, 1, &ch) != 0) return 16;
    int32_t final = 0;
    int ready = await_ready(&ch, 1, secret ? 2000 : 10000, &final) == 0; /* a refused peer never arrives */
    if (getenv("TEST_SOFT_DEBUG")) fprintf(stderr, "owner %u: ready=%d final=%d\n", seed, ready, final);
    if (unregister_first && ready) HcommMemUnreg(ep, mh);
    char cmd = ready ? 'R' : 'F';
    if (write(to_parent, &cmd, 1) != 1) return 17;
    if (read(from_parent, &cmd, 1) != 1) cmd = 'x'; /* the reader is done: clean up everything */
    HcommChannelDestroy(&ch, 1);
    if (!unregister_first) HcommMemUnreg(ep, mh);
    HcommMemFree(buf);
    HcommEndpointDestroy(ep);
    HcommSoftCounters c = {.size = sizeof c};
    HcommSoftGetCounters(&c);
    return (c.endpoints | c.regions | c.allocations | c.channels | c.threads) ? 18 : 0;
}

typedef struct {
    pid_t pid;
    int to_child, from_child;
    owner_info info;
} owner;

static int g_force_tcp;

static void soft_config_env(void)
{
    if (g_force_tcp) setenv("HCOMM_SOFT_FORCE_TCP", "1", 1);
}

static int start_owner(owner *o, uint32_t seed, const char *secret, int unregister_first)
{
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) return -1;
    fflush(NULL);
    o->pid = fork();
    if (o->pid == 0) { /* exec a fresh image: the library's threads do not survive a fork */
        close(down[1]);
        close(up[0]);
        char a[5][32];
        snprintf(a[0], 32, "%d", up[1]);
        snprintf(a[1], 32, "%d", down[0]);
        snprintf(a[2], 32, "%u", seed);
        snprintf(a[3], 32, "%d", unregister_first);
        soft_config_env();
        execl("/proc/self/exe", "test_soft", "owner", a[0], a[1], a[2], a[3], secret ? secret : "", (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    o->to_child = down[1];
    o->from_child = up[0];
    return read(o->from_child, &o->info, sizeof o->info) == sizeof o->info ? 0 : -1;
}

static int finish_owner(owner *o)
{
    char c = 'x';
    if (write(o->to_child, &c, 1) != 1) { /* already gone */ }
    int status = 0;
    waitpid(o->pid, &status, 0);
    close(o->to_child);
    close(o->from_child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

typedef struct {
    EndpointHandle ep;
    uint8_t *buf;
    uint64_t size;
    HcommMemHandle mh;
    ThreadHandle th;
} reader;

static void reader_open(reader *r, uint64_t size)
{
    EndpointDesc ed = loopback_desc();
    CHECK_RC(HcommEndpointCreate(&ed, &r->ep), 0);
    CHECK_RC(HcommMemAlloc((void **)&r->buf, size), 0);
    r->size = size;
    CommMem m = {COMM_MEM_TYPE_HOST, r->buf, size};
    CHECK_RC(HcommMemReg(r->ep, "recv", &m, &r->mh), 0);
    uint32_t notifies = 0;
    CHECK_RC(HcommThreadAlloc(COMM_ENGINE_CPU, 1, &notifies, &r->th), 0);
}

static void reader_close(reader *r)
{
    CHECK_RC(HcommThreadFree(&r->th, 1), 0);
    CHECK_RC(HcommMemUnreg(r->ep, r->mh), 0);
    CHECK_RC(HcommMemFree(r->buf), 0);
    CHECK_RC(HcommEndpointDestroy(r->ep), 0);
}

/* Connects a CLIENT channel of r to the owner; returns the handle, or 0 with *status the final status. */
static ChannelHandle connect_to(reader *r, owner *o, int32_t *status, uint64_t *remote)
{
    EndpointDesc me = loopback_desc();
    if (write(o->to_child, &me, sizeof me) != sizeof me) return 0;
    CommMem peer;
    CHECK_RC(HcommMemImport(r->ep, o->info.mem_desc, o->info.desc_len, &peer), 0);
    *remote = (uint64_t)(uintptr_t)peer.addr;
    CHECK(peer.size == OWNER_SIZE, "imported size %llu", (unsigned long long)peer.size);
    HcommChannelDesc cd;
    channel_desc_init(&cd);
    cd.remoteEndpoint = o->info.desc;
    cd.exchangeAllMems = true;
    cd.role = HCOMM_SOCKET_ROLE_CLIENT;
    cd.port = (uint16_t)o->info.port;
    cd.channelName = "test-channel";
    ChannelHandle ch = 0;
    CHECK_RC(HcommChannelCreate(r->ep, COMM_ENGINE_CPU, &cd, 1, &ch), 0);
    *status = 0;
    int ok = await_ready(&ch, 1, 10000, status) == 0;
    char owner_said = 0;
    if (read(o->from_child, &owner_said, 1) != 1) owner_said = 0;
    CHECK_RC(HcommMemUnimport(r->ep, o->info.mem_desc, o->info.desc_len), 0);
    if (!ok) {
        HcommChannelDestroy(&ch, 1);
        return 0;
    }
    return ch;
}

static int verify(const uint8_t *dst, uint64_t off, uint64_t len, uint32_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        if (dst[i] != pattern(off + i, seed)) return 0;
    return 1;
}

static void test_reads(reader *r, ChannelHandle ch, uint64_t remote, uint32_t seed)
{
    static const uint64_t sizes[] = {0, 1, 4095, 1u << 20, 64u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint64_t len = sizes[k], off = len == OWNER_SIZE ? 0 : 12345;
        memset(r->buf, 0, len ? len : 1);
        CHECK_RC(HcommBatchModeStart(""), 0);
        CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)(remote + off), len), 0);
        CHECK_RC(HcommBatchModeEnd(""), 0);
        CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0);
        CHECK(verify(r->buf, off, len, seed), "bytes of a %llu-byte read", (unsigned long long)len);
    }
    /* 1000 small reads in one batch, completed through the thread's stream */
    memset(r->buf, 0, 1000 * 64);
    CHECK_RC(HcommBatchModeStart("many"), 0);
    for (int i = 0; i < 1000; i++)
        CHECK_RC(HcommReadOnThread(r->th, ch, r->buf + i * 64, (void *)(uintptr_t)(remote + (uint64_t)i * 4096), 64), 0);
    CHECK_RC(HcommBatchModeEnd("many"), 0);
    void *stream = NULL;
    CHECK_RC(HcommThreadResGetInfo(r->th, THREAD_RES_TYPE_STREAM, 8, &stream), 0);
    CHECK_RC(aclrtSynchronizeStream(stream), 0);
    int ok = 1;
    for (int i = 0; i < 1000; i++) ok &= verify(r->buf + i * 64, (uint64_t)i * 4096, 64, seed);
    CHECK(ok, "bytes of 1000 batched reads");
    /* ReadNbi + fence */
    memset(r->buf, 0, 8192);
    CHECK_RC(HcommReadNbi(ch, r->buf, (void *)(uintptr_t)(remote + 7), 4096), 0);
    CHECK_RC(HcommReadNbi(ch, r->buf + 4096, (void *)(uintptr_t)(remote + 9000), 4096), 0);
    CHECK_RC(HcommChannelFence(ch), 0);
    CHECK(verify(r->buf, 7, 4096, seed) && verify(r->buf + 4096, 9000, 4096, seed), "bytes of ReadNbi");
}

/* Reads on one thread start in submission order even when a completion wait runs some of them itself, and a wait
 * that finds the worker asleep runs the read instead of waiting for the worker to be scheduled. */
static void test_order_and_waiters(reader *r, ChannelHandle ch, uint64_t remote, uint32_t seed)
{
    int ordered = 1;
    for (int i = 0; i < 200 && ordered; i++) {
        uint64_t first = (uint64_t)(i % 7) * 4096 + 100, last = (uint64_t)(i % 5) * 8192 + 3;
        CHECK_RC(HcommBatchModeStart("order"), 0);
        CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)(remote + first), 256), 0);
        CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)(remote + last), 256), 0);
        CHECK_RC(HcommBatchModeEnd("order"), 0);
        CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0);
        ordered = verify(r->buf, last, 256, seed);
    }
    CHECK(ordered, "two reads into one destination: the later one must land last");

    HcommSoftCounters before = {.size = sizeof before}, after = {.size = sizeof after};
    CHECK_RC(HcommSoftGetCounters(&before), 0);
    for (int i = 0; i < 100; i++) {
        usleep(2000); /* the worker has gone to sleep on its condition variable */
        CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)(remote + 4096), 64), 0);
        CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0);
    }
    CHECK(verify(r->buf, 4096, 64, seed), "bytes of a read run by its waiter");
    CHECK_RC(HcommSoftGetCounters(&after), 0);
    uint64_t by_waiter = after.opsRunByWaiter - before.opsRunByWaiter;
    CHECK(by_waiter >= 1 && by_waiter <= 100, "reads run by the waiter: %llu of 100 submitted to a sleeping worker",
          (unsigned long long)by_waiter);
    printf("   %llu of 100 reads submitted to a sleeping worker were run by their waiter\n",
           (unsigned long long)by_waiter);

    /* a caller built against the shorter struct (before opsRunByWaiter) still gets its fields */
    HcommSoftCounters old;
    memset(&old, 0x5A, sizeof old);
    old.size = (uint32_t)offsetof(HcommSoftCounters, opsRunByWaiter);
    CHECK_RC(HcommSoftGetCounters(&old), 0);
    CHECK(old.opsRunByWaiter == 0x5A5A5A5A5A5A5A5Aull, "a short struct's caller must not be written past its size");
    old.size = 8;
    CHECK_RC(HcommSoftGetCounters(&old), HCCL_E_PARA);
}

static void test_bad_input(reader *r, ChannelHandle ch, uint64_t remote)
{
    /* out of range: error 6 and the destination untouched */
    memset(r->buf, 0xAB, 4096);
    CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)(remote + OWNER_SIZE - 10), 11), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)(remote - 1), 1), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommReadOnThread(r->th, ch, r->buf + r->size - 1, (void *)(uintptr_t)remote, 2), HCCL_E_NOT_FOUND);
    uint8_t unregistered[16];
    CHECK_RC(HcommReadOnThread(r->th, ch, unregistered, (void *)(uintptr_t)remote, 16), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommReadNbi(ch, r->buf, (void *)(uintptr_t)(remote + OWNER_SIZE), 1), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0);
    int untouched = 1;
    for (int i = 0; i < 4096; i++) untouched &= r->buf[i] == 0xAB;
    CHECK(untouched, "destination changed by a refused read");
    /* null pointers and counts */
    CHECK_RC(HcommReadOnThread(0, ch, r->buf, (void *)(uintptr_t)remote, 1), HCCL_E_PTR);
    CHECK_RC(HcommReadOnThread(r->th, ch, NULL, (void *)(uintptr_t)remote, 1), HCCL_E_PTR);
    CHECK_RC(HcommReadOnThread(r->th, 12345, r->buf, (void *)(uintptr_t)remote, 1), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommChannelDestroy(NULL, 1), HCCL_E_PTR);
    CHECK_RC(HcommChannelDestroy(&ch, 0), HCCL_E_PARA);
    CHECK_RC(HcommChannelDestroy(&ch, 1048577), HCCL_E_PARA);
    int32_t st;
    CHECK_RC(HcommChannelGetStatus(&ch, 0, &st), HCCL_E_PARA);
    CHECK_RC(HcommChannelGetStatus(NULL, 1, &st), HCCL_E_PTR);
    HcommChannelDesc cd;
    channel_desc_init(&cd);
    ChannelHandle out;
    CHECK_RC(HcommChannelCreate(r->ep, COMM_ENGINE_CPU, NULL, 1, &out), HCCL_E_PTR);
    CHECK_RC(HcommChannelCreate(r->ep, COMM_ENGINE_CPU, &cd, 0, &out), HCCL_E_PARA);
    CHECK_RC(HcommChannelCreate(r->ep, COMM_ENGINE_CPU, &cd, 1048577, &out), HCCL_E_PARA);
    CHECK_RC(HcommChannelCreate(r->ep, COMM_ENGINE_AIV, &cd, 1, &out), HCCL_E_NOT_SUPPORT);
    cd.header.magicWord = 1;
    CHECK_RC(HcommChannelCreate(r->ep, COMM_ENGINE_CPU, &cd, 1, &out), HCCL_E_PARA);
    CHECK_RC(HcommEndpointCreate(NULL, NULL), HCCL_E_PTR);
    CHECK_RC(HcommMemReg(r->ep, "x", NULL, NULL), HCCL_E_PTR);
    CHECK_RC(HcommThreadAlloc(COMM_ENGINE_CPU, 0, NULL, &r->th), HCCL_E_PARA);
    CHECK_RC(HcommWriteOnThread(r->th, ch, r->buf, (void *)(uintptr_t)remote, 1), HCCL_E_NOT_SUPPORT);
    /* an invalid handle inside a destroy batch destroys nothing */
    ChannelHandle batch[3] = {ch, 0xdeadbeef, ch};
    CHECK_RC(HcommChannelDestroy(batch, 2), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommChannelDestroy(batch + 2, 1) == 0 ? 0 : 1, 0); /* still alive: destroyable once */
}

typedef struct {
    ChannelHandle ch;
    void *dst;
    uint64_t src;
    uint64_t len;
} fence_arg;

/* Posts one ReadNbi and fences at once, so the fence often finds the queue's worker not yet awake and runs the copy
 * itself (as a task thread does on a busy host). */
static void *fence_main(void *p)
{
    fence_arg *a = p;
    if (HcommReadNbi(a->ch, a->dst, (void *)(uintptr_t)a->src, a->len) == 0) HcommChannelFence(a->ch);
    return NULL;
}

/* A channel destroyed while a fencing caller runs a queued ReadNbi's copy itself (the queue's worker asleep): when
 * HcommChannelDestroy returns, that copy has ended, so nothing lands in the destination afterwards (the plugin lends
 * the destination to other readers once the destroy returned). Whether the fencer or the woken worker runs the copy
 * is up to the scheduler (about half the time the fencer); the attempts where the fencer did decide. */
static void test_destroy_waits_for_fencer(reader *r)
{
    const uint64_t len = 48u << 20; /* a copy of many ms: fresh mapping of the owner's memory, page by page */
    int decisive = 0;
    for (int attempt = 0; attempt < 20 && decisive < 3; attempt++) {
        owner o;
        int32_t status;
        uint64_t remote;
        CHECK_RC(start_owner(&o, 8, NULL, 0), 0);
        ChannelHandle ch = connect_to(r, &o, &status, &remote);
        CHECK(ch != 0, "channel not READY: status %d", status);
        if (ch == 0) {
            finish_owner(&o);
            break;
        }
        CHECK_RC(HcommReadNbi(ch, r->buf, (void *)(uintptr_t)remote, 64), 0); /* creates the queue */
        CHECK_RC(HcommChannelFence(ch), 0);
        usleep(2000); /* its worker has gone to sleep */
        memset(r->buf, 0xAB, len);
        HcommSoftCounters before = {.size = sizeof before}, after = {.size = sizeof after};
        CHECK_RC(HcommSoftGetCounters(&before), 0);
        fence_arg a = {ch, r->buf, remote, len};
        pthread_t fencer;
        CHECK_RC(pthread_create(&fencer, NULL, fence_main, &a), 0);
        usleep(1000);
        CHECK_RC(HcommChannelDestroy(&ch, 1), 0);
        int landed_before = verify(r->buf + len - 4096, len - 4096, 4096, 8); /* the copy's last page */
        pthread_join(fencer, NULL);
        int landed_after = verify(r->buf + len - 4096, len - 4096, 4096, 8);
        CHECK_RC(HcommSoftGetCounters(&after), 0);
        if (after.opsRunByWaiter > before.opsRunByWaiter) {
            decisive++;
            CHECK(landed_before || !landed_after, "a fencer's copy landed after HcommChannelDestroy returned");
        }
        CHECK_RC(finish_owner(&o), 0);
    }
    printf("   destroy during a fencer's copy: %d decisive attempts\n", decisive);
}

/* A failed read's error is reported to the thread that submitted it, never to another thread draining the same
 * channel: two reduce tasks of one executor share the channel to an owner, and a task told "success" for a read
 * that failed would hand Spark bytes that never arrived. Every read here fails (the owner unregistered its memory). */
static void test_errors_stay_with_their_thread(reader *r, ChannelHandle ch, uint64_t remote)
{
    ThreadHandle other;
    uint32_t notifies = 0;
    CHECK_RC(HcommThreadAlloc(COMM_ENGINE_CPU, 1, &notifies, &other), 0);
    CHECK_RC(HcommReadOnThread(r->th, ch, r->buf, (void *)(uintptr_t)remote, 4096), 0);
    usleep(200000); /* the read has failed by now (it fails within milliseconds) */
    CHECK_RC(HcommChannelDrainOnThread(other, ch), 0); /* submitted nothing: nothing failed */
    CHECK_RC(HcommChannelDrainOnThread(r->th, ch), HCCL_E_NETWORK);
    CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0); /* reported once */
    /* a thread-wide wait reports it too, and then no drain does */
    CHECK_RC(HcommReadOnThread(other, ch, r->buf, (void *)(uintptr_t)remote, 4096), 0);
    void *stream = NULL;
    CHECK_RC(HcommThreadResGetInfo(other, THREAD_RES_TYPE_STREAM, 8, &stream), 0);
    CHECK_RC(aclrtSynchronizeStream(stream), HCCL_E_NETWORK);
    CHECK_RC(HcommChannelDrainOnThread(other, ch), 0);
    CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0);
    /* a thread freed with its error unreported takes the error with it */
    CHECK_RC(HcommReadOnThread(other, ch, r->buf, (void *)(uintptr_t)remote, 4096), 0);
    usleep(200000);
    CHECK_RC(HcommThreadFree(&other, 1), 0);
    CHECK_RC(HcommChannelDrainOnThread(r->th, ch), 0);
    /* ReadNbi errors are the channel's, reported by its fence */
    CHECK_RC(HcommReadNbi(ch, r->buf, (void *)(uintptr_t)remote, 4096), 0);
    CHECK_RC(HcommChannelFence(ch), HCCL_E_NETWORK);
    CHECK_RC(HcommChannelFence(ch), 0);
}

static void run_suite(const char *path)
{
    printf("== %s path\n", path);
    reader r;
    reader_open(&r, OWNER_SIZE);

    owner o;
    CHECK_RC(start_owner(&o, 7, NULL, 0), 0);
    int32_t status;
    uint64_t remote;
    ChannelHandle ch = connect_to(&r, &o, &status, &remote);
    CHECK(ch != 0, "channel not READY: status %d", status);
    if (ch) {
        const char *p = "?";
        CHECK_RC(HcommSoftChannelPath(ch, &p), 0);
        CHECK(strcmp(p, path) == 0, "path %s, want %s", p, path);
        test_reads(&r, ch, remote, 7);
        test_order_and_waiters(&r, ch, remote, 7);
        test_bad_input(&r, ch, remote); /* destroys ch at its end */
    }
    CHECK_RC(finish_owner(&o), 0);

    /* bulk destroy: two channels to two owners in one call */
    owner a, b;
    CHECK_RC(start_owner(&a, 1, NULL, 0), 0);
    ChannelHandle two[2];
    two[0] = connect_to(&r, &a, &status, &remote);
    CHECK_RC(start_owner(&b, 2, NULL, 0), 0);
    two[1] = connect_to(&r, &b, &status, &remote);
    CHECK(two[0] && two[1], "bulk channels not READY");
    HcommSoftCounters c = {.size = sizeof c};
    HcommSoftGetCounters(&c);
    CHECK(c.channels == 2, "live channels %llu", (unsigned long long)c.channels);
    CHECK_RC(HcommChannelDestroy(two, 2), 0);
    HcommSoftGetCounters(&c);
    CHECK(c.channels == 0, "live channels after bulk destroy %llu", (unsigned long long)c.channels);
    CHECK_RC(HcommChannelDestroy(two, 1), HCCL_E_NOT_FOUND);
    CHECK_RC(finish_owner(&a), 0);
    CHECK_RC(finish_owner(&b), 0);

    if (strcmp(path, "shm") == 0) test_destroy_waits_for_fencer(&r);
    printf("  reads, bad input, bulk destroy: done at %lld ms\n", (long long)now_ms());
    /* a wrong secret is refused */
    CHECK_RC(start_owner(&o, 3, "another-secret", 0), 0);
    ch = connect_to(&r, &o, &status, &remote);
    CHECK(ch == 0 && status == HCOMM_CHANNEL_STATUS_FAILED, "wrong secret: channel %llu status %d",
          (unsigned long long)ch, status);
    if (ch) HcommChannelDestroy(&ch, 1);
    CHECK_RC(finish_owner(&o), 0);

    printf("  wrong secret refused: done at %lld ms\n", (long long)now_ms());
    /* the owner unregisters its memory after the channel is up: reads fail, never return bytes */
    CHECK_RC(start_owner(&o, 4, NULL, 1), 0);
    ch = connect_to(&r, &o, &status, &remote);
    if (ch) {
        memset(r.buf, 0, 4096);
        CHECK_RC(HcommReadOnThread(r.th, ch, r.buf, (void *)(uintptr_t)remote, 4096), 0);
        CHECK_RC(HcommChannelDrainOnThread(r.th, ch), HCCL_E_NETWORK);
        CHECK(!verify(r.buf, 0, 4096, 4), "bytes of unregistered memory were returned");
        test_errors_stay_with_their_thread(&r, ch, remote);
        HcommChannelDestroy(&ch, 1);
    }
    CHECK_RC(finish_owner(&o), 0);

    /* the owner dies during reads: an error, not a hang, and never stale bytes afterwards */
    CHECK_RC(start_owner(&o, 5, NULL, 0), 0);
    ch = connect_to(&r, &o, &status, &remote);
    if (ch) {
        HcommSoftConfigure("exec_timeout_ms", "5000");
        for (int i = 0; i < 16; i++)
            HcommReadOnThread(r.th, ch, r.buf, (void *)(uintptr_t)(remote + ((uint64_t)i << 20)), 1u << 20);
        kill(o.pid, SIGKILL);
        int64_t t0 = now_ms();
        int rc = HcommChannelDrainOnThread(r.th, ch);
        CHECK(rc == 0 || rc == HCCL_E_NETWORK, "drain while the owner dies: %d", rc);
        waitpid(o.pid, NULL, 0);
        memset(r.buf, 0, 4096);
        CHECK_RC(HcommReadOnThread(r.th, ch, r.buf, (void *)(uintptr_t)remote, 4096), 0);
        CHECK_RC(HcommChannelDrainOnThread(r.th, ch), HCCL_E_NETWORK);
        CHECK(now_ms() - t0 < 5000, "failure took %lld ms", (long long)(now_ms() - t0));
        HcommChannelDestroy(&ch, 1);
        HcommSoftConfigure("exec_timeout_ms", "60000");
    }
    close(o.to_child);
    close(o.from_child);

    if (strcmp(path, "tcp") == 0) { /* a stalled owner: the read times out after exec_timeout_ms */
        CHECK_RC(start_owner(&o, 6, NULL, 0), 0);
        ch = connect_to(&r, &o, &status, &remote);
        if (ch) {
            HcommSoftConfigure("exec_timeout_ms", "1500");
            kill(o.pid, SIGSTOP);
            int64_t t0 = now_ms();
            CHECK_RC(HcommReadOnThread(r.th, ch, r.buf, (void *)(uintptr_t)remote, 64u << 20), 0);
            CHECK_RC(HcommChannelDrainOnThread(r.th, ch), HCCL_E_TIMEOUT);
            int64_t took = now_ms() - t0;
            CHECK(took >= 1400 && took < 5000, "timeout after %lld ms", (long long)took);
            kill(o.pid, SIGKILL);
            waitpid(o.pid, NULL, 0);
            HcommChannelDestroy(&ch, 1);
            HcommSoftConfigure("exec_timeout_ms", "60000");
        }
        close(o.to_child);
        close(o.from_child);
    }

    reader_close(&r);
    HcommSoftCounters left = {.size = sizeof left};
    HcommSoftGetCounters(&left);
    CHECK(left.endpoints == 0 && left.regions == 0 && left.allocations == 0 && left.imports == 0 &&
              left.channels == 0 && left.threads == 0,
          "left behind: ep %llu reg %llu alloc %llu imp %llu ch %llu th %llu", (unsigned long long)left.endpoints,
          (unsigned long long)left.regions, (unsigned long long)left.allocations, (unsigned long long)left.imports,
          (unsigned long long)left.channels, (unsigned long long)left.threads);
}

static void test_local_rules(void)
{
    EndpointDesc ed = loopback_desc();
    EndpointHandle ep;
    CHECK_RC(HcommEndpointCreate(&ed, &ep), 0);
    EndpointDesc dev = ed;
    dev.loc.locType = ENDPOINT_LOC_TYPE_DEVICE;
    EndpointHandle other;
    CHECK_RC(HcommEndpointCreate(&dev, &other), HCCL_E_NOT_SUPPORT);
    dev.loc.locType = 7;
    CHECK_RC(HcommEndpointCreate(&dev, &other), HCCL_E_PARA);
    uint8_t *mem;
    CHECK_RC(HcommMemAlloc((void **)&mem, 1 << 16), 0);
    CommMem whole = {COMM_MEM_TYPE_HOST, mem, 1 << 16}, inner = {COMM_MEM_TYPE_HOST, mem + 4096, 4096},
            partial = {COMM_MEM_TYPE_HOST, mem + 60000, 8192}, zero = {COMM_MEM_TYPE_HOST, mem, 0};
    HcommMemHandle h1, h2, h3;
    CHECK_RC(HcommMemReg(ep, "a", &whole, &h1), 0);
    CHECK_RC(HcommMemReg(ep, "b", &inner, &h2), 0);        /* alias */
    CHECK_RC(HcommMemReg(ep, "c", &partial, &h3), HCCL_E_PARA);
    CHECK_RC(HcommMemReg(ep, "d", &zero, &h3), HCCL_E_PARA);
    void *d1;
    uint32_t l1;
    CHECK_RC(HcommMemExport(ep, h2, &d1, &l1), 0);
    CommMem got;
    CHECK_RC(HcommMemImport(ep, d1, l1, &got), 0);
    CHECK(got.addr == mem + 4096 && got.size == 4096, "import of an alias");
    CHECK_RC(HcommMemImport(ep, d1, l1, &got), HCCL_E_AGAIN);
    CHECK_RC(HcommMemImport(ep, d1, l1 - 1, &got), HCCL_E_PARA);
    CHECK_RC(HcommMemUnimport(ep, d1, l1), 0);
    CHECK_RC(HcommMemUnimport(ep, d1, l1), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommMemUnreg(ep, h1), 0);
    CHECK_RC(HcommMemUnreg(ep, h1), HCCL_E_NOT_FOUND);
    CHECK_RC(HcommMemUnreg(ep, h2), 0);
    CHECK_RC(HcommMemFree(mem), 0);
    CHECK_RC(HcommMemFree(mem), HCCL_E_NOT_FOUND);
    /* many channels that never connect, destroyed in one call */
    enum { N = 20000 };
    HcommChannelDesc *cds = malloc(N * sizeof *cds);
    ChannelHandle *chs = malloc(N * sizeof *chs);
    char (*names)[24] = malloc(N * sizeof *names);
    for (int i = 0; i < N; i++) {
        channel_desc_init(&cds[i]);
        cds[i].remoteEndpoint = ed;
        cds[i].exchangeAllMems = true;
        cds[i].role = HCOMM_SOCKET_ROLE_SERVER;
        snprintf(names[i], sizeof names[i], "c%d", i);
        cds[i].channelName = names[i];
    }
    CHECK_RC(HcommChannelCreate(ep, COMM_ENGINE_CPU_TS, cds, N, chs), 0);
    CHECK_RC(HcommEndpointDestroy(ep), HCCL_E_AGAIN);
    int64_t t0 = now_ms();
    CHECK_RC(HcommChannelDestroy(chs, N), 0);
    printf("destroyed %d channels in one call: %lld ms\n", N, (long long)(now_ms() - t0));
    free(cds);
    free(chs);
    free(names);
    CHECK_RC(HcommEndpointDestroy(ep), 0);
    CHECK_RC(HcommEndpointDestroy(ep), HCCL_E_NOT_FOUND);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc == 7 && strcmp(argv[1], "owner") == 0)
        return owner_main(atoi(argv[2]), atoi(argv[3]), (uint32_t)atoi(argv[4]), argv[6][0] ? argv[6] : NULL,
                          atoi(argv[5]));
    test_local_rules();
    run_suite("shm");
    HcommSoftConfigure("force_tcp", "1");
    g_force_tcp = 1;
    run_suite("tcp");
    printf("%s: %d failed\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
