/*
 * Endpoints and their soft NIC listener: each endpoint listens on its IPv4 address at a library-assigned port.
 * The listener thread accepts handshakes, challenges the client with a nonce, verifies the client's proof of
 * the shared secret and parks verified connections until the matching SERVER channel claims them.
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
    snprintf(h->boot_id, sizeof h->boot_id, "%s", soft_boot_id());
    h->pid = (uint32_t)getpid();
    h->start_time = soft_start_time((int)getpid());
    soft_config cfg;
    soft_config_get(&cfg);
    h->force_tcp = (uint32_t)cfg.force_tcp;
    memset(cfg.secret, 0, sizeof cfg.secret);
}

/* A whole hello from a blocking socket (bounded by its receive timeout); NULL when malformed or cut. */
hello_msg *wire_recv_hello(int fd)
{
    hello_msg head;
    if (net_recv_all(fd, &head, sizeof head) != 0) return NULL;
    if (head.magic != HELLO_MAGIC || head.version != WIRE_VERSION || head.nregions > SOFT_STATE_SLOTS) return NULL;
    size_t body = (size_t)head.nregions * sizeof(wire_region);
    hello_msg *h = malloc(sizeof head + body);
    if (h == NULL) return NULL;
    *h = head;
    h->name[sizeof h->name - 1] = '\0';
    h->boot_id[sizeof h->boot_id - 1] = '\0';
    if (body > 0 && net_recv_all(fd, h->regions, body) != 0) {
        free(h);
        return NULL;
    }
    return h;
}

static void refuse(int fd, uint32_t reason)
{
    hello_msg r;
    memset(&r, 0, sizeof r);
    r.magic = HELLO_MAGIC;
    r.version = WIRE_VERSION;
    r.kind = HELLO_REFUSE;
    r.refuse_reason = reason;
    net_send_all(fd, &r, sizeof r);
}

static void accept_one(endpoint *ep)
{
    int fd = accept4(ep->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    soft_config cfg;
    soft_config_get(&cfg);
    parked_conn *pc = calloc(1, sizeof *pc);
    if (pc == NULL) {
        close(fd);
        return;
    }
    net_set_timeout(fd, 5000);
    int one = 1; /* small answers of the soft NIC must not wait for delayed ACKs */
    setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
    nonce_msg n = {NONCE_MAGIC, WIRE_VERSION, {0}};
    soft_random_bytes(n.nonce, sizeof n.nonce);
    if (net_send_all(fd, &n, sizeof n) != 0) {
        close(fd);
        free(pc);
        return;
    }
    pc->fd = fd;
    memcpy(pc->nonce, n.nonce, sizeof pc->nonce);
    pc->deadline_ms = soft_now_ms() + cfg.connect_timeout_ms;
    pthread_mutex_lock(&g_lock);
    pc->next = ep->parked;
    ep->parked = pc;
    pthread_mutex_unlock(&g_lock);
}

/* Reads and verifies the client's hello of a parked connection; drops the connection when it fails. */
static void verify_parked(endpoint *ep, parked_conn *pc)
{
    hello_msg *h = wire_recv_hello(pc->fd);
    int ok = h != NULL && h->kind == HELLO_CLIENT;
    if (ok) {
        uint8_t want[32];
        wire_proof('C', pc->nonce, h->nonce, h->name, want);
        if (!wire_proof_ok(want, h->proof)) {
            refuse(pc->fd, REFUSE_AUTH);
            ok = 0;
        }
    }
    pthread_mutex_lock(&g_lock);
    if (ok) {
        pc->hello = h;
        pc->hello_ok = 1;
    } else {
        free(h);
        pc->deadline_ms = 0; /* reaped below */
    }
    pthread_mutex_unlock(&g_lock);
}

static void reap_parked(endpoint *ep, int64_t now)
{
    pthread_mutex_lock(&g_lock);
    for (parked_conn **pp = &ep->parked; *pp;) {
        parked_conn *pc = *pp;
        if (pc->deadline_ms <= now) {
            *pp = pc->next;
            close(pc->fd);
            free(pc->hello);
            free(pc);
        } else {
            pp = &pc->next;
        }
    }
    pthread_mutex_unlock(&g_lock);
}

static void *nic_main(void *arg)
{
    endpoint *ep = arg;
    pthread_setname_np(pthread_self(), "hcomm-nic"); /* visible in top -H, /proc and profilers */
    enum { MAXP = 256 };
    struct pollfd pfd[MAXP];
    parked_conn *who[MAXP];
    for (;;) {
        int n = 0;
        pfd[n++] = (struct pollfd){ep->wake[0], POLLIN, 0};
        pfd[n++] = (struct pollfd){ep->listen_fd, POLLIN, 0};
        pthread_mutex_lock(&g_lock);
        int stopping = ep->stopping;
        for (parked_conn *pc = ep->parked; pc && n < MAXP; pc = pc->next) {
            if (pc->hello_ok) continue;
            who[n] = pc;
            pfd[n++] = (struct pollfd){pc->fd, POLLIN, 0};
        }
        pthread_mutex_unlock(&g_lock);
        if (stopping) return NULL;
        if (poll(pfd, (nfds_t)n, 500) < 0 && errno != EINTR) return NULL;
        if (pfd[0].revents) {
            char buf[64];
            ssize_t r = read(ep->wake[0], buf, sizeof buf);
            (void)r;
        }
        if (pfd[1].revents & POLLIN) accept_one(ep);
        /* only this thread removes parked connections that are not yet verified */
        for (int i = 2; i < n; i++)
            if (pfd[i].revents) verify_parked(ep, who[i]);
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
