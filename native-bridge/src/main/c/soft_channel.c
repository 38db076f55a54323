/*
 * Channels: creation with the real descriptor normalisation, a GetStatus-driven handshake (connect, nonce
 * challenge, hello with the proof of the shared secret and the region list, reply) and atomic bulk destroy.
 * Channel metadata is under g_lock; the handshake advances on the thread that calls GetStatus, holding a reference,
 * with its socket I/O outside the lock and never blocking on a peer that sends part of a message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "soft_wire.h"

static int engine_supported(int engine)
{
    return engine == COMM_ENGINE_CPU || engine == COMM_ENGINE_CPU_TS || engine == COMM_ENGINE_AICPU_TS;
}

/* The library's own defaults (HcommChannelDescInit), then the caller's bytes after the header (§2.4). */
static int normalise(const HcommChannelDesc *in, HcommChannelDesc *out)
{
    if (in->header.size < sizeof(CommAbiHeader) || in->header.magicWord != HCOMM_CHANNEL_MAGIC_WORD)
        return HCCL_E_PARA;
    memset(out, 0xFF, sizeof *out);
    out->header = (CommAbiHeader){HCOMM_CHANNEL_VERSION, HCOMM_CHANNEL_MAGIC_WORD, sizeof *out, 0};
    out->notifyNum = 0;
    out->exchangeAllMems = false;
    out->memHandles = NULL;
    out->memHandleNum = 0;
    out->socket = NULL;
    out->role = HCOMM_SOCKET_ROLE_RESERVED;
    out->port = 0;
    out->roceAttr.srcPortList = NULL;
    out->channelName = NULL;
    size_t n = in->header.size < sizeof *out ? in->header.size : sizeof *out;
    memcpy((uint8_t *)out + sizeof(CommAbiHeader), (const uint8_t *)in + sizeof(CommAbiHeader),
           n - sizeof(CommAbiHeader));
    out->header.version = in->header.version;
    if (in->header.version < 4) {
        out->channelName = NULL;
        out->roceAttr.srcPortList = NULL;
    }
    if (out->channelName == (const char *)(intptr_t)-1) out->channelName = NULL;
    if (out->channelName != NULL && strnlen(out->channelName, HCOMM_CHANNEL_NAME_MAX_LEN + 1) > HCOMM_CHANNEL_NAME_MAX_LEN)
        return HCCL_E_PARA;
    return HCCL_SUCCESS;
}

static int validate(endpoint *ep, const HcommChannelDesc *d)
{
    const EndpointDesc *r = &d->remoteEndpoint;
    if (r->loc.locType != ENDPOINT_LOC_TYPE_HOST || r->protocol != COMM_PROTOCOL_ROCE ||
        r->commAddr.type != COMM_ADDR_TYPE_IP_V4)
        return HCCL_E_NOT_SUPPORT;
    if (d->socket != NULL) return HCCL_E_NOT_SUPPORT; /* pre-created sockets are not emulated */
    if (d->role != HCOMM_SOCKET_ROLE_RESERVED && d->role != HCOMM_SOCKET_ROLE_CLIENT &&
        d->role != HCOMM_SOCKET_ROLE_SERVER)
        return HCCL_E_PARA;
    if (!d->exchangeAllMems) {
        if (d->memHandles == NULL) return HCCL_E_PTR;
        for (uint32_t i = 0; i < d->memHandleNum; i++) {
            mem_handle *h = handle_get((uint64_t)(uintptr_t)d->memHandles[i], KIND_MEM);
            if (h == NULL || h->ep != ep) return HCCL_E_NOT_FOUND;
        }
    }
    return HCCL_SUCCESS;
}

static void snap_region(region_info *out, const registration *r, uint64_t addr, uint64_t size)
{
    out->addr = addr;
    out->size = size;
    out->cookie = r->cookie;
    out->slot = r->slot;
    out->type = r->type;
    out->memfd = r->memfd;
    out->memfd_off = r->memfd_off + (addr - r->addr);
    out->host_delta = r->host_delta;
    memcpy(out->tag, r->tag, sizeof out->tag);
}

/* Caller holds g_lock. The memory this end exposes: fixed now, as real HComm exchanges it at set-up. */
static int snapshot_local(endpoint *ep, const HcommChannelDesc *d, channel *ch)
{
    uint32_t n = 0;
    if (d->exchangeAllMems) {
        for (registration *r = ep->regs; r; r = r->next) n += r->cookie != 0;
    } else {
        n = d->memHandleNum;
    }
    ch->local = calloc(n ? n : 1, sizeof *ch->local);
    if (ch->local == NULL) return -1;
    if (d->exchangeAllMems) {
        for (registration *r = ep->regs; r; r = r->next)
            if (r->cookie != 0) snap_region(&ch->local[ch->nlocal++], r, r->addr, r->size);
    } else {
        for (uint32_t i = 0; i < n; i++) {
            mem_handle *h = handle_get((uint64_t)(uintptr_t)d->memHandles[i], KIND_MEM);
            snap_region(&ch->local[ch->nlocal++], h->reg, h->addr, h->size);
        }
    }
    return 0;
}

static void channel_free(channel *ch)
{
    if (ch->alias_base != 0) munmap((void *)(uintptr_t)ch->alias_base, ch->alias_size);
    for (uint32_t i = 0; ch->maps && i < ch->nremote; i++)
        if (ch->maps[i].base) munmap(ch->maps[i].base, ch->maps[i].len);
    if (ch->peer_state) munmap((void *)ch->peer_state, SOFT_STATE_SLOTS * sizeof(uint64_t));
    if (ch->pidfd >= 0) close(ch->pidfd);
    if (ch->fd >= 0) close(ch->fd);
    if (ch->zc_head != NULL) channel_release_sends(ch); /* the socket is closed: the kernel reads no page of them */
    pthread_mutex_destroy(&ch->wlock);
    pthread_mutex_destroy(&ch->pend_mu);
    pthread_mutex_destroy(&ch->srv_mu);
    pthread_cond_destroy(&ch->srv_cv);
    pthread_cond_destroy(&ch->srv_room_cv);
    pthread_cond_destroy(&ch->window_cv);
    pthread_cond_destroy(&ch->notify_cv);
    hello_rx_free(&ch->hrx, NULL);
    free(ch->maps);
    free(ch->local);
    free(ch->remote);
    free(ch);
}

channel *channel_get_ref(ChannelHandle h)
{
    pthread_mutex_lock(&g_lock);
    channel *ch = handle_get(h, KIND_CHANNEL);
    if (ch) ch->refs++;
    pthread_mutex_unlock(&g_lock);
    return ch;
}

void channel_ref(channel *ch)
{
    pthread_mutex_lock(&g_lock);
    ch->refs++;
    pthread_mutex_unlock(&g_lock);
}

void channel_put(channel *ch)
{
    pthread_mutex_lock(&g_lock);
    int last = --ch->refs == 0;
    pthread_mutex_unlock(&g_lock);
    if (last) channel_free(ch);
}

/* $HCOMM_SOFT_ROCE_LAND_DELAY_MS: how long after its post a read over a communicator's ROCE channel lands (whole ms,
 * 0..600000; default 0: a read completes on its stream when its bytes landed). */
static int64_t land_delay_ms(void)
{
    const char *v = getenv("HCOMM_SOFT_ROCE_LAND_DELAY_MS");
    if (v == NULL || *v == '\0') return 0;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || n < 0 || n > 600000) {
        fprintf(stderr, "hcomm-soft: HCOMM_SOFT_ROCE_LAND_DELAY_MS=%s is not a whole number of ms in 0..600000; "
                        "using 0\n", v);
        return 0;
    }
    return n;
}

/* $HCOMM_SOFT_ROCE_READ_FENCE: "0" lets a channel notify record after a delayed read over a communicator's ROCE
 * channel go without waiting for the read to land, as CANN's host CPU_TS path does; anything else (default "1")
 * keeps soft HComm's fence. */
static int read_fence(void)
{
    const char *v = getenv("HCOMM_SOFT_ROCE_READ_FENCE");
    return !(v != NULL && strcmp(v, "0") == 0);
}

/* $HCOMM_SOFT_NOTIFY_FLAG: "1" makes a notify a flag, as CANN's is (a record writes 1, a wait clears it: two records
 * before one wait count once); anything else (default "0") counts records, each satisfying one wait. */
int soft_notify_flag(void)
{
    const char *v = getenv("HCOMM_SOFT_NOTIFY_FLAG");
    return v != NULL && strcmp(v, "1") == 0;
}

/* Reserves this end's own address range for the peer's HCCL buffer (the only region a communicator's channel
 * exchanges), as an IPC mapping gives a reader an address of its own: PROT_NONE (device memory is not the host's),
 * never overlapping the owner's address, so a read at the owner's address is refused. */
int32_t channel_make_alias(channel *ch)
{
    if (ch->alias_base != 0 || ch->nremote == 0) return HCCL_SUCCESS;
    uint64_t size = ch->remote[0].size, owner = ch->remote[0].addr;
    void *tried[4];
    int ntried = 0;
    void *got = NULL;
    while (got == NULL && ntried < 4) {
        void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) break;
        uint64_t a = (uint64_t)(uintptr_t)p;
        if (a + size <= owner || owner + size <= a) got = p;
        else tried[ntried++] = p; /* kept until another is found: the next mmap cannot return it */
    }
    for (int i = 0; i < ntried; i++) munmap(tried[i], size);
    if (got == NULL) return HCCL_E_MEMORY;
    ch->alias_size = size;
    ch->alias_base = (uint64_t)(uintptr_t)got;
    return HCCL_SUCCESS;
}

static channel *channel_new(endpoint *ep, int engine, const HcommChannelDesc *d, int64_t deadline)
{
    channel *ch = calloc(1, sizeof *ch);
    if (ch == NULL) return NULL;
    ch->fd = ch->pidfd = -1;
    pthread_mutex_init(&ch->wlock, NULL);
    pthread_mutex_init(&ch->pend_mu, NULL);
    pthread_mutex_init(&ch->srv_mu, NULL);
    pthread_cond_init(&ch->srv_cv, NULL);
    pthread_cond_init(&ch->srv_room_cv, NULL);
    pthread_cond_init(&ch->window_cv, NULL);
    pthread_cond_init(&ch->notify_cv, NULL);
    ch->notify_num = d->notifyNum <= HCCL_CHANNEL_NOTIFY_MAX ? d->notifyNum : HCCL_CHANNEL_NOTIFY_MAX;
    ch->ep = ep;
    ch->engine = engine;
    ch->port = d->port ? d->port : HCOMM_DEFAULT_CHANNEL_PORT;
    ch->remote_ip = d->remoteEndpoint.commAddr.addr.s_addr;
    snprintf(ch->name, sizeof ch->name, "%s", d->channelName ? d->channelName : DEFAULT_CHANNEL_NAME);
    ch->role = d->role;
    if (ch->role == HCOMM_SOCKET_ROLE_RESERVED) { /* smaller (address, port) serves */
        uint32_t mine = ntohl(ep->ip), theirs = ntohl(ch->remote_ip);
        int server = mine != theirs ? mine < theirs : ep->listen_port < ch->port;
        ch->role = server ? HCOMM_SOCKET_ROLE_SERVER : HCOMM_SOCKET_ROLE_CLIENT;
        if (server) ch->port = ep->listen_port;
    }
    ch->state = ch->role == HCOMM_SOCKET_ROLE_SERVER ? CH_WAIT_PEER : CH_NEW;
    ch->deadline_ms = deadline;
    ch->refs = 1; /* the handle table's */
    if (snapshot_local(ep, d, ch) != 0) {
        channel_free(ch);
        return NULL;
    }
    return ch;
}

HCOMM_API HcommResult HcommChannelCreate(EndpointHandle endpointHandle, CommEngine engine, HcommChannelDesc *descs,
                                         uint32_t channelNum, ChannelHandle *channels)
{
    if (descs == NULL || channels == NULL) return HCCL_E_PTR;
    int32_t allowed = soft_atlas350_only(); /* the endpoint API is Atlas 350's */
    if (allowed != HCCL_SUCCESS) return allowed;
    return soft_channel_create(endpointHandle, engine, descs, channelNum, channels, 0, 0);
}

int32_t soft_channel_create(EndpointHandle endpointHandle, CommEngine engine, HcommChannelDesc *descs,
                            uint32_t channelNum, ChannelHandle *channels, uint64_t comm, int want_tcp)
{
    if (channelNum == 0 || channelNum > HCOMM_CHANNEL_NUM_MAX) return HCCL_E_PARA;
    if (!engine_supported(engine)) return HCCL_E_NOT_SUPPORT;
    soft_config cfg;
    soft_config_get(&cfg);
    int64_t deadline = soft_now_ms() + cfg.connect_timeout_ms;
    HcommChannelDesc *norm = malloc((size_t)channelNum * sizeof *norm);
    channel **made = calloc(channelNum, sizeof *made);
    int32_t rc = (norm && made) ? HCCL_SUCCESS : HCCL_E_MEMORY;
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < channelNum; i++) rc = normalise(&descs[i], &norm[i]);
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpointHandle);
    if (rc == HCCL_SUCCESS && (ep == NULL || ep->stopping)) rc = HCCL_E_NOT_FOUND;
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < channelNum; i++) rc = validate(ep, &norm[i]);
    uint32_t done = 0;
    for (; rc == HCCL_SUCCESS && done < channelNum; done++) {
        channel *ch = channel_new(ep, engine, &norm[done], deadline);
        uint64_t id = ch ? handle_put(KIND_CHANNEL, ch) : 0;
        if (id == 0) {
            if (ch) channel_free(ch);
            rc = HCCL_E_MEMORY;
            break;
        }
        ch->id = id;
        ch->comm = comm;
        ch->want_tcp = want_tcp;
        ch->read_fence = comm != 0 && want_tcp ? read_fence() : 1;
        ch->notify_flag = soft_notify_flag();
        if (comm != 0 && want_tcp) ch->land_delay_ms = land_delay_ms();
        made[done] = ch;
    }
    if (rc != HCCL_SUCCESS) { /* all or nothing */
        for (uint32_t i = 0; i < done; i++) {
            handle_del(made[i]->id);
            channel_free(made[i]);
        }
    } else {
        for (uint32_t i = 0; i < channelNum; i++) channels[i] = made[i]->id;
        ep->channels += (int)channelNum;
        g_count.channels += channelNum;
    }
    pthread_mutex_unlock(&g_lock);
    free(norm);
    free(made);
    return rc;
}

HCOMM_API HcommResult HcommChannelCreateWithConfig(EndpointHandle endpointHandle, CommEngine engine,
                                                   HcommChannelDesc *descs, uint32_t channelNum, void *config,
                                                   ChannelHandle *channels)
{
    if (config != NULL) return HCCL_E_NOT_SUPPORT; /* shared-queue channels are AIV + UB only */
    return HcommChannelCreate(endpointHandle, engine, descs, channelNum, channels);
}

/* ---- the handshake ---- */

static hello_msg *build_hello(channel *ch, uint32_t kind, const uint8_t client_nonce[16], const uint8_t proof[32],
                              size_t *len)
{
    *len = sizeof(hello_msg) + (size_t)ch->nlocal * sizeof(wire_region);
    hello_msg *h = calloc(1, *len);
    if (h == NULL) return NULL;
    h->magic = HELLO_MAGIC;
    h->version = WIRE_VERSION;
    h->kind = kind;
    memcpy(h->nonce, client_nonce, 16);
    memcpy(h->proof, proof, 32);
    snprintf(h->name, sizeof h->name, "%s", ch->name);
    h->from = ch->ep->desc;
    h->to = ch->ep->desc;
    h->to.commAddr.addr.s_addr = ch->remote_ip;
    wire_fill_identity(h);
    if (ch->want_tcp) h->force_tcp = 1;
    h->state_fd = ch->ep->state_fd;
    h->nregions = ch->nlocal;
    for (uint32_t i = 0; i < ch->nlocal; i++) {
        const region_info *r = &ch->local[i];
        wire_region *w = &h->regions[i];
        w->addr = r->addr;
        w->size = r->size;
        w->cookie = r->cookie;
        w->memfd_off = r->memfd_off;
        w->slot = r->slot;
        w->type = r->type;
        w->memfd = r->memfd;
        memcpy(w->tag, r->tag, sizeof w->tag);
    }
    return h;
}

static int pidfd_of(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* Learns the peer from its hello and picks this end's read path: shared memory when the peer is a live
 * process on this host whose state table we can map, the peer's soft NIC otherwise. */
static int adopt_peer(channel *ch, const hello_msg *h)
{
    ch->nremote = h->nregions;
    ch->remote = calloc(h->nregions ? h->nregions : 1, sizeof *ch->remote);
    ch->maps = calloc(h->nregions ? h->nregions : 1, sizeof *ch->maps);
    if (ch->remote == NULL || ch->maps == NULL) return -1;
    for (uint32_t i = 0; i < h->nregions; i++) {
        const wire_region *w = &h->regions[i];
        region_info *r = &ch->remote[i];
        r->addr = w->addr;
        r->size = w->size;
        r->cookie = w->cookie;
        r->memfd_off = w->memfd_off;
        r->slot = w->slot < SOFT_STATE_SLOTS ? w->slot : 0;
        r->type = w->type;
        r->memfd = w->memfd;
        memcpy(r->tag, w->tag, sizeof r->tag);
        r->tag[SOFT_TAG_MAX - 1] = '\0';
    }
    soft_config cfg;
    soft_config_get(&cfg);
    ch->peer_pid = (int)h->pid;
    ch->tcp = cfg.force_tcp || ch->want_tcp || h->force_tcp || strcmp(h->host_id, soft_host_id()) != 0 ||
              soft_start_time((int)h->pid) != h->start_time || h->start_time == 0;
    memset(cfg.secret, 0, sizeof cfg.secret);
    if (!ch->tcp) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%u/fd/%d", h->pid, h->state_fd);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st; /* a file shorter than a state table would fault on the first read past its end */
        int whole = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size >= SOFT_STATE_SLOTS * sizeof(uint64_t);
        void *p = whole ? mmap(NULL, SOFT_STATE_SLOTS * sizeof(uint64_t), PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
        if (fd >= 0) close(fd);
        ch->pidfd = pidfd_of(ch->peer_pid);
        if (p == MAP_FAILED || ch->pidfd < 0) {
            ch->tcp = 1;
        } else {
            ch->peer_state = p;
        }
    }
    return 0;
}

static int become_ready(channel *ch, const hello_msg *h)
{
    if (adopt_peer(ch, h) != 0 || channel_start_io(ch) != 0) return -1;
    ch->state = CH_READY;
    return 0;
}

static void fail(channel *ch, enum ch_state s)
{
    if (ch->fd >= 0) close(ch->fd);
    ch->fd = -1;
    hello_rx_free(&ch->hrx, NULL);
    ch->state = s;
}

static void log_failure(const channel *ch, const char *why)
{
    char peer[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &ch->remote_ip, peer, sizeof peer);
    wire_log("channel %s to %s:%u: handshake failed: %s", ch->name, peer, ch->port, why);
}

static int readable(int fd, short ev)
{
    struct pollfd p = {fd, ev, 0};
    return poll(&p, 1, 0) > 0;
}

static void client_step(channel *ch, int64_t now)
{
    switch (ch->state) {
    case CH_NEW: {
        if (now < ch->retry_at_ms) return;
        ch->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (ch->fd < 0) return;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(ch->port), .sin_addr.s_addr = ch->remote_ip};
        if (connect(ch->fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS) {
            ch->state = CH_CONNECTING;
        } else {
            fail(ch, CH_NEW);
            ch->retry_at_ms = now + 20;
        }
        return;
    }
    case CH_CONNECTING: {
        if (!readable(ch->fd, POLLOUT)) return;
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(ch->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) { /* nobody listens yet: try again until the deadline */
            fail(ch, CH_NEW);
            ch->retry_at_ms = now + 20;
            return;
        }
        fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) & ~O_NONBLOCK);
        net_set_timeout(ch->fd, 5000);
        int one = 1;
        setsockopt(ch->fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof one);
        ch->state = CH_WAIT_NONCE;
        return;
    }
    case CH_WAIT_NONCE: {
        nonce_msg n; /* taken only once whole: a server that sends part of it stalls no caller */
        ssize_t got = recv(ch->fd, &n, sizeof n, MSG_PEEK | MSG_DONTWAIT);
        if ((got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) ||
            (got > 0 && (size_t)got < sizeof n))
            return;
        if (got != sizeof n || net_recv_all(ch->fd, &n, sizeof n) != 0 || n.magic != NONCE_MAGIC ||
            n.version != WIRE_VERSION) {
            log_failure(ch, got == 0  ? "connection closed before the server's nonce"
                            : got < 0 ? "connection failed before the server's nonce"
                                      : "not a soft HComm nonce");
            fail(ch, CH_FAILED);
            return;
        }
        memcpy(ch->peer_nonce, n.nonce, 16);
        soft_random_bytes(ch->my_nonce, 16);
        uint8_t proof[32];
        wire_proof('C', ch->peer_nonce, ch->my_nonce, ch->name, proof);
        size_t len;
        hello_msg *h = build_hello(ch, HELLO_CLIENT, ch->my_nonce, proof, &len);
        int sent = h != NULL && net_send_all(ch->fd, h, len) == 0;
        free(h);
        if (sent) ch->state = CH_WAIT_HELLO;
        else fail(ch, CH_FAILED);
        return;
    }
    case CH_WAIT_HELLO: {
        const char *why = NULL;
        int v = hello_rx_read(&ch->hrx, ch->fd, NULL, now, &why);
        if (v == WIRE_MORE) {
            if (ch->hrx.last_ms == 0 || now - ch->hrx.last_ms < SOFT_HELLO_MS) return;
            why = "the server's hello stopped for 5 s before it was whole";
        }
        hello_msg *h = v == WIRE_OK ? hello_rx_take(&ch->hrx, NULL) : NULL;
        if (h != NULL && wire_verify_server_hello(h, ch->peer_nonce, ch->my_nonce, ch->name, &why) == WIRE_OK &&
            become_ready(ch, h) != 0)
            why = "out of resources";
        if (why != NULL) {
            log_failure(ch, why);
            fail(ch, CH_FAILED);
        }
        free(h);
        return;
    }
    default:
        return;
    }
}

static void server_step(channel *ch)
{
    pthread_mutex_lock(&g_lock);
    parked_conn *pc = NULL;
    for (parked_conn **pp = &ch->ep->parked; *pp; pp = &(*pp)->next) {
        parked_conn *c = *pp;
        if (c->hello_ok && strcmp(c->hello->name, ch->name) == 0 &&
            c->hello->from.commAddr.addr.s_addr == ch->remote_ip) {
            *pp = c->next;
            pc = c;
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (pc == NULL) return;
    ch->fd = pc->fd;
    memcpy(ch->peer_nonce, pc->hello->nonce, 16);
    uint8_t proof[32];
    wire_proof('S', pc->nonce, pc->hello->nonce, ch->name, proof);
    size_t len;
    hello_msg *reply = build_hello(ch, HELLO_SERVER, pc->hello->nonce, proof, &len);
    int ok = reply != NULL && net_send_all(ch->fd, reply, len) == 0;
    free(reply);
    if (!ok || become_ready(ch, pc->hello) != 0) fail(ch, CH_FAILED);
    free(pc->hello);
    free(pc);
}

static int32_t status_of(const channel *ch)
{
    switch (ch->state) {
    case CH_READY: return HCOMM_CHANNEL_STATUS_READY;
    case CH_FAILED: return HCOMM_CHANNEL_STATUS_FAILED;
    case CH_TIMEOUT: return HCOMM_CHANNEL_STATUS_TIMEOUT;
    default: return HCOMM_CHANNEL_STATUS_CONNECTING;
    }
}

HCOMM_API HcommResult HcommChannelGetStatus(const ChannelHandle *channelList, uint32_t listNum, int32_t *statusList)
{
    if (channelList == NULL || statusList == NULL) return HCCL_E_PTR;
    if (listNum == 0 || listNum > HCOMM_CHANNEL_NUM_MAX) return HCCL_E_PARA;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < listNum; i++) {
        if (handle_get(channelList[i], KIND_CHANNEL) == NULL) {
            pthread_mutex_unlock(&g_lock);
            return HCCL_E_NOT_FOUND;
        }
    }
    pthread_mutex_unlock(&g_lock);
    int64_t now = soft_now_ms();
    for (uint32_t i = 0; i < listNum; i++) {
        channel *ch = channel_get_ref(channelList[i]);
        if (ch == NULL) {
            statusList[i] = HCOMM_CHANNEL_STATUS_FAILED; /* destroyed by a racing caller */
            continue;
        }
        if (ch->state < CH_READY) {
            if (ch->role == HCOMM_SOCKET_ROLE_SERVER) server_step(ch);
            else client_step(ch, now);
            if (ch->state < CH_READY && now > ch->deadline_ms) fail(ch, CH_TIMEOUT);
        }
        statusList[i] = status_of(ch);
        channel_put(ch);
    }
    return HCCL_SUCCESS;
}

HCOMM_API HcommResult HcommChannelDestroy(const ChannelHandle *channels, uint32_t channelNum)
{
    if (channels == NULL) return HCCL_E_PTR;
    int32_t allowed = soft_atlas350_only(); /* the endpoint API is Atlas 350's */
    if (allowed != HCCL_SUCCESS) return allowed;
    if (channelNum == 0 || channelNum > HCOMM_CHANNEL_NUM_MAX) return HCCL_E_PARA;
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < channelNum; i++) { /* up to the first unknown handle, which the destroy refuses */
        channel *ch = handle_get(channels[i], KIND_CHANNEL);
        if (ch == NULL) break;
        if (ch->comm != 0) { /* a communicator's channel ends with its communicator */
            pthread_mutex_unlock(&g_lock);
            return HCCL_E_PARA;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return soft_channel_destroy(channels, channelNum);
}

int32_t soft_channel_destroy(const ChannelHandle *channels, uint32_t channelNum)
{
    if (channelNum == 0 || channelNum > HCOMM_CHANNEL_NUM_MAX) return HCCL_E_PARA;
    channel **list = malloc((size_t)channelNum * sizeof *list);
    if (list == NULL) return HCCL_E_MEMORY;
    pthread_mutex_lock(&g_lock);
    /* Validate every handle first: an unknown, destroyed or repeated one destroys nothing. */
    uint32_t marked = 0;
    int32_t rc = HCCL_SUCCESS;
    for (; marked < channelNum; marked++) {
        channel *ch = handle_get(channels[marked], KIND_CHANNEL);
        if (ch == NULL || ch->destroyed) {
            rc = HCCL_E_NOT_FOUND;
            break;
        }
        ch->destroyed = 1;
        list[marked] = ch;
    }
    if (rc != HCCL_SUCCESS) {
        for (uint32_t i = 0; i < marked; i++) list[i]->destroyed = 0;
        pthread_mutex_unlock(&g_lock);
        free(list);
        return rc;
    }
    for (uint32_t i = 0; i < channelNum; i++) {
        handle_del(list[i]->id);
        list[i]->ep->channels--;
    }
    g_count.channels -= channelNum;
    pthread_mutex_unlock(&g_lock);
    for (uint32_t i = 0; i < channelNum; i++) {
        channel_stop_io(list[i]);
        channel_put(list[i]);
    }
    free(list);
    return HCCL_SUCCESS;
}

HCOMM_API int32_t HcommSoftChannelPath(ChannelHandle channel_handle, const char **path)
{
    if (path == NULL) return HCCL_E_PTR;
    channel *ch = channel_get_ref(channel_handle);
    if (ch == NULL) return HCCL_E_NOT_FOUND;
    int32_t rc = ch->state == CH_READY ? HCCL_SUCCESS : HCCL_E_ROCE_CONNECT;
    if (rc == HCCL_SUCCESS) *path = ch->tcp ? "tcp" : "shm";
    channel_put(ch);
    return rc;
}
