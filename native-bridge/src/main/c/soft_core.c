/* Process-wide state of soft HComm: configuration, identity, the handle table and the counters. */
#include <stddef.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "soft_internal.h"

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
soft_counters g_count;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static soft_config g_cfg;
static char g_host_id[SOFT_HOST_ID_LEN];

/* $name (a positive integer) times scale, or dflt (already in the final unit). */
static int64_t env_int(const char *name, int64_t dflt, int64_t scale)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return dflt;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || n <= 0) return dflt;
    return (int64_t)n * scale;
}

static void read_host_id(char *out, size_t len);

static void init_once(void)
{
    const char *secret = getenv("HCOMM_SOFT_SECRET");
    snprintf(g_cfg.secret, sizeof g_cfg.secret, "%s", secret ? secret : "");
    const char *tcp = getenv("HCOMM_SOFT_FORCE_TCP");
    g_cfg.force_tcp = tcp != NULL && strcmp(tcp, "1") == 0;
    g_cfg.exec_timeout_ms = env_int("HCOMM_SOFT_EXEC_TIMEOUT_MS", 60000, 1);
    g_cfg.connect_timeout_ms = env_int("HCCL_CONNECT_TIMEOUT", 120000, 1000);
    g_cfg.handshake_timeout_ms = env_int("HCOMM_SOFT_HANDSHAKE_TIMEOUT_MS", SOFT_HANDSHAKE_MS, 1);
    const char *zc = getenv("HCOMM_SOFT_ZEROCOPY");
    g_cfg.zerocopy = zc == NULL || strcmp(zc, "0") != 0;
    const char *ifip = getenv("HCCL_IF_IP");
    struct in_addr probe;
    if (ifip != NULL && inet_pton(AF_INET, ifip, &probe) == 1) snprintf(g_cfg.if_ip, sizeof g_cfg.if_ip, "%s", ifip);

    read_host_id(g_host_id, sizeof g_host_id);
}

/*
 * What a NIC would see as "this host": the kernel's boot id and this process's network namespace. Two processes
 * of one boot in different network namespaces reach each other only through a link, so they are different hosts
 * to soft HComm (the soft NIC carries their bytes); within one namespace they share memory.
 */
static void read_host_id(char *out, size_t len)
{
    char boot[40] = "";
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, boot, sizeof boot - 1);
        close(fd);
        boot[n > 0 ? n : 0] = '\0';
        char *nl = strchr(boot, '\n');
        if (nl) *nl = '\0';
    }
    struct stat st;
    if (boot[0] == '\0' || stat("/proc/self/ns/net", &st) != 0) {
        snprintf(out, len, "unknown-%d", (int)getpid()); /* never equal to another process's: always the NIC */
        return;
    }
    snprintf(out, len, "%s/net:%llu:%llu", boot, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
}

void soft_init(void) { pthread_once(&g_once, init_once); }

void soft_config_get(soft_config *out)
{
    soft_init();
    pthread_mutex_lock(&g_cfg_lock);
    *out = g_cfg;
    pthread_mutex_unlock(&g_cfg_lock);
}

/* This process's host identity (see read_host_id). */
const char *soft_host_id(void)
{
    soft_init();
    return g_host_id;
}

/* Field 22 of the stat file of the process's main thread, /proc/<pid>/task/<pid>/stat (the process start time, as in
 * /proc/<pid>/stat): it tells a live pid from a reused one. The main thread's file, because qemu-user answers a
 * process's own /proc/<pid>/stat itself, with a start time of its own that is often a tick off the kernel's (which
 * the peer reads): the shared-memory path would then be refused between two emulated processes of one host. */
uint64_t soft_start_time(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (p == NULL) return 0;
    /* after ") " come fields 3..; the start time is field 22 */
    int field = 2;
    for (; *p && field < 22; p++)
        if (*p == ' ') field++;
    return strtoull(p, NULL, 10);
}

int64_t soft_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t soft_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void soft_random_bytes(void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            /* no entropy source: still unique per process, not secret */
            for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(rand() ^ getpid());
            return;
        }
        p += got;
        n -= (size_t)got;
    }
}

uint64_t soft_random64(void)
{
    uint64_t v = 0;
    while (v == 0) soft_random_bytes(&v, sizeof v);
    return v;
}

/* ---- handle table: chained hash, keys are (kind << 48) | sequence, never reused ---- */
typedef struct hentry {
    struct hentry *next;
    uint64_t key;
    void *obj;
} hentry;

static hentry **g_buckets;
static size_t g_nbuckets;
static size_t g_nentries;
static uint64_t g_seq;

static size_t bucket_of(uint64_t key, size_t n) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (n - 1); }

static int table_grow(void)
{
    size_t n = g_nbuckets ? g_nbuckets * 2 : 1024;
    hentry **b = calloc(n, sizeof *b);
    if (b == NULL) return -1;
    for (size_t i = 0; i < g_nbuckets; i++) {
        hentry *e = g_buckets[i];
        while (e) {
            hentry *next = e->next;
            size_t j = bucket_of(e->key, n);
            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    free(g_buckets);
    g_buckets = b;
    g_nbuckets = n;
    return 0;
}

/* Caller holds g_lock. Returns 0 when out of memory. */
uint64_t handle_put(enum obj_kind kind, void *obj)
{
    if ((g_nentries + 1) * 4 > g_nbuckets * 3 && table_grow() != 0) return 0;
    hentry *e = malloc(sizeof *e);
    if (e == NULL) return 0;
    e->key = ((uint64_t)kind << 48) | ++g_seq;
    e->obj = obj;
    size_t j = bucket_of(e->key, g_nbuckets);
    e->next = g_buckets[j];
    g_buckets[j] = e;
    g_nentries++;
    return e->key;
}

void *handle_get(uint64_t key, enum obj_kind kind)
{
    if (g_nbuckets == 0 || (key >> 48) != (uint64_t)kind) return NULL;
    for (hentry *e = g_buckets[bucket_of(key, g_nbuckets)]; e; e = e->next)
        if (e->key == key) return e->obj;
    return NULL;
}

void handle_del(uint64_t key)
{
    if (g_nbuckets == 0) return;
    hentry **pp = &g_buckets[bucket_of(key, g_nbuckets)];
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->key == key) {
            hentry *e = *pp;
            *pp = e->next;
            free(e);
            g_nentries--;
            if (g_nentries == 0) {
                free(g_buckets);
                g_buckets = NULL;
                g_nbuckets = 0;
            }
            return;
        }
    }
}

/* ---- soft-only API ---- */
static int parse_ms(const char *value, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long n = strtoll(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || n < 1 || n > 86400000LL) return -1;
    *out = n;
    return 0;
}

HCOMM_API int32_t HcommSoftConfigure(const char *key, const char *value)
{
    if (key == NULL || value == NULL) return HCCL_E_PTR;
    soft_init();
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&g_cfg_lock);
    if (strcmp(key, "secret") == 0) {
        if (strlen(value) >= sizeof g_cfg.secret) rc = HCCL_E_PARA;
        else snprintf(g_cfg.secret, sizeof g_cfg.secret, "%s", value);
    } else if (strcmp(key, "force_tcp") == 0) {
        if (strcmp(value, "0") == 0) g_cfg.force_tcp = 0;
        else if (strcmp(value, "1") == 0) g_cfg.force_tcp = 1;
        else rc = HCCL_E_PARA;
    } else if (strcmp(key, "exec_timeout_ms") == 0) {
        if (parse_ms(value, &g_cfg.exec_timeout_ms) != 0) rc = HCCL_E_PARA;
    } else if (strcmp(key, "connect_timeout_ms") == 0) {
        if (parse_ms(value, &g_cfg.connect_timeout_ms) != 0) rc = HCCL_E_PARA;
    } else if (strcmp(key, "handshake_timeout_ms") == 0) {
        if (parse_ms(value, &g_cfg.handshake_timeout_ms) != 0) rc = HCCL_E_PARA;
    } else if (strcmp(key, "zerocopy") == 0) {
        if (strcmp(value, "0") == 0) g_cfg.zerocopy = 0;
        else if (strcmp(value, "1") == 0) g_cfg.zerocopy = 1;
        else rc = HCCL_E_PARA;
    } else if (strcmp(key, "if_ip") == 0) {
        struct in_addr probe;
        if (inet_pton(AF_INET, value, &probe) != 1) rc = HCCL_E_PARA;
        else snprintf(g_cfg.if_ip, sizeof g_cfg.if_ip, "%s", value);
    } else if (strcmp(key, "soc") == 0) {
        rc = soft_profile_set(value);
    } else {
        rc = HCCL_E_PARA;
    }
    pthread_mutex_unlock(&g_cfg_lock);
    return rc;
}

HCOMM_API int32_t HcommSoftGetCounters(HcommSoftCounters *out)
{
    if (out == NULL) return HCCL_E_PTR;
    if (out->size < offsetof(HcommSoftCounters, opsRunByWaiter)) return HCCL_E_PARA;
    out->endpoints = g_count.endpoints;
    out->regions = g_count.regions;
    out->allocations = g_count.allocations;
    out->imports = g_count.imports;
    out->channels = g_count.channels;
    out->threads = g_count.threads;
    out->bytesServed = g_count.bytes_served;
    out->bytesRead = g_count.bytes_read;
    if (out->size >= offsetof(HcommSoftCounters, comms)) out->opsRunByWaiter = g_count.ops_run_by_waiter;
    if (out->size >= offsetof(HcommSoftCounters, events)) {
        out->comms = g_count.comms;
        out->deviceBytes = g_count.device_bytes;
        out->h2dBytes = g_count.h2d_bytes;
        out->d2hBytes = g_count.d2h_bytes;
        out->notifies = g_count.notifies;
    }
    if (out->size >= sizeof(HcommSoftCounters)) {
        out->events = g_count.events;
        out->hostBytes = g_count.host_bytes;
    }
    return HCCL_SUCCESS;
}

HCOMM_API const char *HcommSoftVersion(void) { return SOFT_VERSION; }
