/*
 * Endpoints and their soft NIC listener: each endpoint listens on its IPv4 address at a library-assigned port.
 * The listener thread accepts handshakes, challenges the client with a nonce, gathers the client's hello without
 * blocking (every connection bounded by its deadlines, every hello by its declared size and the endpoint's
 * budget), verifies its proof of the shared secret and parks verified connections until the matching SERVER
 * channel claims them. What it refuses or drops, it logs.
 *
 * Unverified connections hold no thread, only a slot: at most SOFT_MAX_UNVERIFIED per endpoint and
 * SOFT_MAX_UNVERIFIED_PER_ADDR per source address (past either, a new connection takes the slot of the one silent
 * the longest), each with a whole hello due within the handshake timeout (handshake_timeout_ms, 10 s) of its accept
 * and no silence of SOFT_HELLO_MS in the middle.
 *
 * One listener thread per endpoint gathers and verifies hellos; the parked list is shared with the SERVER channels
 * that claim connections, under g_lock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "soft_wire.h"

static endpoint *g_endpoints;

endpoint *endpoint_get(EndpointHandle h) { return handle_get((uint64_t)(uintptr_t)h, KIND_ENDPOINT); }

void endpoint_wake(endpoint *ep)
{
    char c = 1;
    ssize_t n = write(ep->wake[1], &c, 1);
    (void)n;
}

void endpoints_revoke_fd(int fd)
{
    for (endpoint *ep = g_endpoints; ep; ep = ep->next_ep) endpoint_revoke_fd_locked(ep, fd);
}

void wire_proof(char role, const uint8_t server_nonce[16], const uint8_t client_nonce[16], const char *name,
                uint8_t out[32])
{
    soft_config cfg;
    soft_config_get(&cfg);
    static const char label[] = "hcomm-soft-handshake-v1";
    const void *parts[] = {cfg.secret, label, &role, server_nonce, client_nonce, name};
    size_t lens[] = {strlen(cfg.secret), sizeof label, 1, 16, 16, strlen(name)};
    soft_sha256(parts, lens, 6, out);
    memset(&cfg, 0, sizeof cfg);
}

int wire_proof_ok(const uint8_t a[32], const uint8_t b[32])
{
    uint8_t diff = 0;
    for (int i = 0; i < 32; i++) diff |= a[i] ^ b[i];
    return diff == 0;
}

void wire_fill_identity(hello_msg *h)
{
    snprintf(h->host_id, sizeof h->host_id, "%s", soft_host_id());
    h->pid = (uint32_t)getpid();
    h->start_time = soft_start_time((int)getpid());
    soft_config cfg;
    soft_config_get(&cfg);
    h->force_tcp = (uint32_t)cfg.force_tcp;
    memset(cfg.secret, 0, sizeof cfg.secret);
}

/* Tells a client why its hello is refused, if its socket takes the answer at once (the listener never blocks). */
static void refuse(int fd, uint32_t reason)
{
    hello_msg r;
    memset(&r, 0, sizeof r);
    r.magic = HELLO_MAGIC;
    r.version = WIRE_VERSION;
    r.kind = HELLO_REFUSE;
    r.refuse_reason = reason;
    net_send_flags(fd, &r, sizeof r, MSG_DONTWAIT);
}

/* verb: "refused" (the client was told why) or "dropped" */
static void log_drop(const endpoint *ep, const char *verb, const char *peer, const char *why)
{
    char me[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &ep->ip, me, sizeof me);
    wire_log("endpoint %s:%u %s the connection from %s: %s", me, ep->listen_port, verb, peer, why);
}

/* When a connection whose hello is still coming last showed life: its latest bytes, else its accept. */
static int64_t last_seen(const parked_conn *pc)
{
    return pc->rx.last_ms > pc->accepted_ms ? pc->rx.last_ms : pc->accepted_ms;
}

/* a has been silent longer than b (of two seen in the same millisecond, the one accepted first) */
static int quieter(const parked_conn *a, const parked_conn *b)
{
    return last_seen(a) != last_seen(b) ? last_seen(a) < last_seen(b) : a->seq < b->seq;
}

/* Caller holds g_lock. Makes room for a connection from addr among those whose hello is still coming: at most
 * SOFT_MAX_UNVERIFIED_PER_ADDR from one address and SOFT_MAX_UNVERIFIED in all; the one silent the longest gives way
 * (marked; the reaper closes it). A peer's real hello comes within milliseconds of its connection, so what gives way
 * is an idle or trickling connection, but for a flood of new ones faster than that. */
static void make_room(endpoint *ep, uint32_t addr)
{
    uint32_t all = 0, same = 0;
    parked_conn *oldest = NULL, *oldest_here = NULL;
    for (parked_conn *pc = ep->parked; pc; pc = pc->next) {
        if (pc->hello_ok || pc->deadline_ms == 0) continue;
        all++;
        if (oldest == NULL || quieter(pc, oldest)) oldest = pc;
        if (pc->addr != addr) continue;
        same++;
        if (oldest_here == NULL || quieter(pc, oldest_here)) oldest_here = pc;
    }
    parked_conn *out = NULL;
    if (same >= SOFT_MAX_UNVERIFIED_PER_ADDR) {
        out = oldest_here;
        out->evicted = "the silent longest of its address's hellos still coming, at the address's bound";
    } else if (all >= SOFT_MAX_UNVERIFIED) {
        out = oldest;
        out->evicted = "the silent longest of the hellos still coming, at the endpoint's bound";
    }
    if (out != NULL) out->deadline_ms = 0; /* closed by the reaper, which logs why */
}

static void accept_one(endpoint *ep)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    int fd = accept4(ep->listen_fd, (struct sockaddr *)&sa, &salen, SOCK_CLOEXEC);
    if (fd < 0) return;
    soft_config cfg;
    soft_config_get(&cfg);
    memset(cfg.secret, 0, sizeof cfg.secret);
    parked_conn *pc = calloc(1, sizeof *pc);
    if (pc == NULL) {
        close(fd);
        return;
    }
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    snprintf(pc->peer, sizeof pc->peer, "%s:%u", ip, ntohs(sa.sin_port));
    net_set_timeout(fd, 5000); /* for the SERVER channel's blocking answer; the listener itself never blocks */
    int one = 1; /* small answers of the soft NIC must not wait for delayed ACKs */
    setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
    nonce_msg n = {NONCE_MAGIC, WIRE_VERSION, {0}};
    soft_random_bytes(n.nonce, sizeof n.nonce);
    if (net_send_flags(fd, &n, sizeof n, MSG_DONTWAIT) != 0) {
        close(fd);
        free(pc);
        return;
    }
    pc->fd = fd;
    pc->addr = sa.sin_addr.s_addr;
    memcpy(pc->nonce, n.nonce, sizeof pc->nonce);
    int64_t now = soft_now_ms();
    pc->accepted_ms = now;
    pc->seq = ep->accepted++;
    pc->deadline_ms = now + cfg.connect_timeout_ms;
    pc->hello_deadline_ms =
        now + (cfg.handshake_timeout_ms < cfg.connect_timeout_ms ? cfg.handshake_timeout_ms : cfg.connect_timeout_ms);
    pthread_mutex_lock(&g_lock);
    make_room(ep, pc->addr);
    pc->next = ep->parked;
    ep->parked = pc;
    pthread_mutex_unlock(&g_lock);
}

/* Takes what has arrived of a parked connection's hello, without blocking; once it is whole, verifies it and
 * drops the connection when it fails. A slow or silent client thus delays no other handshake. */
static void read_parked(endpoint *ep, parked_conn *pc, int64_t now)
{
    const char *why = NULL;
    int v = hello_rx_read(&pc->rx, pc->fd, &ep->hello_budget, now, &why);
    if (v == WIRE_MORE) return; /* the reaper bounds the wait */
    hello_msg *h = v == WIRE_OK ? hello_rx_take(&pc->rx, &ep->hello_budget) : NULL;
    uint32_t reason = v == WIRE_GONE ? 0 : REFUSE_MALFORMED;
    if (h != NULL) {
        char extra; /* a client waits for the answer to its hello before it sends anything more */
        if (recv(pc->fd, &extra, 1, MSG_PEEK | MSG_DONTWAIT) > 0) why = "bytes after its hello";
        else reason = wire_verify_client_hello(h, pc->nonce, &why);
    }
    int ok = h != NULL && why == NULL;
    pthread_mutex_lock(&g_lock);
    if (ok) {
        pc->hello = h;
        pc->hello_ok = 1;
    } else {
        free(h);
        hello_rx_free(&pc->rx, &ep->hello_budget);
        pc->deadline_ms = 0; /* reaped below */
    }
    pthread_mutex_unlock(&g_lock);
    if (!ok) {
        if (reason != 0) refuse(pc->fd, reason);
        log_drop(ep, reason != 0 ? "refused" : "dropped", pc->peer, why);
    }
}

/* Drops connections past their deadline: no whole hello within the handshake timeout (10 s unless configured,
 * never more than the connect timeout), a hello whose bytes stopped for SOFT_HELLO_MS, a verified hello no SERVER
 * channel claimed within the connect timeout; and those marked dropped (deadline 0) by read_parked or make_room. */
static void reap_parked(endpoint *ep, int64_t now)
{
    parked_conn *gone = NULL;
    pthread_mutex_lock(&g_lock);
    for (parked_conn **pp = &ep->parked; *pp;) {
        parked_conn *pc = *pp;
        int slow = !pc->hello_ok && pc->rx.last_ms != 0 && now - pc->rx.last_ms >= SOFT_HELLO_MS;
        int late = !pc->hello_ok && now >= pc->hello_deadline_ms;
        if (pc->deadline_ms <= now || slow || late) {
            *pp = pc->next;
            pc->next = gone;
            gone = pc;
        } else {
            pp = &pc->next;
        }
    }
    pthread_mutex_unlock(&g_lock);
    while (gone != NULL) {
        parked_conn *pc = gone;
        gone = pc->next;
        char why[128];
        if (pc->evicted != NULL)
            snprintf(why, sizeof why, "%s", pc->evicted);
        else if (pc->hello_ok)
            snprintf(why, sizeof why, "no channel claimed its hello within the connect timeout");
        else if (pc->rx.last_ms != 0 && now - pc->rx.last_ms >= SOFT_HELLO_MS)
            snprintf(why, sizeof why, "its hello stopped for %d s before it was whole", SOFT_HELLO_MS / 1000);
        else
            snprintf(why, sizeof why, "%s within the handshake timeout (%lld ms)",
                     pc->rx.last_ms == 0 ? "no hello" : "its hello was not whole",
                     (long long)(pc->hello_deadline_ms - pc->accepted_ms));
        if (pc->deadline_ms != 0 || pc->evicted != NULL) log_drop(ep, "dropped", pc->peer, why); /* 0: logged */
        close(pc->fd);
        hello_rx_free(&pc->rx, &ep->hello_budget);
        free(pc->hello);
        free(pc);
    }
}

static void *nic_main(void *arg)
{
    endpoint *ep = arg;
    pthread_setname_np(pthread_self(), "hcomm-nic"); /* visible in top -H, /proc and profilers */
    enum { MAXP = SOFT_MAX_UNVERIFIED + 2 };
    struct pollfd pfd[MAXP];
    parked_conn *who[MAXP];
    for (;;) {
        int n = 2;
        pfd[0] = (struct pollfd){ep->wake[0], POLLIN, 0};
        pthread_mutex_lock(&g_lock);
        int stopping = ep->stopping;
        for (parked_conn *pc = ep->parked; pc && n < MAXP; pc = pc->next) {
            if (pc->hello_ok || pc->deadline_ms == 0) continue;
            who[n] = pc;
            pfd[n++] = (struct pollfd){pc->fd, POLLIN, 0};
        }
        pthread_mutex_unlock(&g_lock);
        if (stopping) return NULL;
        /* a new connection is always taken: with SOFT_MAX_UNVERIFIED hellos still coming, the idlest gives way */
        pfd[1] = (struct pollfd){ep->listen_fd, POLLIN, 0};
        if (poll(pfd, (nfds_t)n, 500) < 0 && errno != EINTR) return NULL;
        if (pfd[0].revents) {
            char buf[64];
            ssize_t r = read(ep->wake[0], buf, sizeof buf);
            (void)r;
        }
        /* only this thread removes parked connections that are not yet verified, and only in reap_parked */
        int64_t now = soft_now_ms();
        for (int i = 2; i < n; i++)
            if (pfd[i].revents) read_parked(ep, who[i], now);
        if (pfd[1].revents & POLLIN) accept_one(ep);
        reap_parked(ep, soft_now_ms());
    }
}

static int make_state_table(endpoint *ep)
{
    size_t len = SOFT_STATE_SLOTS * sizeof(uint64_t);
    ep->state_fd = memfd_create("hcomm-soft-state", MFD_CLOEXEC);
    if (ep->state_fd < 0) return -1;
    if (ftruncate(ep->state_fd, (off_t)len) != 0) return -1;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ep->state_fd, 0);
    if (p == MAP_FAILED) return -1;
    ep->state = p;
    return 0;
}

static void endpoint_free(endpoint *ep)
{
    if (ep->listen_fd >= 0) close(ep->listen_fd);
    if (ep->wake[0] >= 0) close(ep->wake[0]);
    if (ep->wake[1] >= 0) close(ep->wake[1]);
    if (ep->state) munmap((void *)ep->state, SOFT_STATE_SLOTS * sizeof(uint64_t));
    if (ep->state_fd >= 0) close(ep->state_fd);
    free(ep);
}

HCOMM_API HcommResult HcommEndpointCreate(const EndpointDesc *desc, EndpointHandle *endpointHandle)
{
    if (desc == NULL || endpointHandle == NULL) return HCCL_E_PTR;
    int32_t allowed = soft_atlas350_only(); /* the endpoint API is Atlas 350's */
    if (allowed != HCCL_SUCCESS) return allowed;
    return soft_endpoint_create(desc, endpointHandle);
}

int32_t soft_endpoint_create(const EndpointDesc *desc, EndpointHandle *endpointHandle)
{
    if (desc->loc.locType != ENDPOINT_LOC_TYPE_HOST && desc->loc.locType != ENDPOINT_LOC_TYPE_DEVICE)
        return HCCL_E_PARA;
    if (desc->loc.locType == ENDPOINT_LOC_TYPE_DEVICE) return HCCL_E_NOT_SUPPORT; /* no NPU in software */
    if (desc->protocol != COMM_PROTOCOL_ROCE || desc->commAddr.type != COMM_ADDR_TYPE_IP_V4)
        return HCCL_E_NOT_SUPPORT;
    soft_init();
    endpoint *ep = calloc(1, sizeof *ep);
    if (ep == NULL) return HCCL_E_MEMORY;
    ep->listen_fd = ep->state_fd = ep->wake[0] = ep->wake[1] = -1;
    ep->desc = *desc;
    ep->ip = desc->commAddr.addr.s_addr;
    ep->hello_budget = SOFT_HELLO_BUDGET;

    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = ep->ip};
    socklen_t salen = sizeof sa;
    int one = 1;
    ep->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ep->listen_fd < 0 || setsockopt(ep->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(ep->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ep->listen_fd, 512) != 0 ||
        getsockname(ep->listen_fd, (struct sockaddr *)&sa, &salen) != 0 || pipe2(ep->wake, O_CLOEXEC) != 0 ||
        make_state_table(ep) != 0) {
        endpoint_free(ep);
        return HCCL_E_SYSCALL;
    }
    ep->listen_port = ntohs(sa.sin_port);
    pthread_mutex_lock(&g_lock);
    ep->id = handle_put(KIND_ENDPOINT, ep);
    if (ep->id == 0 || pthread_create(&ep->nic, NULL, nic_main, ep) != 0) {
        if (ep->id) handle_del(ep->id);
        pthread_mutex_unlock(&g_lock);
        endpoint_free(ep);
        return HCCL_E_MEMORY;
    }
    ep->next_ep = g_endpoints;
    g_endpoints = ep;
    pthread_mutex_unlock(&g_lock);
    g_count.endpoints++;
    *endpointHandle = (EndpointHandle)(uintptr_t)ep->id;
    return HCCL_SUCCESS;
}

HCOMM_API HcommResult HcommEndpointDestroy(EndpointHandle endpointHandle)
{
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpointHandle);
    if (ep == NULL || ep->stopping) {
        pthread_mutex_unlock(&g_lock);
        return HCCL_E_NOT_FOUND;
    }
    if (ep->channels > 0) { /* channels still use its memory and listener */
        pthread_mutex_unlock(&g_lock);
        return HCCL_E_AGAIN;
    }
    ep->stopping = 1;
    handle_del(ep->id);
    for (endpoint **pp = &g_endpoints; *pp; pp = &(*pp)->next_ep) {
        if (*pp == ep) {
            *pp = ep->next_ep;
            break;
        }
    }
    endpoint_wake(ep);
    pthread_mutex_unlock(&g_lock);
    pthread_join(ep->nic, NULL);
    pthread_mutex_lock(&g_lock);
    while (ep->parked) {
        parked_conn *pc = ep->parked;
        ep->parked = pc->next;
        close(pc->fd);
        hello_rx_free(&pc->rx, NULL);
        free(pc->hello);
        free(pc);
    }
    endpoint_drop_regions(ep);
    endpoint_drop_imports(ep);
    pthread_mutex_unlock(&g_lock);
    endpoint_free(ep);
    g_count.endpoints--;
    return HCCL_SUCCESS;
}

HCOMM_API HcommResult HcommEndpointGetListenPort(EndpointHandle endpointHandle, uint32_t *port)
{
    if (port == NULL) return HCCL_E_PTR;
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpointHandle);
    if (ep != NULL) *port = ep->listen_port;
    pthread_mutex_unlock(&g_lock);
    return ep != NULL ? HCCL_SUCCESS : HCCL_E_NOT_FOUND;
}
