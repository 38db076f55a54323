/*
 * The soft NIC on the owner's side of a TCP channel: serves the peer's reads after checking every range against
 * what the channel exchanged. Also the channel's receiver (rx_main), which hands the peer's requests to the
 * serving thread and completes this end's reads (sent by soft_read.c) with the peer's answers. Each TCP channel
 * has these two threads; the queue between them is under srv_mu, the zero-copy list is the server thread's.
 *
 * An answer's bytes go out with MSG_ZEROCOPY when the channel's socket allows it: the kernel reads the registered
 * pages itself, and the registration stays pinned (reg_find_live's in-flight count) until the kernel's completion
 * says it no longer reads them, so an unregistration or free waits for that. Where the kernel copies anyway
 * (loopback, veth: it says so in the completion), the channel goes back to send(), as a copy at delivery costs
 * more than a copy at send. sendfile() from the memfd is not used: it hands the socket the pages with no
 * completion, so a peer could receive bytes written after the region was unregistered.
 *
 * The queue of a peer's requests is bounded (SOFT_SERVE_QUEUE_MAX, SOFT_SERVE_QUEUE_BYTES): past it the receiver
 * stops reading the socket until the server thread caught up, which the peer sees as TCP backpressure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "soft_wire.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

_Static_assert(WIRE_MAX_WRITE <= SOFT_SERVE_QUEUE_BYTES, "a write must fit in the serving queue's byte bound");

enum { ZC_UNTRIED = 0, ZC_ON = 1, ZC_OFF = 2 };

typedef struct serve_req {
    struct serve_req *next;
    data_msg msg;
    uint8_t *payload; /* a write's bytes (malloc'd by the receiver), else NULL */
    int64_t land_at_ms; /* a write over a RoCE channel with a landing delay: its bytes land no earlier than this */
} serve_req;

/* An answer sent with MSG_ZEROCOPY: the ids of its sends, and the registration pinned until all completed. */
typedef struct zc_send {
    struct zc_send *next;
    uint32_t first, count, done;
    registration *r;
} zc_send;

static void timed_wait(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the channel's condition variables use the default clock */
    ts.tv_nsec += ms * 1000000;
    ts.tv_sec += ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    pthread_cond_timedwait(cv, mu, &ts);
}

/* ---- zero-copy answers: the kernel's completions release the registrations ---- */

/* Ids [lo, hi] completed: entries all of whose ids are done let their registration go. Server thread only. */
static void zc_complete(channel *ch, uint32_t lo, uint32_t hi)
{
    if (ch->zc_head == NULL) return;
    uint32_t base = ch->zc_head->first; /* every id still awaited lies within 2^31 after the oldest */
    uint64_t n_lo = lo - base, n_hi = (uint64_t)(uint32_t)(hi - base) + 1;
    zc_send **pp = &ch->zc_head, *prev = NULL;
    while (*pp) {
        zc_send *e = *pp;
        uint64_t e_lo = (uint32_t)(e->first - base), e_hi = e_lo + e->count;
        uint64_t from = e_lo > n_lo ? e_lo : n_lo, to = e_hi < n_hi ? e_hi : n_hi;
        if (to > from) e->done += (uint32_t)(to - from);
        if (e->done < e->count) {
            prev = e;
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        if (ch->zc_tail == e) ch->zc_tail = prev;
        ch->zc_count--;
        reg_release_inflight(e->r);
        free(e);
    }
}

/* Takes the completions waiting on the socket's error queue, without blocking. Server thread only. */
static void zc_reap(channel *ch)
{
    while (ch->zc_head != NULL) {
        char control[256];
        struct msghdr msg = {.msg_control = control, .msg_controllen = sizeof control};
        if (recvmsg(ch->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            if (errno == EINTR) continue;
            return; /* EAGAIN: none yet */
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_IP || c->cmsg_type != IP_RECVERR) continue;
            struct sock_extended_err e;
            memcpy(&e, CMSG_DATA(c), sizeof e);
            if (e.ee_origin != SO_EE_ORIGIN_ZEROCOPY || e.ee_errno != 0) continue;
            if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) ch->zc = ZC_OFF; /* the kernel copied: send() is cheaper */
            zc_complete(ch, e.ee_info, e.ee_data);
        }
    }
}

/* Whether this answer's bytes go out with MSG_ZEROCOPY. Server thread only. */
static int zc_wanted(channel *ch, uint64_t len)
{
    if (ch->zc == ZC_UNTRIED) {
        soft_config cfg;
        soft_config_get(&cfg);
        int one = 1;
        ch->zc = cfg.zerocopy && setsockopt(ch->fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) == 0 ? ZC_ON : ZC_OFF;
        memset(cfg.secret, 0, sizeof cfg.secret);
    }
    return ch->zc == ZC_ON && len >= SOFT_ZC_MIN && ch->zc_count < SOFT_ZC_PENDING;
}

/* Sends len bytes with MSG_ZEROCOPY, counting the ids the kernel handed out (one per send that took bytes); a piece
 * with no room left for a completion goes by copy. 0, or -1 when the connection failed (a reset mid-answer). */
static int send_zc(channel *ch, const uint8_t *p, size_t len, uint32_t *ids)
{
    while (len > 0) {
        ssize_t n = send(ch->fd, p, len, MSG_NOSIGNAL | MSG_ZEROCOPY);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOBUFS) return net_send_all(ch->fd, p, len); /* the socket's option memory is full */
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd w = {ch->fd, POLLOUT, 0};
                poll(&w, 1, 1000);
                continue;
            }
            return -1;
        }
        ch->zc_next++;
        (*ids)++;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- the soft NIC on the owner's side: serves TCP reads after checking every range ---- */

/* What this process served, as TSan sees it: a peer's notify received later may follow from it (the peer got the
 * bytes, then recorded the notify), an order through the peer process that TSan cannot see. */
static int g_served_order;

/* The last byte of a read's answer (the rest sent): it goes only after the answer is counted in bytesServed and
 * released for TSan, so a reader that has every byte (and says so, on any channel) finds both done. 0 or -1. */
static int send_last(channel *ch, const uint8_t *data, uint64_t len)
{
    uint8_t tail = data[len - 1];
    g_count.bytes_served += len;
    SOFT_TSAN_RELEASE(&g_served_order);
    int rc = net_send_all(ch->fd, &tail, 1);
    if (rc != 0) g_count.bytes_served -= len;
    return rc;
}

/* Answers req: its header, then (a read served) its bytes from r, header and bytes together under wlock so that no
 * other message of this end comes between them. The bytes go by copy, or with MSG_ZEROCOPY: then r stays pinned
 * until the kernel's completion (the caller's in-flight count passes to the zero-copy list). 0 or -1. */
static int send_resp(channel *ch, const data_msg *req, int32_t status, const uint8_t *data, registration *r)
{
    int write = req->type == MSG_WRITE_REQ; /* a write's answer carries no bytes */
    int more = status == 0 && !write && req->len > 0;
    data_msg resp = {write ? MSG_WRITE_RESP : MSG_READ_RESP, status, req->reqid, req->addr, more ? req->len : 0,
                     0, 0, 0};
    zc_send *zc = more && r != NULL && zc_wanted(ch, req->len) ? calloc(1, sizeof *zc) : NULL;
    pthread_mutex_lock(&ch->wlock);
    int rc = net_send_flags(ch->fd, &resp, sizeof resp, more ? MSG_MORE : 0);
    if (zc != NULL) {
        zc->first = ch->zc_next;
        if (rc == 0) rc = send_zc(ch, data, req->len - 1, &zc->count);
    } else if (rc == 0 && more) {
        rc = net_send_flags(ch->fd, data, req->len - 1, MSG_MORE);
    }
    if (rc == 0 && more) rc = send_last(ch, data, req->len);
    pthread_mutex_unlock(&ch->wlock);
    if (zc != NULL) {
        if (zc->count == 0) { /* nothing went zero-copy: the kernel holds no page of r */
            free(zc);
            reg_release_inflight(r);
        } else {
            zc->r = r;
            if (ch->zc_tail) ch->zc_tail->next = zc;
            else ch->zc_head = zc;
            ch->zc_tail = zc;
            ch->zc_count++;
        }
        zc_reap(ch);
    } else if (r != NULL) {
        reg_release_inflight(r);
    }
    return rc;
}

static void log_peer(const channel *ch, const char *what)
{
    char peer[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &ch->remote_ip, peer, sizeof peer);
    wire_log("channel %s with %s: %s", ch->name, peer, what);
}

/* A peer's notify: raised at this end, for one wait on its index. */
static void raise_notify(channel *ch, uint32_t idx)
{
    SOFT_TSAN_ACQUIRE(&g_served_order);
    pthread_mutex_lock(&ch->pend_mu);
    if (ch->notify_flag) ch->notified[idx] = 1; /* CANN's: a record writes 1, however many came before the wait */
    else ch->notified[idx]++;
    pthread_cond_broadcast(&ch->notify_cv);
    pthread_mutex_unlock(&ch->pend_mu);
}

/* A delayed write (HCOMM_SOFT_ROCE_LAND_DELAY_MS) waits for its landing time before its bytes go in. */
static void await_landing(channel *ch, int64_t land_at_ms)
{
    int64_t left;
    while ((left = land_at_ms - soft_now_ms()) > 0 && !atomic_load(&ch->destroyed)) {
        pthread_mutex_lock(&ch->srv_mu);
        int closing = ch->srv_closing; /* the channel ends: what is still to land is dropped with it */
        pthread_mutex_unlock(&ch->srv_mu);
        if (closing) return;
        usleep((useconds_t)(left < 50 ? left : 50) * 1000);
    }
}

static void serve_one(channel *ch, const data_msg *req, const uint8_t *payload, int64_t land_at_ms)
{
    if (req->type == MSG_NOTIFY) { /* behind the writes before it (a channel with a landing delay) */
        raise_notify(ch, (uint32_t)req->addr);
        return;
    }
    registration *r = NULL;
    int exported = 0;
    pthread_mutex_lock(&g_lock);
    /* Only what this channel exchanged, and only while it is still registered. */
    for (int64_t i = wire_check_request(req, ch->local, ch->nlocal, 0); i >= 0 && r == NULL;
         i = wire_check_request(req, ch->local, ch->nlocal, (uint32_t)i + 1)) {
        exported = 1;
        r = reg_find_live(ch->ep, req->addr, req->len, ch->local[i].slot, ch->local[i].cookie);
    }
    pthread_mutex_unlock(&g_lock);
    if (r == NULL) {
        if (!exported) { /* the reader checks the same list: only a broken or hostile peer asks for this */
            char what[128];
            snprintf(what, sizeof what, "refused a %s of %llu bytes at 0x%llx: empty or outside what it exported",
                     payload ? "write" : "read", (unsigned long long)req->len, (unsigned long long)req->addr);
            log_peer(ch, what);
        }
        send_resp(ch, req, HCCL_E_NOT_FOUND, NULL, NULL);
        return;
    }
    uint8_t *bytes = (uint8_t *)(uintptr_t)(req->addr + r->host_delta); /* device memory: its hidden mapping */
    if (payload != NULL) {
        if (land_at_ms == 0) {
            memcpy(bytes, payload, req->len); /* a write into this end's exported memory, checked above */
        } else { /* the device's write, which the host is not ordered with until a notify after it (as a read's) */
            await_landing(ch, land_at_ms);
            SOFT_TSAN_IGNORE_BEGIN();
            memcpy(bytes, payload, req->len);
            SOFT_TSAN_IGNORE_END();
        }
        reg_release_inflight(r);
        SOFT_TSAN_RELEASE(&g_served_order); /* before the answer, after which the writer may notify */
        send_resp(ch, req, HCCL_SUCCESS, NULL, NULL);
    } else {
        send_resp(ch, req, HCCL_SUCCESS, bytes, r); /* takes r's pin; counts the bytes (send_last) */
    }
}

static void *server_main(void *arg)
{
    channel *ch = arg;
    pthread_setname_np(pthread_self(), "hcomm-serve"); /* visible in top -H, /proc and profilers */
    for (;;) {
        pthread_mutex_lock(&ch->srv_mu);
        int64_t look_ms = 1; /* completions still due: looked for again after 1 ms, then less often up to 64 ms */
        while (ch->srv_head == NULL && !ch->srv_stop) {
            if (ch->zc_head == NULL) {
                pthread_cond_wait(&ch->srv_cv, &ch->srv_mu);
                continue;
            }
            timed_wait(&ch->srv_cv, &ch->srv_mu, look_ms);
            pthread_mutex_unlock(&ch->srv_mu);
            uint32_t due = ch->zc_count;
            zc_reap(ch);
            look_ms = ch->zc_count < due ? 1 : look_ms < 64 ? look_ms * 2 : 64;
            pthread_mutex_lock(&ch->srv_mu);
        }
        serve_req *q = ch->srv_head;
        if (q == NULL) {
            pthread_mutex_unlock(&ch->srv_mu);
            break;
        }
        ch->srv_head = q->next;
        if (ch->srv_head == NULL) ch->srv_tail = NULL;
        int stop = ch->srv_stop;
        pthread_mutex_unlock(&ch->srv_mu);
        if (!stop) serve_one(ch, &q->msg, q->payload, q->land_at_ms);
        pthread_mutex_lock(&ch->srv_mu); /* served: its room in the queue is free again */
        ch->srv_n--;
        if (q->payload != NULL) ch->srv_bytes -= q->msg.len;
        pthread_cond_signal(&ch->srv_room_cv);
        pthread_mutex_unlock(&ch->srv_mu);
        free(q->payload);
        free(q);
    }
    /* The socket is shut down: a peer still alive acknowledges what it got within a few ms. What the kernel still
     * holds after 200 ms is dropped with the connection (a reset at close), and channel_release_sends lets its
     * registrations go once the socket is closed. */
    for (int i = 0; i < 200 && ch->zc_head != NULL; i++) {
        zc_reap(ch);
        if (ch->zc_head != NULL) usleep(1000); /* (a poll would see the shut-down socket's POLLHUP at once) */
    }
    if (ch->zc_head != NULL) {
        struct linger abort_on_close = {1, 0};
        setsockopt(ch->fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close);
    }
    return NULL;
}

void channel_release_sends(channel *ch)
{
    while (ch->zc_head != NULL) {
        zc_send *e = ch->zc_head;
        ch->zc_head = e->next;
        reg_release_inflight(e->r);
        free(e);
    }
    ch->zc_tail = NULL;
    ch->zc_count = 0;
}

/* Queues a request for the server thread; takes payload (freed with the request). The caller made room for it. */
static void enqueue_serve(channel *ch, const data_msg *m, uint8_t *payload)
{
    serve_req *q = malloc(sizeof *q);
    if (q == NULL) {
        free(payload);
        return;
    }
    q->msg = *m;
    q->payload = payload;
    q->land_at_ms = payload != NULL && ch->land_delay_ms > 0 ? soft_now_ms() + ch->land_delay_ms : 0;
    q->next = NULL;
    pthread_mutex_lock(&ch->srv_mu);
    if (!ch->server_started) ch->server_started = pthread_create(&ch->server, NULL, server_main, ch) == 0;
    if (ch->srv_tail) ch->srv_tail->next = q;
    else ch->srv_head = q;
    ch->srv_tail = q;
    ch->srv_n++;
    if (payload != NULL) ch->srv_bytes += m->len;
    pthread_cond_signal(&ch->srv_cv);
    pthread_mutex_unlock(&ch->srv_mu);
}

/* Waits until the queue has room for one more request carrying `bytes` bytes of payload: the receiver reads no more
 * of the socket meanwhile, so a peer that sends faster than this end serves meets TCP's backpressure. 0, or -1 when
 * the channel ends first. */
static int await_room(channel *ch, uint64_t bytes)
{
    pthread_mutex_lock(&ch->srv_mu);
    while (!ch->srv_closing &&
           (ch->srv_n >= SOFT_SERVE_QUEUE_MAX || ch->srv_bytes + bytes > SOFT_SERVE_QUEUE_BYTES))
        pthread_cond_wait(&ch->srv_room_cv, &ch->srv_mu);
    int closing = ch->srv_closing;
    pthread_mutex_unlock(&ch->srv_mu);
    return closing ? -1 : 0;
}

static op *pop_pending(channel *ch)
{
    pthread_mutex_lock(&ch->pend_mu);
    op *o = ch->pending_head;
    if (o) {
        ch->pending_head = o->next;
        if (ch->pending_head == NULL) ch->pending_tail = NULL;
        ch->pend_n--; /* its room in the reader's window is free again */
        if (o->kind == OP_WRITE) ch->pend_bytes -= o->len;
        pthread_cond_signal(&ch->window_cv);
    }
    pthread_mutex_unlock(&ch->pend_mu);
    return o;
}

void channel_fail_pending(channel *ch, int32_t code)
{
    op *o;
    while ((o = pop_pending(ch)) != NULL) op_complete(o, code);
    pthread_mutex_lock(&ch->pend_mu); /* readers waiting for room in the window see the end */
    pthread_cond_broadcast(&ch->window_cv);
    pthread_mutex_unlock(&ch->pend_mu);
}

/* An answer's bytes into the read's destination: a delayed read's (HCOMM_SOFT_ROCE_LAND_DELAY_MS) no earlier than
 * its landing time, as a write of the device that the host is not ordered with (a host that looks before then sees
 * the old bytes, and TSan is not told of the write). 0, or -1 when the connection broke. */
static int land(channel *ch, op *o, uint64_t len)
{
    if (o->land_at_ms == 0) return net_recv_all(ch->fd, o->dst, len);
    int64_t left;
    while ((left = o->land_at_ms - soft_now_ms()) > 0 && !atomic_load(&ch->destroyed))
        usleep((useconds_t)(left < 50 ? left : 50) * 1000);
    SOFT_TSAN_IGNORE_BEGIN();
    int rc = net_recv_all(ch->fd, o->dst, len);
    SOFT_TSAN_IGNORE_END();
    return rc;
}

/* Receives everything the peer sends: its requests (for the server thread) and answers to our reads.
 * End of stream means the peer's end is gone: reads that wait, and later ones, fail. */
static void *rx_main(void *arg)
{
    channel *ch = arg;
    pthread_setname_np(pthread_self(), "hcomm-rx"); /* visible in top -H, /proc and profilers */
    data_msg m;
    const char *why = NULL;
    while (why == NULL && net_recv_all(ch->fd, &m, sizeof m) == 0) {
        if (m.type == MSG_READ_REQ) {
            if (await_room(ch, 0) != 0) break;
            enqueue_serve(ch, &m, NULL);
        } else if (m.type == MSG_WRITE_REQ) {
            /* a peer writes only into a communicator's HCCL buffer, in pieces a writer of ours never exceeds */
            if (ch->comm == 0 || m.len == 0 || m.len > WIRE_MAX_WRITE) {
                why = "a write this end does not take";
                break;
            }
            if (await_room(ch, m.len) != 0) break; /* before its bytes are taken */
            uint8_t *payload = malloc(m.len);
            if (payload == NULL || net_recv_all(ch->fd, payload, m.len) != 0) {
                free(payload);
                break;
            }
            enqueue_serve(ch, &m, payload);
        } else if (m.type == MSG_READ_RESP || m.type == MSG_WRITE_RESP) { /* a write's carries no bytes */
            op *o = pop_pending(ch);
            if (wire_check_response(&m, o, &why) != WIRE_OK) {
                if (o) op_complete(o, HCCL_E_NETWORK);
            } else if (m.status == 0 && m.len > 0 && land(ch, o, m.len) != 0) {
                op_complete(o, HCCL_E_NETWORK);
                break;
            } else {
                op_complete(o, m.status == 0 ? HCCL_SUCCESS : HCCL_E_NETWORK);
            }
        } else if (m.type == MSG_NOTIFY) {
            if (wire_check_notify(&m, ch->notify_num, &why) != WIRE_OK) {
            } else if (ch->land_delay_ms > 0) { /* one queue pair: raised after the writes before it landed */
                if (await_room(ch, 0) != 0) break;
                enqueue_serve(ch, &m, NULL);
            } else {
                raise_notify(ch, (uint32_t)m.addr);
            }
        } else {
            why = "unknown message type";
        }
    }
    if (why != NULL) { /* a protocol violation: the peer learns it from the closed connection */
        char what[96];
        snprintf(what, sizeof what, "closed the connection: %s", why);
        log_peer(ch, what);
        shutdown(ch->fd, SHUT_RDWR);
    }
    /* what the peer sent before its end still lands: delayed writes, and the notifies queued behind them, are served
     * before waits see the peer gone (one queue pair, in order) */
    pthread_mutex_lock(&ch->srv_mu);
    while (ch->land_delay_ms > 0 && ch->srv_n > 0 && ch->server_started && !ch->srv_closing)
        timed_wait(&ch->srv_room_cv, &ch->srv_mu, 50);
    pthread_mutex_unlock(&ch->srv_mu);
    atomic_store(&ch->peer_dead, 1);
    channel_fail_pending(ch, HCCL_E_NETWORK);
    channel_wake_waiters(ch);
    return NULL;
}

/* Notify waits on ch see the change (a notify, the peer's end, a destroy). */
void channel_wake_waiters(channel *ch)
{
    pthread_mutex_lock(&ch->pend_mu);
    pthread_cond_broadcast(&ch->notify_cv);
    pthread_mutex_unlock(&ch->pend_mu);
}

/* Raises notify idx at the peer's end: a message on the channel's connection (shared memory or not). */
int channel_send_notify(channel *ch, uint32_t idx)
{
    data_msg m = {MSG_NOTIFY, 0, 0, idx, 0, 0, 0, 0};
    pthread_mutex_lock(&ch->wlock);
    int rc = net_send_all(ch->fd, &m, sizeof m);
    pthread_mutex_unlock(&ch->wlock);
    if (rc != 0) {
        atomic_store(&ch->peer_dead, 1);
        shutdown(ch->fd, SHUT_RDWR);
        return HCCL_E_NETWORK;
    }
    g_count.notifies++;
    return HCCL_SUCCESS;
}

int channel_start_io(channel *ch)
{
    net_set_timeout(ch->fd, 0); /* the receiver blocks until data or shutdown */
    ch->rx_started = pthread_create(&ch->rx, NULL, rx_main, ch) == 0;
    return ch->rx_started ? 0 : -1;
}

void channel_stop_io(channel *ch)
{
    if (ch->fd >= 0) shutdown(ch->fd, SHUT_RDWR);
    pthread_mutex_lock(&ch->srv_mu); /* a receiver waiting for room in the queue stops waiting */
    ch->srv_closing = 1;
    pthread_cond_broadcast(&ch->srv_room_cv);
    pthread_mutex_unlock(&ch->srv_mu);
    if (ch->rx_started) pthread_join(ch->rx, NULL);
    pthread_mutex_lock(&ch->srv_mu);
    ch->srv_stop = 1;
    pthread_cond_signal(&ch->srv_cv);
    int started = ch->server_started;
    pthread_mutex_unlock(&ch->srv_mu);
    if (started) pthread_join(ch->server, NULL);
    channel_fail_pending(ch, HCCL_E_NETWORK);
    channel_wake_waiters(ch);
    if (ch->nbi) {
        thread_stop(ch->nbi);
        thread_put(ch->nbi);
        ch->nbi = NULL;
    }
}
