/*
 * The soft NIC on the owner's side of a TCP channel: serves the peer's reads after checking every range against
 * what the channel exchanged. Also the channel's receiver (rx_main), which hands the peer's requests to the
 * serving thread and completes this end's reads (sent by soft_read.c) with the peer's answers.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "soft_wire.h"

typedef struct serve_req {
    struct serve_req *next;
    data_msg msg;
    uint8_t *payload; /* a write's bytes (malloc'd by the receiver), else NULL */
} serve_req;

/* ---- the soft NIC on the owner's side: serves TCP reads after checking every range ---- */

static int send_resp(channel *ch, const data_msg *req, int32_t status, const void *data)
{
    int write = req->type == MSG_WRITE_REQ; /* a write's answer carries no bytes */
    data_msg resp = {write ? MSG_WRITE_RESP : MSG_READ_RESP, status, req->reqid, req->addr,
                     status == 0 && !write ? req->len : 0, 0, 0, 0};
    pthread_mutex_lock(&ch->wlock);
    int more = status == 0 && !write && req->len > 0;
    int rc = net_send_flags(ch->fd, &resp, sizeof resp, more ? MSG_MORE : 0);
    if (rc == 0 && more) rc = net_send_all(ch->fd, data, req->len);
    pthread_mutex_unlock(&ch->wlock);
    return rc;
}

static void log_peer(const channel *ch, const char *what)
{
    char peer[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &ch->remote_ip, peer, sizeof peer);
    wire_log("channel %s with %s: %s", ch->name, peer, what);
}

static void serve_one(channel *ch, const data_msg *req, const uint8_t *payload)
{
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
        send_resp(ch, req, HCCL_E_NOT_FOUND, NULL);
        return;
    }
    uint8_t *bytes = (uint8_t *)(uintptr_t)(req->addr + r->host_delta); /* device memory: its hidden mapping */
    if (payload != NULL) {
        memcpy(bytes, payload, req->len); /* a write into this end's exported memory, checked above */
        send_resp(ch, req, HCCL_SUCCESS, NULL);
    } else if (send_resp(ch, req, HCCL_SUCCESS, bytes) == 0) {
        g_count.bytes_served += req->len;
    }
    reg_release_inflight(r);
}

static void *server_main(void *arg)
{
    channel *ch = arg;
    pthread_setname_np(pthread_self(), "hcomm-serve"); /* visible in top -H, /proc and profilers */
    for (;;) {
        pthread_mutex_lock(&ch->srv_mu);
        while (ch->srv_head == NULL && !ch->srv_stop) pthread_cond_wait(&ch->srv_cv, &ch->srv_mu);
        serve_req *q = ch->srv_head;
        if (q == NULL) {
            pthread_mutex_unlock(&ch->srv_mu);
            return NULL;
        }
        ch->srv_head = q->next;
        if (ch->srv_head == NULL) ch->srv_tail = NULL;
        pthread_mutex_unlock(&ch->srv_mu);
        if (!ch->srv_stop) serve_one(ch, &q->msg, q->payload);
        free(q->payload);
        free(q);
    }
}

/* Queues a request for the server thread; takes payload (freed with the request). */
static void enqueue_serve(channel *ch, const data_msg *m, uint8_t *payload)
{
    serve_req *q = malloc(sizeof *q);
    if (q == NULL) {
        free(payload);
        return;
    }
    q->msg = *m;
    q->payload = payload;
    q->next = NULL;
    pthread_mutex_lock(&ch->srv_mu);
    if (!ch->server_started) ch->server_started = pthread_create(&ch->server, NULL, server_main, ch) == 0;
    if (ch->srv_tail) ch->srv_tail->next = q;
    else ch->srv_head = q;
    ch->srv_tail = q;
    pthread_cond_signal(&ch->srv_cv);
    pthread_mutex_unlock(&ch->srv_mu);
}

static op *pop_pending(channel *ch)
{
    pthread_mutex_lock(&ch->pend_mu);
    op *o = ch->pending_head;
    if (o) {
        ch->pending_head = o->next;
        if (ch->pending_head == NULL) ch->pending_tail = NULL;
    }
    pthread_mutex_unlock(&ch->pend_mu);
    return o;
}

void channel_fail_pending(channel *ch, int32_t code)
{
    op *o;
    while ((o = pop_pending(ch)) != NULL) op_complete(o, code);
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
            enqueue_serve(ch, &m, NULL);
        } else if (m.type == MSG_WRITE_REQ) {
            /* a peer writes only into a communicator's HCCL buffer, in pieces a writer of ours never exceeds */
            if (ch->comm == 0 || m.len == 0 || m.len > WIRE_MAX_WRITE) {
                why = "a write this end does not take";
                break;
            }
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
            } else if (m.status == 0 && m.len > 0 && net_recv_all(ch->fd, o->dst, m.len) != 0) {
                op_complete(o, HCCL_E_NETWORK);
                break;
            } else {
                op_complete(o, m.status == 0 ? HCCL_SUCCESS : HCCL_E_NETWORK);
            }
        } else if (m.type == MSG_NOTIFY) {
            if (wire_check_notify(&m, ch->notify_num, &why) == WIRE_OK) {
                pthread_mutex_lock(&ch->pend_mu);
                ch->notified[m.addr]++;
                pthread_cond_broadcast(&ch->notify_cv);
                pthread_mutex_unlock(&ch->pend_mu);
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
