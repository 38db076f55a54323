/*
 * HCCL communicators, the Atlas A2/A3 route to one-sided reads (docs/COMMUNICATOR.md). A communicator is built
 * on soft HComm's own endpoint machinery, which the communicator path uses on every product:
 * - HcclGetRootInfo starts a root listener; the root info names it and carries a ticket. Each rank's
 *   HcclCommInitRootInfo[Config] makes an endpoint on the host's address, allocates its HCCL buffer in soft device
 *   memory, registers it, and joins at the root with its address; when all ranks joined the root sends every rank
 *   the table of addresses (or, at the connect timeout, a refusal) and ends. The root reads joins without blocking:
 *   a connection whose join is not whole within the handshake timeout is closed, and past ROOT_MAX_JOINING at once
 *   the oldest gives way, so idle connections delay no rank.
 * - HcclChannelAcquire, called by both ends, makes an endpoint channel that exchanges exactly the two HCCL
 *   buffers (the lower rank serves); ROCE channels always cross the soft NIC, HCCS ones share memory on one host.
 * - HcclCommDestroy ends the communicator's channels, threads, registration, endpoint and buffer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "soft_internal.h"

#define ROOT_MAGIC 0x48435249u  /* "HCRI": root info */
#define JOIN_MAGIC 0x4843524Au  /* "HCRJ": a rank joins */
#define TABLE_MAGIC 0x48435254u /* "HCRT": the root's answer */
#define COMM_VERSION 2u           /* 2: joins and the table carry each rank's device */
#define COMM_MAX_RANKS 65536u
#define COMM_NAME_MAX 128
#define DEFAULT_BUFFSIZE_MB 200u

typedef struct __attribute__((packed)) {
    uint32_t magic, version;
    uint32_t ip;
    uint16_t port, pad;
    uint64_t comm_id;
    uint8_t ticket[16];
} root_wire;

typedef struct __attribute__((packed)) {
    uint32_t magic, version;
    uint64_t comm_id;
    uint8_t ticket[16];
    uint32_t nranks, rank;
    uint32_t ip;
    uint16_t port, pad;
    char host_id[SOFT_HOST_ID_LEN];
    int32_t device;           /* the rank's device (aclrtSetDevice) on its host */
} join_msg;

typedef struct __attribute__((packed)) {
    uint32_t ip;
    uint16_t port, pad;
    char host_id[SOFT_HOST_ID_LEN];
    int32_t device;
} rank_entry;

typedef struct __attribute__((packed)) {
    uint32_t magic, version;
    int32_t status;
    uint32_t nranks;
} table_msg;

typedef struct {
    uint32_t engine, remote;
    int32_t protocol;
    ChannelHandle handle;
} comm_channel;

typedef struct soft_comm {
    uint64_t id;
    uint32_t rank, nranks;
    int32_t device;
    uint64_t comm_id;
    char name[COMM_NAME_MAX];
    EndpointHandle ep;
    HcommMemHandle memh;
    void *buf;
    uint64_t buf_size;
    rank_entry *ranks;
    comm_channel *chans;
    uint32_t nchans, chan_cap;
    ThreadHandle *threads;    /* handles this communicator gave out: its own threads and streams' aliases */
    uint32_t nthreads, thread_cap;
    int acquiring;            /* an HcclChannelAcquire runs (under g_lock) */
    int refs;
    struct soft_comm *next_comm; /* the live communicators, by name for HcommAcquireComm (under g_lock) */
} soft_comm;

static soft_comm *g_comms;    /* under g_lock */

/* HcommAcquireComm's holds, by communicator name (under g_lock). */
typedef struct comm_hold {
    struct comm_hold *next;
    pthread_t holder;
    char name[COMM_NAME_MAX];
} comm_hold;
static comm_hold *g_holds;

/* Communicator inits in flight per device of this process (under g_lock): CANN runs them one at a time per card. */
#define INIT_DEVICES 64
static int g_init_busy[INIT_DEVICES];

static soft_comm *comm_named(const char *name);
static void drop_hold(const char *name);
static int32_t comm_init(uint32_t nRanks, const root_wire *rootp, uint32_t rank, const HcclCommConfig *config,
                         int32_t dev, uint64_t bytes, HcclComm *comm);

/* ---- the host's address ---- */

static uint32_t if_address(void)
{
    soft_config cfg;
    soft_config_get(&cfg);
    struct in_addr a;
    if (cfg.if_ip[0] != '\0' && inet_pton(AF_INET, cfg.if_ip, &a) == 1) return a.s_addr;
    uint32_t found = htonl(INADDR_LOOPBACK);
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) == 0) {
        for (struct ifaddrs *i = all; i; i = i->ifa_next) {
            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) ||
                !(i->ifa_flags & IFF_UP))
                continue;
            found = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
            break;
        }
        freeifaddrs(all);
    }
    return found;
}

/* ---- the root: gathers one communicator's ranks, then ends ---- */

typedef struct {
    int listen_fd;
    uint64_t comm_id;
    uint8_t ticket[16];
    int64_t idle_deadline;    /* nobody joined by then: the listener ends */
} root_state;

static void send_table(int fd, int32_t status, const rank_entry *ranks, uint32_t n)
{
    table_msg t = {TABLE_MAGIC, COMM_VERSION, status, status == HCCL_SUCCESS ? n : 0};
    if (net_send_all(fd, &t, sizeof t) == 0 && status == HCCL_SUCCESS) net_send_all(fd, ranks, n * sizeof *ranks);
}

/* The ranks joined so far. */
typedef struct {
    uint32_t nranks, joined;
    int *fds;                 /* per rank: its connection, or -1 */
    rank_entry *ranks;
    int64_t deadline;
} root_tally;

/* A connection whose join is still coming, gathered without blocking: a silent or slow one delays no other. */
typedef struct {
    int fd;
    size_t have;
    join_msg j;
    int64_t since, deadline;  /* accepted; its whole join by then (the handshake timeout), else closed */
} root_joiner;

#define ROOT_MAX_JOINING SOFT_MAX_UNVERIFIED /* joins still coming at once; a new connection evicts the oldest */

/* A whole join on fd (blocking again, its send timeout set): kept as its rank's connection, or refused. */
static void root_take_join(root_state *rs, root_tally *t, int fd, const join_msg *j, int64_t now, int64_t connect_ms)
{
    if (j->magic != JOIN_MAGIC || j->version != COMM_VERSION || j->comm_id != rs->comm_id ||
        memcmp(j->ticket, rs->ticket, 16) != 0) {
        close(fd); /* not a rank of this communicator */
        return;
    }
    if (t->nranks == 0 && j->nranks > 0 && j->nranks <= COMM_MAX_RANKS) {
        t->fds = malloc(j->nranks * sizeof *t->fds);
        t->ranks = calloc(j->nranks, sizeof *t->ranks);
        if (t->fds == NULL || t->ranks == NULL) {
            free(t->fds);
            free(t->ranks);
            t->fds = NULL;
            t->ranks = NULL;
            send_table(fd, HCCL_E_MEMORY, NULL, 0);
            close(fd);
            return;
        }
        t->nranks = j->nranks;
        for (uint32_t r = 0; r < t->nranks; r++) t->fds[r] = -1;
        t->deadline = now + connect_ms; /* every rank joins within the timeout of the first */
    }
    if (j->nranks != t->nranks || j->rank >= t->nranks || t->fds[j->rank] >= 0) {
        send_table(fd, HCCL_E_PARA, NULL, 0); /* another size, a rank out of range, or one already here */
        close(fd);
        return;
    }
    t->fds[j->rank] = fd;
    t->ranks[j->rank] = (rank_entry){j->ip, j->port, 0, {0}, j->device};
    memcpy(t->ranks[j->rank].host_id, j->host_id, SOFT_HOST_ID_LEN);
    t->ranks[j->rank].host_id[SOFT_HOST_ID_LEN - 1] = '\0';
    t->joined++;
}

/* Reads what arrived of joiner w's join: 1 whole (then w->fd is blocking again), 0 more to come, -1 gone. */
static int root_read_join(root_joiner *w)
{
    while (w->have < sizeof w->j) {
        ssize_t n = recv(w->fd, (uint8_t *)&w->j + w->have, sizeof w->j - w->have, MSG_DONTWAIT);
        if (n == 0) return -1;
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        w->have += (size_t)n;
    }
    fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) & ~O_NONBLOCK); /* the table goes out with a blocking send */
    return 1;
}

static int entry_order(const void *a, const void *b)
{
    const rank_entry *x = *(const rank_entry *const *)a, *y = *(const rank_entry *const *)b;
    int c = strncmp(x->host_id, y->host_id, SOFT_HOST_ID_LEN);
    return c != 0 ? c : (x->device > y->device) - (x->device < y->device);
}

/* HCCL_E_PARA when two ranks are on one device of one host (CANN refuses such a communicator on every rank:
 * hicann/hcomm topoinfo_exchange_agent.cc:929), else HCCL_SUCCESS. */
static int32_t shared_device(const rank_entry *ranks, uint32_t n)
{
    const rank_entry **by = malloc(n * sizeof *by);
    if (by == NULL) return HCCL_E_MEMORY;
    for (uint32_t r = 0; r < n; r++) by[r] = &ranks[r];
    qsort(by, n, sizeof *by, entry_order);
    int32_t rc = HCCL_SUCCESS;
    for (uint32_t i = 1; i < n && rc == HCCL_SUCCESS; i++) {
        if (entry_order(&by[i - 1], &by[i]) != 0) continue;
        fprintf(stderr, "hcomm-soft: ranks %u and %u of a communicator are both on device %d of host %.*s: refused\n",
                (unsigned)(by[i - 1] - ranks), (unsigned)(by[i] - ranks), by[i]->device, SOFT_HOST_ID_LEN,
                by[i]->host_id);
        rc = HCCL_E_PARA;
    }
    free(by);
    return rc;
}

static void *root_main(void *arg)
{
    root_state *rs = arg;
    pthread_setname_np(pthread_self(), "hccl-root");
    soft_config cfg;
    soft_config_get(&cfg);
    memset(cfg.secret, 0, sizeof cfg.secret);
    int64_t handshake_ms =
        cfg.handshake_timeout_ms < cfg.connect_timeout_ms ? cfg.handshake_timeout_ms : cfg.connect_timeout_ms;
    root_tally t = {0, 0, NULL, NULL, rs->idle_deadline};
    root_joiner *joining = calloc(ROOT_MAX_JOINING, sizeof *joining);
    struct pollfd *pfd = calloc(ROOT_MAX_JOINING + 1, sizeof *pfd);
    uint32_t njoining = 0;
    int32_t verdict = joining != NULL && pfd != NULL ? HCCL_E_TIMEOUT : HCCL_E_MEMORY;
    while (verdict == HCCL_E_TIMEOUT) {
        if (t.nranks > 0 && t.joined == t.nranks) {
            verdict = shared_device(t.ranks, t.nranks);
            break;
        }
        int64_t now = soft_now_ms();
        if (now >= t.deadline) break;
        pfd[0] = (struct pollfd){rs->listen_fd, POLLIN, 0};
        for (uint32_t i = 0; i < njoining; i++) pfd[1 + i] = (struct pollfd){joining[i].fd, POLLIN, 0};
        int ready = poll(pfd, 1 + njoining, 50);
        now = soft_now_ms();
        if (ready <= 0) {
            for (uint32_t r = 0; r < t.nranks; r++) { /* a rank that gave up or died is no longer joined */
                struct pollfd q = {t.fds[r], POLLIN, 0};
                if (t.fds[r] >= 0 && poll(&q, 1, 0) > 0) {
                    close(t.fds[r]);
                    t.fds[r] = -1;
                    t.joined--;
                }
            }
        }
        for (uint32_t i = njoining; i-- > 0;) { /* from the end: a removed entry takes the last, already seen */
            root_joiner *w = &joining[i];
            int got = pfd[1 + i].revents ? root_read_join(w) : 0;
            if (got == 0 && now < w->deadline) continue;
            if (got == 1) root_take_join(rs, &t, w->fd, &w->j, now, cfg.connect_timeout_ms);
            else close(w->fd); /* gone, or no whole join within the handshake timeout */
            *w = joining[--njoining];
        }
        if (!(pfd[0].revents & POLLIN)) continue;
        int fd = accept4(rs->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) continue;
        net_set_timeout(fd, 5000);
        if (njoining == ROOT_MAX_JOINING) { /* the oldest gives way: a rank's join comes at once */
            uint32_t old = 0;
            for (uint32_t i = 1; i < njoining; i++)
                if (joining[i].since < joining[old].since) old = i;
            close(joining[old].fd);
            joining[old] = joining[--njoining];
        }
        joining[njoining++] = (root_joiner){fd, 0, {0}, now, now + handshake_ms};
    }
    for (uint32_t i = 0; i < njoining; i++) close(joining[i].fd);
    for (uint32_t r = 0; r < t.nranks; r++) {
        if (t.fds[r] < 0) continue;
        send_table(t.fds[r], verdict, t.ranks, t.nranks);
        close(t.fds[r]);
    }
    close(rs->listen_fd);
    free(joining);
    free(pfd);
    free(t.fds);
    free(t.ranks);
    free(rs);
    return NULL;
}

HCOMM_API HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
    if (rootInfo == NULL) return HCCL_E_PTR;
    if (acl_current_device() < 0) return HCCL_E_RUNTIME; /* aclrtSetDevice first, as on a card */
    soft_config cfg;
    soft_config_get(&cfg);
    root_state *rs = calloc(1, sizeof *rs);
    if (rs == NULL) return HCCL_E_MEMORY;
    uint32_t ip = if_address();
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = ip};
    socklen_t len = sizeof sa;
    rs->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rs->listen_fd < 0 || bind(rs->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(rs->listen_fd, 1024) != 0 || getsockname(rs->listen_fd, (struct sockaddr *)&sa, &len) != 0) {
        if (rs->listen_fd >= 0) close(rs->listen_fd);
        free(rs);
        return HCCL_E_TCP_CONNECT;
    }
    rs->comm_id = soft_random64();
    soft_random_bytes(rs->ticket, sizeof rs->ticket);
    rs->idle_deadline = soft_now_ms() + 2 * cfg.connect_timeout_ms;
    memset(rootInfo, 0, sizeof *rootInfo);
    root_wire w = {ROOT_MAGIC, COMM_VERSION, ip, ntohs(sa.sin_port), 0, rs->comm_id, {0}};
    memcpy(w.ticket, rs->ticket, 16);
    memcpy(rootInfo->internal, &w, sizeof w);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&th, &attr, root_main, rs) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
        close(rs->listen_fd);
        free(rs);
        return HCCL_E_INTERNAL;
    }
    return HCCL_SUCCESS;
}

/* ---- communicators ---- */

static soft_comm *comm_get_ref(HcclComm h)
{
    pthread_mutex_lock(&g_lock);
    soft_comm *c = handle_get((uint64_t)(uintptr_t)h, KIND_COMM);
    if (c) c->refs++;
    pthread_mutex_unlock(&g_lock);
    return c;
}

static void comm_put(soft_comm *c)
{
    pthread_mutex_lock(&g_lock);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&g_lock);
    if (!last) return;
    free(c->ranks);
    free(c->chans);
    free(c->threads);
    free(c);
}

/* The HCCL buffer's size in bytes: 2 x hcclBufferSize MB, or 2 x $HCCL_BUFFSIZE MB (default 200). */
static int32_t buffer_bytes(const HcclCommConfig *config, uint64_t *out)
{
    uint64_t mb = DEFAULT_BUFFSIZE_MB;
    if (config != NULL && config->hcclBufferSize != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET) {
        if (config->hcclBufferSize == 0) return HCCL_E_PARA;
        mb = config->hcclBufferSize;
    } else {
        const char *v = getenv("HCCL_BUFFSIZE");
        if (v != NULL && *v != '\0') {
            char *end = NULL;
            errno = 0;
            long long n = strtoll(v, &end, 10);
            if (errno != 0 || end == v || *end != '\0' || n < 1 || n > 0xFFFFFFFFLL) {
                fprintf(stderr, "hcomm-soft: HCCL_BUFFSIZE=%s is not a whole number of MB >= 1\n", v);
                return HCCL_E_PARA;
            }
            mb = (uint64_t)n;
        }
    }
    *out = 2 * (mb << 20);
    return HCCL_SUCCESS;
}

/* Joins at the root; on success fills c->ranks. */
static int32_t join_root(soft_comm *c, const root_wire *root, uint32_t ip, uint16_t port)
{
    soft_config cfg;
    soft_config_get(&cfg);
    int64_t deadline = soft_now_ms() + cfg.connect_timeout_ms;
    int fd = -1;
    while (fd < 0) { /* the root may not listen yet on a slow host: try again until the deadline */
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(root->port), .sin_addr.s_addr = root->ip};
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) break;
        if (fd >= 0) close(fd);
        fd = -1;
        if (soft_now_ms() >= deadline) return HCCL_E_TIMEOUT;
        usleep(20000);
    }
    join_msg j = {JOIN_MAGIC, COMM_VERSION, root->comm_id, {0}, c->nranks, c->rank, ip, port, 0, {0}, c->device};
    memcpy(j.ticket, root->ticket, 16);
    snprintf(j.host_id, sizeof j.host_id, "%s", soft_host_id());
    int32_t rc = net_send_all(fd, &j, sizeof j) == 0 ? HCCL_SUCCESS : HCCL_E_TCP_CONNECT;
    table_msg t = {0, 0, 0, 0};
    if (rc == HCCL_SUCCESS) {
        int64_t left = deadline - soft_now_ms() + 5000; /* the root decides at its own deadline: hear it */
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(left > 0 ? left : 0)) <= 0) rc = HCCL_E_TIMEOUT;
    }
    net_set_timeout(fd, 10000);
    if (rc == HCCL_SUCCESS && (net_recv_all(fd, &t, sizeof t) != 0 || t.magic != TABLE_MAGIC)) rc = HCCL_E_TIMEOUT;
    if (rc == HCCL_SUCCESS && t.status != HCCL_SUCCESS) rc = t.status;
    if (rc == HCCL_SUCCESS && t.nranks != c->nranks) rc = HCCL_E_INTERNAL;
    if (rc == HCCL_SUCCESS) {
        c->ranks = calloc(c->nranks, sizeof *c->ranks);
        if (c->ranks == NULL || net_recv_all(fd, c->ranks, c->nranks * sizeof *c->ranks) != 0) rc = HCCL_E_TIMEOUT;
    }
    close(fd);
    return rc;
}

/* Ends what a communicator holds: channels, threads, registration, endpoint, buffer. */
static void comm_release(soft_comm *c)
{
    for (uint32_t i = 0; i < c->nchans; i++) soft_channel_destroy(&c->chans[i].handle, 1);
    for (uint32_t i = 0; i < c->nthreads; i++) {
        pthread_mutex_lock(&g_lock);
        soft_thread *t = handle_get(c->threads[i], KIND_THREAD);
        if (t) handle_del(c->threads[i]);
        pthread_mutex_unlock(&g_lock);
        if (t == NULL) continue;
        if (t->comm == c->id) { /* its own: the worker stops */
            thread_stop(t);
            g_count.threads--;
        }
        thread_put(t);
    }
    if (c->memh) HcommMemUnreg(c->ep, c->memh);
    if (c->ep) HcommEndpointDestroy(c->ep);
    if (c->buf) device_free(c->buf);
}

HCOMM_API HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                                const HcclCommConfig *config, HcclComm *comm)
{
    if (rootInfo == NULL || comm == NULL) return HCCL_E_PTR;
    root_wire root;
    memcpy(&root, rootInfo->internal, sizeof root);
    if (root.magic != ROOT_MAGIC || root.version != COMM_VERSION) return HCCL_E_PARA;
    if (nRanks == 0 || nRanks > COMM_MAX_RANKS || rank >= nRanks) return HCCL_E_PARA;
    if (config != NULL && (config->size < offsetof(HcclCommConfig, hcclDeterministic) ||
                           config->magicWord != HCCL_COMM_CONFIG_MAGIC_WORD))
        return HCCL_E_PARA;
    int32_t dev = acl_current_device();
    if (dev < 0 || dev >= INIT_DEVICES) return HCCL_E_RUNTIME; /* aclrtSetDevice on this thread first */
    uint64_t bytes = 0;
    int32_t rc = buffer_bytes(config, &bytes);
    if (rc != HCCL_SUCCESS) return rc;
    /* [doc] HcclCommInitRootInfoConfig: concurrent inits from several threads on one card are not supported; soft
     * HComm refuses the second while the first runs (HCCL_E_AGAIN, as a second HcclChannelAcquire on one
     * communicator): the caller may try again once the first returned */
    pthread_mutex_lock(&g_lock);
    int busy = g_init_busy[dev];
    g_init_busy[dev] = 1;
    pthread_mutex_unlock(&g_lock);
    if (busy) {
        fprintf(stderr, "hcomm-soft: another communicator init runs on device %d in this process: HCCL_E_AGAIN\n",
                dev);
        return HCCL_E_AGAIN;
    }
    rc = comm_init(nRanks, &root, rank, config, dev, bytes, comm);
    pthread_mutex_lock(&g_lock);
    g_init_busy[dev] = 0;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* The init itself, with the device's init slot taken. */
static int32_t comm_init(uint32_t nRanks, const root_wire *rootp, uint32_t rank, const HcclCommConfig *config,
                         int32_t dev, uint64_t bytes, HcclComm *comm)
{
    root_wire root = *rootp;
    int32_t rc = HCCL_SUCCESS;
    soft_comm *c = calloc(1, sizeof *c);
    if (c == NULL) return HCCL_E_MEMORY;
    c->rank = rank;
    c->nranks = nRanks;
    c->device = dev;
    c->comm_id = root.comm_id;
    c->refs = 1;
    if (config != NULL && config->size >= offsetof(HcclCommConfig, hcclUdi) && config->hcclCommName[0] != '\0')
        snprintf(c->name, sizeof c->name, "%.*s", COMM_NAME_MAX - 1, config->hcclCommName);
    else
        snprintf(c->name, sizeof c->name, "soft-comm-%016llx", (unsigned long long)root.comm_id);
    rc = device_alloc(dev, bytes, &c->buf);
    if (rc != HCCL_SUCCESS) c->buf = NULL;
    c->buf_size = bytes;
    uint32_t ip = if_address();
    EndpointDesc ed;
    memset(&ed, 0xFF, sizeof ed);
    ed.protocol = COMM_PROTOCOL_ROCE;
    ed.commAddr.type = COMM_ADDR_TYPE_IP_V4;
    ed.commAddr.addr.s_addr = ip;
    ed.loc.locType = ENDPOINT_LOC_TYPE_HOST;
    if (rc == HCCL_SUCCESS) rc = soft_endpoint_create(&ed, &c->ep);
    if (rc == HCCL_SUCCESS) {
        CommMem m = {COMM_MEM_TYPE_DEVICE, c->buf, bytes};
        rc = soft_mem_reg(c->ep, "HcclBuffer", &m, &c->memh);
    }
    uint32_t port = 0;
    if (rc == HCCL_SUCCESS) rc = HcommEndpointGetListenPort(c->ep, &port);
    if (rc == HCCL_SUCCESS) rc = join_root(c, &root, ip, (uint16_t)port);
    if (rc == HCCL_SUCCESS) {
        pthread_mutex_lock(&g_lock);
        c->id = handle_put(KIND_COMM, c);
        if (c->id != 0) {
            c->next_comm = g_comms;
            g_comms = c;
        }
        pthread_mutex_unlock(&g_lock);
        if (c->id == 0) rc = HCCL_E_MEMORY;
    }
    if (rc != HCCL_SUCCESS) {
        comm_release(c);
        comm_put(c);
        return rc;
    }
    g_count.comms++;
    *comm = (HcclComm)(uintptr_t)c->id;
    return HCCL_SUCCESS;
}

HCOMM_API HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm)
{
    return HcclCommInitRootInfoConfig(nRanks, rootInfo, rank, NULL, comm);
}

HCOMM_API HcclResult HcclCommDestroy(HcclComm comm)
{
    pthread_mutex_lock(&g_lock);
    soft_comm *c = handle_get((uint64_t)(uintptr_t)comm, KIND_COMM);
    int32_t rc = c == NULL ? HCCL_E_PTR : c->acquiring ? HCCL_E_AGAIN : HCCL_SUCCESS;
    if (rc == HCCL_SUCCESS) {
        handle_del(c->id); /* no new call reaches it from now on */
        for (soft_comm **p = &g_comms; *p != NULL; p = &(*p)->next_comm)
            if (*p == c) {
                *p = c->next_comm;
                break;
            }
        if (comm_named(c->name) == NULL) drop_hold(c->name); /* its last communicator of that name: the hold ends */
    }
    pthread_mutex_unlock(&g_lock);
    if (rc != HCCL_SUCCESS) return rc;
    comm_release(c);
    g_count.comms--;
    comm_put(c);
    return HCCL_SUCCESS;
}

/* ---- HcommAcquireComm / HcommReleaseComm: one user of a communicator at a time ---- */

/* A live communicator named name, or NULL. Call with g_lock held. */
static soft_comm *comm_named(const char *name)
{
    for (soft_comm *c = g_comms; c != NULL; c = c->next_comm)
        if (strncmp(c->name, name, COMM_NAME_MAX) == 0) return c;
    return NULL;
}

/* The hold on name (and where it is linked), or NULL. Call with g_lock held. */
static comm_hold **hold_of(const char *name)
{
    for (comm_hold **p = &g_holds; *p != NULL; p = &(*p)->next)
        if (strncmp((*p)->name, name, COMM_NAME_MAX) == 0) return p;
    return NULL;
}

static void drop_hold(const char *name)
{
    comm_hold **p = hold_of(name);
    if (p == NULL) return;
    comm_hold *h = *p;
    *p = h->next;
    free(h);
}

/*
 * The lock around a use of a communicator (commId: its name, HcclGetCommName): HCCL's host scatter takes it around
 * each batch (hicann/hccl src/ops/scatter/algo/scatter_executor_base.cc:91) because a communicator's RoCE transport
 * keeps unlocked per-queue-pair state. It does not block: held by another OS thread, HCCL_E_AGAIN; by the caller
 * already, HCCL_E_PARA (not reentrant); no live communicator of that name, HCCL_E_NOT_FOUND. Soft HComm keys the
 * hold by name, so it covers every communicator of this process with that name (ranks of one communicator on
 * threads of one process share it). Data-plane calls do not check the hold.
 */
HCOMM_API int32_t HcommAcquireComm(const char *commId)
{
    if (commId == NULL) return HCCL_E_PTR;
    pthread_mutex_lock(&g_lock);
    int32_t rc = comm_named(commId) == NULL ? HCCL_E_NOT_FOUND : HCCL_SUCCESS;
    comm_hold **p = rc == HCCL_SUCCESS ? hold_of(commId) : NULL;
    if (p != NULL) rc = pthread_equal((*p)->holder, pthread_self()) ? HCCL_E_PARA : HCCL_E_AGAIN;
    comm_hold *h = rc == HCCL_SUCCESS && p == NULL ? calloc(1, sizeof *h) : NULL;
    if (rc == HCCL_SUCCESS && h == NULL) rc = HCCL_E_MEMORY;
    if (h != NULL) {
        h->holder = pthread_self();
        snprintf(h->name, sizeof h->name, "%.*s", COMM_NAME_MAX - 1, commId);
        h->next = g_holds;
        g_holds = h;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Ends the caller's hold: HCCL_E_PARA when it holds none on that communicator, HCCL_E_NOT_FOUND when there is no
 * live communicator of that name. */
HCOMM_API int32_t HcommReleaseComm(const char *commId)
{
    if (commId == NULL) return HCCL_E_PTR;
    pthread_mutex_lock(&g_lock);
    comm_hold **p = hold_of(commId);
    int32_t rc = comm_named(commId) == NULL ? HCCL_E_NOT_FOUND
                 : p == NULL || !pthread_equal((*p)->holder, pthread_self()) ? HCCL_E_PARA
                                                                             : HCCL_SUCCESS;
    if (rc == HCCL_SUCCESS) drop_hold(commId);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* What HcclGetRankId, HcclGetRankSize and HcclGetCommName answer; out must not be NULL. */
enum comm_field { FIELD_RANK, FIELD_SIZE, FIELD_NAME };

static HcclResult comm_field_get(HcclComm comm, enum comm_field f, void *out)
{
    if (out == NULL) return HCCL_E_PTR;
    soft_comm *c = comm_get_ref(comm);
    if (c == NULL) return HCCL_E_PTR;
    if (f == FIELD_RANK) *(uint32_t *)out = c->rank;
    else if (f == FIELD_SIZE) *(uint32_t *)out = c->nranks;
    else memcpy(out, c->name, COMM_NAME_MAX);
    comm_put(c);
    return HCCL_SUCCESS;
}

HCOMM_API HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank) { return comm_field_get(comm, FIELD_RANK, rank); }

HCOMM_API HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)
{
    return comm_field_get(comm, FIELD_SIZE, rankSize);
}

HCOMM_API HcclResult HcclGetCommName(HcclComm comm, char *commName) { return comm_field_get(comm, FIELD_NAME, commName); }

HCOMM_API HcclResult HcclGetHcclBuffer(HcclComm comm, void **buffer, uint64_t *size)
{
    if (buffer == NULL || size == NULL) return HCCL_E_PTR;
    soft_comm *c = comm_get_ref(comm);
    if (c == NULL) return HCCL_E_PTR;
    *buffer = c->buf;
    *size = c->buf_size;
    comm_put(c);
    return HCCL_SUCCESS;
}

/* ---- threads ---- */

static int32_t remember_thread(soft_comm *c, ThreadHandle h)
{
    pthread_mutex_lock(&g_lock);
    int32_t rc = HCCL_SUCCESS;
    if (c->nthreads == c->thread_cap) {
        uint32_t cap = c->thread_cap ? 2 * c->thread_cap : 8;
        ThreadHandle *n = realloc(c->threads, cap * sizeof *n);
        if (n == NULL) rc = HCCL_E_MEMORY;
        else {
            c->threads = n;
            c->thread_cap = cap;
        }
    }
    if (rc == HCCL_SUCCESS) c->threads[c->nthreads++] = h;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int thread_engine_ok(CommEngine engine)
{
    return engine == COMM_ENGINE_CPU || engine == COMM_ENGINE_CPU_TS || engine == COMM_ENGINE_AICPU_TS;
}

HCOMM_API HcclResult HcclThreadAcquire(HcclComm comm, CommEngine engine, uint32_t threadNum,
                                       uint32_t notifyNumPerThread, ThreadHandle *threads)
{
    if (threads == NULL) return HCCL_E_PTR;
    if (threadNum == 0 || threadNum > SOFT_MAX_THREADS || notifyNumPerThread > SOFT_MAX_NOTIFY) return HCCL_E_PARA;
    if (!thread_engine_ok(engine)) return HCCL_E_NOT_SUPPORT; /* AIV and CCU threads are not host threads */
    soft_comm *c = comm_get_ref(comm);
    if (c == NULL) return HCCL_E_PTR;
    int32_t rc = HCCL_SUCCESS;
    uint32_t made = 0;
    for (; made < threadNum && rc == HCCL_SUCCESS; made++) {
        soft_thread *t = thread_create(engine, 0);
        if (t == NULL) {
            rc = HCCL_E_MEMORY;
            break;
        }
        t->comm = c->id;
        t->notify_num = notifyNumPerThread;
        pthread_mutex_lock(&g_lock);
        t->id = handle_put(KIND_THREAD, t);
        pthread_mutex_unlock(&g_lock);
        if (t->id == 0 || remember_thread(c, t->id) != HCCL_SUCCESS) {
            if (t->id) {
                pthread_mutex_lock(&g_lock);
                handle_del(t->id);
                pthread_mutex_unlock(&g_lock);
            }
            thread_stop(t);
            thread_put(t);
            rc = HCCL_E_MEMORY;
            break;
        }
        g_count.threads++;
        threads[made] = t->id;
    }
    /* threads made before a failure stay the communicator's: they end with it, as CANN's do */
    comm_put(c);
    return rc;
}

HCOMM_API HcclResult HcclThreadAcquireWithStream(HcclComm comm, CommEngine engine, aclrtStream stream,
                                                 uint32_t notifyNum, ThreadHandle *thread)
{
    if (thread == NULL || stream == NULL) return HCCL_E_PTR;
    if (notifyNum > SOFT_MAX_NOTIFY) return HCCL_E_PARA;
    if (engine != COMM_ENGINE_CPU && engine != COMM_ENGINE_CPU_TS) return HCCL_E_NOT_SUPPORT; /* CCU: no such card */
    soft_comm *c = comm_get_ref(comm);
    if (c == NULL) return HCCL_E_PTR;
    soft_thread *t = stream_thread(stream);
    int32_t rc = t == NULL ? HCCL_E_PARA : HCCL_SUCCESS;
    uint64_t id = 0;
    if (rc == HCCL_SUCCESS) {
        pthread_mutex_lock(&g_lock);
        if (t->notify_num < notifyNum) t->notify_num = notifyNum;
        id = handle_put(KIND_THREAD, t); /* a second handle on the stream's thread: tasks go on the stream */
        if (id) t->refs++;
        pthread_mutex_unlock(&g_lock);
        rc = id && remember_thread(c, id) == HCCL_SUCCESS ? HCCL_SUCCESS : HCCL_E_MEMORY;
        if (rc != HCCL_SUCCESS && id) {
            pthread_mutex_lock(&g_lock);
            handle_del(id);
            t->refs--;
            pthread_mutex_unlock(&g_lock);
        }
    }
    if (t) thread_put(t);
    if (rc == HCCL_SUCCESS) *thread = id;
    comm_put(c);
    return rc;
}

/* ---- channels ---- */

static int32_t check_desc(const soft_comm *c, const HcclChannelDesc *d, const HcclChannelDesc *all, uint32_t i)
{
    if (d->header.magicWord != HCCL_CHANNEL_MAGIC_WORD || d->header.size < offsetof(HcclChannelDesc, memHandles))
        return HCCL_E_PARA; /* not from HcclChannelDescInit */
    if (d->remoteRank >= c->nranks || d->remoteRank == c->rank) return HCCL_E_PARA;
    if (d->notifyNum > HCCL_CHANNEL_NOTIFY_MAX) return HCCL_E_PARA;
    int32_t p = d->channelProtocol;
    if (p != COMM_PROTOCOL_HCCS && p != COMM_PROTOCOL_ROCE && p != COMM_PROTOCOL_HCCS_ONLY) return HCCL_E_NOT_SUPPORT;
    if (p != COMM_PROTOCOL_ROCE && strcmp(c->ranks[d->remoteRank].host_id, c->ranks[c->rank].host_id) != 0) {
        fprintf(stderr, "hcomm-soft: HCCS joins the cards of one server; rank %u and rank %u are on different hosts "
                        "(use ROCE)\n", c->rank, d->remoteRank);
        return HCCL_E_PARA;
    }
    for (uint32_t k = 0; k < i; k++)
        if (all[k].remoteRank == d->remoteRank && all[k].channelProtocol == p) return HCCL_E_PARA; /* repeated */
    return HCCL_SUCCESS;
}

static ChannelHandle cached_channel(const soft_comm *c, uint32_t engine, uint32_t remote, int32_t protocol)
{
    for (uint32_t i = 0; i < c->nchans; i++)
        if (c->chans[i].engine == engine && c->chans[i].remote == remote && c->chans[i].protocol == protocol)
            return c->chans[i].handle;
    return 0;
}

/* One endpoint channel to the peer's rank that exchanges the two HCCL buffers. */
static int32_t open_channel(soft_comm *c, CommEngine engine, const HcclChannelDesc *d, ChannelHandle *out)
{
    const rank_entry *peer = &c->ranks[d->remoteRank];
    char name[HCOMM_CHANNEL_NAME_MAX_LEN + 1];
    uint32_t lo = c->rank < d->remoteRank ? c->rank : d->remoteRank;
    uint32_t hi = c->rank < d->remoteRank ? d->remoteRank : c->rank;
    snprintf(name, sizeof name, "hccl/%016llx/%u-%u/e%d/p%d", (unsigned long long)c->comm_id, lo, hi, (int)engine,
             (int)d->channelProtocol);
    HcommChannelDesc h;
    memset(&h, 0xFF, sizeof h);
    h.header = (CommAbiHeader){HCOMM_CHANNEL_VERSION, HCOMM_CHANNEL_MAGIC_WORD, sizeof h, 0};
    memset(&h.remoteEndpoint, 0, sizeof h.remoteEndpoint);
    h.remoteEndpoint.protocol = COMM_PROTOCOL_ROCE;
    h.remoteEndpoint.commAddr.type = COMM_ADDR_TYPE_IP_V4;
    h.remoteEndpoint.commAddr.addr.s_addr = peer->ip;
    h.remoteEndpoint.loc.locType = ENDPOINT_LOC_TYPE_HOST;
    h.notifyNum = d->notifyNum;
    h.exchangeAllMems = false;
    h.memHandles = &c->memh;
    h.memHandleNum = 1;
    h.socket = NULL;
    int serve = c->rank < d->remoteRank;
    h.role = serve ? HCOMM_SOCKET_ROLE_SERVER : HCOMM_SOCKET_ROLE_CLIENT;
    h.port = serve ? 0 : peer->port;
    h.roceAttr.srcPortList = NULL;
    h.channelName = name;
    return soft_channel_create(c->ep, engine, &h, 1, out, c->id, d->channelProtocol == COMM_PROTOCOL_ROCE);
}

/* Waits until every channel of the list is ready; HCCL_E_TIMEOUT or HCCL_E_ROCE_CONNECT when one fails. */
static int32_t await_ready(const ChannelHandle *list, uint32_t n)
{
    int32_t *st = malloc(n * sizeof *st);
    if (st == NULL) return HCCL_E_MEMORY;
    int32_t rc = HCCL_E_AGAIN;
    while (rc == HCCL_E_AGAIN) {
        if (HcommChannelGetStatus(list, n, st) != HCCL_SUCCESS) {
            rc = HCCL_E_INTERNAL;
            break;
        }
        rc = HCCL_SUCCESS;
        for (uint32_t i = 0; i < n; i++) {
            if (st[i] == HCOMM_CHANNEL_STATUS_TIMEOUT) rc = HCCL_E_TIMEOUT;
            else if (st[i] != HCOMM_CHANNEL_STATUS_READY && st[i] != HCOMM_CHANNEL_STATUS_CONNECTING &&
                     rc == HCCL_SUCCESS)
                rc = HCCL_E_ROCE_CONNECT;
            else if (st[i] == HCOMM_CHANNEL_STATUS_CONNECTING && rc == HCCL_SUCCESS)
                rc = HCCL_E_AGAIN;
        }
        if (rc == HCCL_E_AGAIN) usleep(1000);
    }
    free(st);
    return rc;
}

HCOMM_API HcclResult HcclChannelAcquire(HcclComm comm, CommEngine engine, const HcclChannelDesc *channelDescs,
                                        uint32_t channelNum, ChannelHandle *channels)
{
    if (channelDescs == NULL || channels == NULL) return HCCL_E_PTR;
    if (channelNum == 0 || channelNum > HCOMM_CHANNEL_NUM_MAX) return HCCL_E_PARA;
    if (!thread_engine_ok(engine)) return HCCL_E_NOT_SUPPORT;
    soft_comm *c = comm_get_ref(comm);
    if (c == NULL) return HCCL_E_PTR;
    pthread_mutex_lock(&g_lock);
    int busy = c->acquiring; /* CANN: not to be called concurrently within one communicator */
    c->acquiring = 1;
    pthread_mutex_unlock(&g_lock);
    if (busy) {
        comm_put(c);
        return HCCL_E_AGAIN;
    }
    int32_t rc = HCCL_SUCCESS;
    for (uint32_t i = 0; i < channelNum && rc == HCCL_SUCCESS; i++) rc = check_desc(c, &channelDescs[i], channelDescs, i);
    ChannelHandle *fresh = rc == HCCL_SUCCESS ? calloc(channelNum, sizeof *fresh) : NULL;
    uint32_t nfresh = 0;
    if (rc == HCCL_SUCCESS && fresh == NULL) rc = HCCL_E_MEMORY;
    for (uint32_t i = 0; i < channelNum && rc == HCCL_SUCCESS; i++) {
        const HcclChannelDesc *d = &channelDescs[i];
        channels[i] = cached_channel(c, (uint32_t)engine, d->remoteRank, d->channelProtocol);
        if (channels[i] == 0 && (rc = open_channel(c, engine, d, &channels[i])) == HCCL_SUCCESS)
            fresh[nfresh++] = channels[i];
    }
    if (rc == HCCL_SUCCESS && nfresh > 0) rc = await_ready(fresh, nfresh);
    for (uint32_t k = 0; rc == HCCL_SUCCESS && k < nfresh; k++) { /* HCCS: the reader's own address for the peer */
        channel *ch = channel_get_ref(fresh[k]);
        if (ch == NULL) rc = HCCL_E_INTERNAL;
        else if (!ch->want_tcp) rc = channel_make_alias(ch);
        if (ch) channel_put(ch);
    }
    if (rc == HCCL_SUCCESS && nfresh > 0) {
        pthread_mutex_lock(&g_lock);
        if (c->nchans + nfresh > c->chan_cap) {
            uint32_t cap = (c->nchans + nfresh) * 2;
            comm_channel *n = realloc(c->chans, cap * sizeof *n);
            if (n == NULL) rc = HCCL_E_MEMORY;
            else {
                c->chans = n;
                c->chan_cap = cap;
            }
        }
        for (uint32_t i = 0, k = 0; rc == HCCL_SUCCESS && i < channelNum; i++) {
            if (k < nfresh && channels[i] == fresh[k]) {
                const HcclChannelDesc *d = &channelDescs[i];
                c->chans[c->nchans++] = (comm_channel){(uint32_t)engine, d->remoteRank, d->channelProtocol, fresh[k]};
                k++;
            }
        }
        pthread_mutex_unlock(&g_lock);
    }
    if (rc != HCCL_SUCCESS && nfresh > 0) soft_channel_destroy(fresh, nfresh); /* all or nothing */
    free(fresh);
    pthread_mutex_lock(&g_lock);
    c->acquiring = 0;
    pthread_mutex_unlock(&g_lock);
    comm_put(c);
    return rc;
}

HCOMM_API HcclResult HcclChannelDestroy(HcclComm comm, const ChannelHandle *channels, uint32_t channelNum)
{
    if (channels == NULL) return HCCL_E_PTR;
    /* CCU channels only (Atlas 350's CCU engine, which soft HComm has not): a communicator's channels end with it */
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API HcclResult HcclChannelGetHcclBuffer(HcclComm comm, ChannelHandle channel_handle, void **buffer,
                                              uint64_t *size)
{
    if (buffer == NULL || size == NULL) return HCCL_E_PTR;
    soft_comm *c = comm_get_ref(comm);
    if (c == NULL) return HCCL_E_PTR;
    channel *ch = channel_get_ref(channel_handle);
    int32_t rc = ch == NULL ? HCCL_E_NOT_FOUND : ch->comm != c->id ? HCCL_E_PARA
                                                 : ch->state != CH_READY || ch->nremote == 0 ? HCCL_E_ROCE_CONNECT
                                                                                              : HCCL_SUCCESS;
    if (rc == HCCL_SUCCESS) { /* HCCS: this end's own address for the peer's buffer; ROCE: the owner's */
        *buffer = (void *)(uintptr_t)(ch->alias_base ? ch->alias_base : ch->remote[0].addr);
        *size = ch->remote[0].size;
    }
    if (ch) channel_put(ch);
    comm_put(c);
    return rc;
}
