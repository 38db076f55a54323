/*
 * The data plane. A ThreadHandle is a soft "stream": a FIFO of reads run in order by one worker. A read on a
 * shared-memory channel is a copy by the reader from the owner's memfd (no work by the owner); on a TCP channel
 * it is a request that the owner's soft NIC serves after checking the range against what it exchanged.
 * Completion is observed with HcommChannelDrainOnThread, aclrtSynchronizeStream or HcommChannelFence.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "soft_wire.h"

#define STREAM_BIT (1ull << 62)

typedef struct serve_req {
    struct serve_req *next;
    data_msg msg;
} serve_req;

/* ---- completion ---- */

static void thread_ref(soft_thread *t)
{
    pthread_mutex_lock(&g_lock);
    t->refs++;
    pthread_mutex_unlock(&g_lock);
}

/* Keeps the first unreported failure of t's reads on channel channel_id. Call with t->mu held. */
static void note_error(soft_thread *t, uint64_t channel_id, int32_t code)
{
    for (op_error *e = t->errors; e != NULL; e = e->next)
        if (e->channel_id == channel_id) return;
    op_error *e = malloc(sizeof *e);
    if (e == NULL) {
        if (t->errors_lost == HCCL_SUCCESS) t->errors_lost = code;
        return;
    }
    *e = (op_error){t->errors, channel_id, code};
    t->errors = e;
}

/* Reports and forgets t's unreported failures on channel ch, or on every channel when ch is NULL: the first one
 * found, or HCCL_SUCCESS. Call with t->mu held. */
static int32_t take_errors(soft_thread *t, const channel *ch)
{
    int32_t rc = t->errors_lost;
    t->errors_lost = HCCL_SUCCESS;
    for (op_error **p = &t->errors; *p != NULL;) {
        op_error *e = *p;
        if (ch != NULL && e->channel_id != ch->id) {
            p = &e->next;
            continue;
        }
        if (rc == HCCL_SUCCESS) rc = e->code;
        *p = e->next;
        free(e);
    }
    return rc;
}

void op_complete(op *o, int32_t code)
{
    soft_thread *t = o->th;
    if (code == HCCL_SUCCESS) g_count.bytes_read += o->len;
    pthread_mutex_lock(&t->mu);
    if (code != HCCL_SUCCESS) note_error(t, o->ch->id, code);
    __atomic_store_n(&t->completed, t->completed + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->done_cv);
    pthread_mutex_unlock(&t->mu);
    channel_put(o->ch);
    thread_put(t);
    free(o);
}

/* Takes the op at the head of t's FIFO for the caller to execute, or NULL when the FIFO is empty or an op is
 * already running (ops start in submission order, one at a time). Call with t->mu held. */
static op *take_head(soft_thread *t)
{
    op *o = t->head;
    if (o == NULL || t->running) return NULL;
    __atomic_store_n(&t->head, o->next, __ATOMIC_RELEASE); /* the idle worker's spin reads head unlocked */
    if (o->next == NULL) t->tail = NULL;
    t->running = 1;
    return o;
}

/* Runs o, taken with take_head, then lets the next op start. Called and returns with t->mu held. */
static void run_taken(soft_thread *t, op *o)
{
    int stopping = t->stopping;
    pthread_mutex_unlock(&t->mu);
    if (stopping) op_complete(o, HCCL_E_NOT_FOUND);
    else channel_execute(o->ch, o);
    pthread_mutex_lock(&t->mu);
    t->running = 0;
    pthread_cond_signal(&t->cv);
}

/* Waits until everything submitted to t so far has completed; returns the first unreported failure of t's reads
 * (on ch when given, else on any channel), or HCCL_E_TIMEOUT after exec_timeout_ms. Failures stay with t: a
 * drain never reports, nor consumes, another thread's.
 *
 * A waiter does not wait for the worker to be scheduled: while the worker is not running an op, the waiter runs
 * the ops at the head of the FIFO itself (still one at a time, in order). On a host whose cores are busy with
 * the application, the worker's wake-up can take a scheduler slice; this is the wait the caller would otherwise
 * see. The worker still makes progress on its own between waits, which is what lets reads overlap with work. */
int32_t thread_wait(soft_thread *t, channel *ch)
{
    soft_config cfg;
    soft_config_get(&cfg);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += cfg.exec_timeout_ms / 1000;
    until.tv_nsec += (cfg.exec_timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&t->mu);
    uint64_t target = t->submitted;
    int64_t spin_until = soft_now_us() + SOFT_SPIN_US; /* short reads land in microseconds: spin before sleeping */
    int32_t rc = HCCL_SUCCESS;
    while (t->completed < target && rc == HCCL_SUCCESS) {
        op *o = take_head(t);
        if (o != NULL) {
            g_count.ops_run_by_waiter++;
            run_taken(t, o);
        } else if (soft_now_us() < spin_until) {
            pthread_mutex_unlock(&t->mu);
            sched_yield();
            pthread_mutex_lock(&t->mu);
        } else if (pthread_cond_timedwait(&t->done_cv, &t->mu, &until) == ETIMEDOUT) {
            rc = HCCL_E_TIMEOUT;
        }
    }
    if (rc == HCCL_SUCCESS) rc = take_errors(t, ch);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* ---- the soft NIC on the owner's side: serves TCP reads after checking every range ---- */

static int send_resp(channel *ch, const data_msg *req, int32_t status, const void *data)
{
    data_msg resp = {MSG_READ_RESP, status, req->reqid, req->addr, status == 0 ? req->len : 0, 0, 0, 0};
    pthread_mutex_lock(&ch->wlock);
    int more = status == 0 && req->len > 0;
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

static void serve_one(channel *ch, const data_msg *req)
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
            snprintf(what, sizeof what, "refused a read of %llu bytes at 0x%llx: empty or outside what it exported",
                     (unsigned long long)req->len, (unsigned long long)req->addr);
            log_peer(ch, what);
        }
        send_resp(ch, req, HCCL_E_NOT_FOUND, NULL);
        return;
    }
    if (send_resp(ch, req, HCCL_SUCCESS, (const void *)(uintptr_t)req->addr) == 0) g_count.bytes_served += req->len;
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
        if (!ch->srv_stop) serve_one(ch, &q->msg);
        free(q);
    }
}

static void enqueue_serve(channel *ch, const data_msg *m)
{
    serve_req *q = malloc(sizeof *q);
    if (q == NULL) return;
    q->msg = *m;
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
            enqueue_serve(ch, &m);
        } else if (m.type == MSG_READ_RESP) {
            op *o = pop_pending(ch);
            if (wire_check_response(&m, o, &why) != WIRE_OK) {
                if (o) op_complete(o, HCCL_E_NETWORK);
            } else if (m.status == 0 && m.len > 0 && net_recv_all(ch->fd, o->dst, m.len) != 0) {
                op_complete(o, HCCL_E_NETWORK);
                break;
            } else {
                op_complete(o, m.status == 0 ? HCCL_SUCCESS : HCCL_E_NETWORK);
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
    return NULL;
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
    if (ch->nbi) {
        thread_stop(ch->nbi);
        thread_put(ch->nbi);
        ch->nbi = NULL;
    }
}

/* ---- the reader's side ---- */

/* Caller holds a reference on ch. dst must lie in memory this end exchanged and still has registered, src in
 * one region the peer exchanged. */
int channel_check_read(channel *ch, const void *dst, uint64_t src, uint64_t len, uint32_t *ridx)
{
    uint64_t d = (uint64_t)(uintptr_t)dst;
    int local_ok = 0;
    for (uint32_t i = 0; i < ch->nlocal && !local_ok; i++) {
        const region_info *l = &ch->local[i];
        local_ok = d >= l->addr && len <= l->size && d - l->addr <= l->size - len &&
                   atomic_load(&ch->ep->state[l->slot]) == l->cookie;
    }
    if (!local_ok) return HCCL_E_NOT_FOUND;
    int64_t i = wire_find_region(ch->remote, ch->nremote, 0, src, len);
    if (i < 0) return HCCL_E_NOT_FOUND;
    *ridx = (uint32_t)i;
    return HCCL_SUCCESS;
}

static void send_request(channel *ch, op *o)
{
    const region_info *r = &ch->remote[o->ridx];
    data_msg m = {MSG_READ_REQ, 0, 0, o->src, o->len, r->cookie, r->slot, 0};
    pthread_mutex_lock(&ch->wlock);
    pthread_mutex_lock(&ch->pend_mu);
    o->reqid = m.reqid = ++ch->next_reqid;
    o->next = NULL;
    if (ch->pending_tail) ch->pending_tail->next = o;
    else ch->pending_head = o;
    ch->pending_tail = o;
    pthread_mutex_unlock(&ch->pend_mu);
    int rc = net_send_all(ch->fd, &m, sizeof m);
    pthread_mutex_unlock(&ch->wlock);
    if (rc != 0) { /* the receiver fails what is pending once it sees the broken stream */
        atomic_store(&ch->peer_dead, 1);
        shutdown(ch->fd, SHUT_RDWR);
    }
}

static int peer_alive(channel *ch)
{
    if (atomic_load(&ch->peer_dead)) return 0;
    struct pollfd p = {ch->pidfd, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) { /* a pidfd turns readable when the process exits */
        atomic_store(&ch->peer_dead, 1);
        return 0;
    }
    return 1;
}

/* The peer's memfd mapped read-only into this process, or NULL when that is impossible. */
static const uint8_t *peer_mapping(channel *ch, uint32_t ridx)
{
    remote_map *m = &ch->maps[ridx];
    const region_info *r = &ch->remote[ridx];
    pthread_mutex_lock(&ch->pend_mu);
    if (!m->tried && r->memfd >= 0) {
        m->tried = 1;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", ch->peer_pid, r->memfd);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st; /* the region must lie inside the file: a mapping past its end faults when read */
        if (fd >= 0 && fstat(fd, &st) == 0 && r->memfd_off <= (uint64_t)st.st_size &&
            r->size <= (uint64_t)st.st_size - r->memfd_off) {
            uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
            uint64_t start = r->memfd_off & ~(page - 1);
            m->delta = r->memfd_off - start;
            m->len = r->size + m->delta;
            void *p = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, (off_t)start);
            m->base = p == MAP_FAILED ? NULL : p;
        }
        if (fd >= 0) close(fd);
    }
    pthread_mutex_unlock(&ch->pend_mu);
    return m->base ? (const uint8_t *)m->base + m->delta : NULL;
}

static void execute_local(channel *ch, op *o)
{
    const region_info *r = &ch->remote[o->ridx];
    _Atomic uint64_t *live = &ch->peer_state[r->slot];
    if (!peer_alive(ch) || atomic_load(live) != r->cookie) {
        op_complete(o, HCCL_E_NETWORK);
        return;
    }
    const uint8_t *base = peer_mapping(ch, o->ridx);
    if (base != NULL) {
        memcpy(o->dst, base + (o->src - r->addr), o->len);
    } else {
        struct iovec to = {o->dst, o->len}, from = {(void *)(uintptr_t)o->src, o->len};
        if (process_vm_readv(ch->peer_pid, &to, 1, &from, 1, 0) != (ssize_t)o->len) {
            send_request(ch, o); /* not allowed to look into the peer: ask its soft NIC */
            return;
        }
    }
    /* The copy counts only if the owner was alive and still had the region registered throughout. */
    int ok = peer_alive(ch) && atomic_load(live) == r->cookie;
    op_complete(o, ok ? HCCL_SUCCESS : HCCL_E_NETWORK);
}

void channel_execute(channel *ch, op *o)
{
    if (atomic_load(&ch->peer_dead) || ch->destroyed) op_complete(o, HCCL_E_NETWORK);
    else if (ch->tcp) send_request(ch, o);
    else execute_local(ch, o);
}

/* ---- threads (soft streams) ---- */

static void *worker_main(void *arg)
{
    soft_thread *t = arg;
    pthread_setname_np(pthread_self(), "hcomm-stream"); /* visible in top -H, /proc and profilers */
    pthread_mutex_lock(&t->mu);
    for (;;) {
        op *o = take_head(t);
        if (o != NULL) {
            run_taken(t, o);
            continue;
        }
        if (t->head != NULL) { /* a waiter is running the op before it */
            pthread_cond_wait(&t->cv, &t->mu);
            continue;
        }
        if (t->stopping) break;
        /* idle: spin a little (the next read usually follows soon), then sleep until a submit */
        pthread_mutex_unlock(&t->mu);
        int64_t spin_until = soft_now_us() + SOFT_SPIN_US;
        while (__atomic_load_n(&t->head, __ATOMIC_ACQUIRE) == NULL && !__atomic_load_n(&t->stopping, __ATOMIC_ACQUIRE) &&
               soft_now_us() < spin_until)
            sched_yield();
        pthread_mutex_lock(&t->mu);
        while (t->head == NULL && !t->stopping) pthread_cond_wait(&t->cv, &t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

soft_thread *thread_create(int engine, int internal)
{
    soft_thread *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->engine = engine;
    t->internal = internal;
    t->refs = 1;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    pthread_condattr_t attr; /* thread_wait's deadline is on the monotonic clock */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&t->done_cv, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&t->worker, NULL, worker_main, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

/* Stops the worker; queued reads fail. Reads already sent to a peer complete through their channel. Returns once
 * no read of t is being copied any more: a waiter (thread_wait) may be running one when the worker exits, and the
 * caller (HcommThreadFree, HcommChannelDestroy) promises that nothing lands after it returns. */
void thread_stop(soft_thread *t)
{
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->stopping, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->worker, NULL);
    pthread_mutex_lock(&t->mu);
    while (t->running) pthread_cond_wait(&t->cv, &t->mu); /* ops taken from now on fail without a copy */
    pthread_mutex_unlock(&t->mu);
}

void thread_put(soft_thread *t)
{
    pthread_mutex_lock(&g_lock);
    int last = --t->refs == 0;
    pthread_mutex_unlock(&g_lock);
    if (last) {
        pthread_mutex_lock(&t->mu);
        take_errors(t, NULL); /* unreported: they go with the thread */
        pthread_mutex_unlock(&t->mu);
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        pthread_cond_destroy(&t->done_cv);
        free(t);
    }
}

void thread_submit(soft_thread *t, op *o)
{
    o->next = NULL;
    pthread_mutex_lock(&t->mu);
    t->submitted++;
    if (t->stopping) {
        pthread_mutex_unlock(&t->mu);
        op_complete(o, HCCL_E_NOT_FOUND);
        return;
    }
    if (t->tail) t->tail->next = o;
    else __atomic_store_n(&t->head, o, __ATOMIC_RELEASE); /* the idle worker's spin reads head unlocked */
    t->tail = o;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

static soft_thread *thread_get_ref(ThreadHandle h)
{
    pthread_mutex_lock(&g_lock);
    soft_thread *t = handle_get(h, KIND_THREAD);
    if (t) t->refs++;
    pthread_mutex_unlock(&g_lock);
    return t;
}

HCOMM_API HcommResult HcommThreadAlloc(CommEngine engine, uint32_t threadNum, const uint32_t *notifyNumPerThread,
                                       ThreadHandle *threads)
{
    if (threads == NULL) return HCCL_E_PTR;
    if (threadNum == 0 || threadNum > SOFT_MAX_THREADS) return HCCL_E_PARA;
    if (!(engine == COMM_ENGINE_CPU || engine == COMM_ENGINE_CPU_TS || engine == COMM_ENGINE_AICPU_TS))
        return HCCL_E_NOT_SUPPORT;
    /* Callers built against the older scalar form pass the count itself; user pointers are >= 64 KiB. */
    uintptr_t raw = (uintptr_t)notifyNumPerThread;
    uint32_t notifies = raw == 0 ? 0 : raw <= 65535 ? (uint32_t)raw : *notifyNumPerThread;
    if (notifies > SOFT_MAX_NOTIFY) return HCCL_E_PARA;
    soft_thread **made = calloc(threadNum, sizeof *made);
    if (made == NULL) return HCCL_E_MEMORY;
    uint32_t n = 0;
    int32_t rc = HCCL_SUCCESS;
    for (; n < threadNum; n++) {
        made[n] = thread_create(engine, 0);
        if (made[n] == NULL) {
            rc = HCCL_E_MEMORY;
            break;
        }
    }
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; rc == HCCL_SUCCESS && i < threadNum; i++) {
        made[i]->id = handle_put(KIND_THREAD, made[i]);
        if (made[i]->id == 0) rc = HCCL_E_MEMORY;
    }
    if (rc != HCCL_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (made[i]->id) handle_del(made[i]->id);
    pthread_mutex_unlock(&g_lock);
    for (uint32_t i = 0; i < n; i++) {
        if (rc == HCCL_SUCCESS) {
            threads[i] = made[i]->id;
        } else {
            thread_stop(made[i]);
            thread_put(made[i]);
        }
    }
    if (rc == HCCL_SUCCESS) g_count.threads += threadNum;
    free(made);
    return rc;
}

HCOMM_API HcommResult HcommThreadFree(const ThreadHandle *threads, uint32_t threadNum)
{
    if (threads == NULL) return HCCL_E_PTR;
    if (threadNum == 0 || threadNum > SOFT_MAX_THREADS) return HCCL_E_PARA;
    soft_thread *list[SOFT_MAX_THREADS];
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < threadNum; i++) {
        list[i] = handle_get(threads[i], KIND_THREAD);
        for (uint32_t j = 0; list[i] && j < i; j++)
            if (list[j] == list[i]) list[i] = NULL;
        if (list[i] == NULL) {
            pthread_mutex_unlock(&g_lock);
            return HCCL_E_NOT_FOUND;
        }
    }
    for (uint32_t i = 0; i < threadNum; i++) handle_del(list[i]->id);
    pthread_mutex_unlock(&g_lock);
    for (uint32_t i = 0; i < threadNum; i++) {
        thread_stop(list[i]);
        thread_put(list[i]);
    }
    g_count.threads -= threadNum;
    return HCCL_SUCCESS;
}

HCOMM_API HcommResult HcommThreadResGetInfo(ThreadHandle thread, int32_t resType, uint32_t infoLen, void **info)
{
    if (info == NULL) return HCCL_E_PTR;
    if (resType != THREAD_RES_TYPE_STREAM || infoLen != sizeof(aclrtStream)) return HCCL_E_PARA;
    soft_thread *t = thread_get_ref(thread);
    if (t == NULL) return HCCL_E_NOT_FOUND;
    *info = (void *)(uintptr_t)(t->id | STREAM_BIT);
    thread_put(t);
    return HCCL_SUCCESS;
}

/* Soft HComm answers the ACL completion call for its own streams with HComm status codes. */
HCOMM_API int aclrtSynchronizeStream(aclrtStream stream)
{
    uint64_t v = (uint64_t)(uintptr_t)stream;
    if (v == 0) return HCCL_E_PTR;
    if (!(v & STREAM_BIT)) return HCCL_E_NOT_FOUND;
    soft_thread *t = thread_get_ref(v & ~STREAM_BIT);
    if (t == NULL) return HCCL_E_NOT_FOUND;
    int32_t rc = thread_wait(t, NULL);
    thread_put(t);
    return rc;
}

/* ---- batch mode: per calling OS thread, reads are recorded and submitted at End ---- */

static __thread struct {
    int active;
    char tag[256];
    op *head, *tail;
} tl_batch;

HCOMM_API int32_t HcommBatchModeStart(const char *batchTag)
{
    if (tl_batch.active) return HCCL_E_PARA;
    tl_batch.active = 1;
    snprintf(tl_batch.tag, sizeof tl_batch.tag, "%s", batchTag ? batchTag : "");
    tl_batch.head = tl_batch.tail = NULL;
    return HCCL_SUCCESS;
}

HCOMM_API int32_t HcommBatchModeEnd(const char *batchTag)
{
    if (!tl_batch.active || strcmp(tl_batch.tag, batchTag ? batchTag : "") != 0) return HCCL_E_PARA;
    tl_batch.active = 0;
    op *o = tl_batch.head;
    tl_batch.head = tl_batch.tail = NULL;
    while (o) {
        op *next = o->next;
        thread_submit(o->th, o);
        o = next;
    }
    return HCCL_SUCCESS;
}

/* Checks a read and makes its operation (holding references on the channel and the thread). */
static int32_t make_read(soft_thread *t, channel *ch, void *dst, const void *src, uint64_t len, op **out)
{
    if (ch->state != CH_READY) return HCCL_E_ROCE_CONNECT;
    uint32_t ridx = 0;
    int32_t rc = channel_check_read(ch, dst, (uint64_t)(uintptr_t)src, len, &ridx);
    if (rc != HCCL_SUCCESS) return rc;
    op *o = calloc(1, sizeof *o);
    if (o == NULL) return HCCL_E_MEMORY;
    o->ch = ch;
    o->th = t;
    o->dst = dst;
    o->src = (uint64_t)(uintptr_t)src;
    o->len = len;
    o->ridx = ridx;
    pthread_mutex_lock(&g_lock);
    ch->refs++;
    t->refs++;
    pthread_mutex_unlock(&g_lock);
    *out = o;
    return HCCL_SUCCESS;
}

HCOMM_API int32_t HcommReadOnThread(ThreadHandle thread, ChannelHandle channel_handle, void *dst, const void *src,
                                    uint64_t len)
{
    if (thread == 0 || dst == NULL || src == NULL) return HCCL_E_PTR;
    if (len == 0) return HCCL_SUCCESS;
    soft_thread *t = thread_get_ref(thread);
    channel *ch = channel_get_ref(channel_handle);
    int32_t rc = (t == NULL || ch == NULL) ? HCCL_E_NOT_FOUND : HCCL_SUCCESS;
    op *o = NULL;
    if (rc == HCCL_SUCCESS) rc = make_read(t, ch, dst, src, len, &o);
    if (rc == HCCL_SUCCESS) {
        if (tl_batch.active) {
            o->next = NULL;
            if (tl_batch.tail) tl_batch.tail->next = o;
            else tl_batch.head = o;
            tl_batch.tail = o;
        } else {
            thread_submit(t, o);
        }
    }
    if (ch) channel_put(ch);
    if (t) thread_put(t);
    return rc;
}

HCOMM_API int32_t HcommChannelDrainOnThread(ThreadHandle thread, ChannelHandle channel_handle)
{
    if (thread == 0) return HCCL_E_PTR;
    soft_thread *t = thread_get_ref(thread);
    channel *ch = channel_get_ref(channel_handle);
    int32_t rc = (t == NULL || ch == NULL) ? HCCL_E_NOT_FOUND : thread_wait(t, ch);
    if (ch) channel_put(ch);
    if (t) thread_put(t);
    return rc;
}

/* ---- ReadNbi + Fence: the host RoCE flavour (Atlas 350); each channel has its own send queue ---- */

HCOMM_API int32_t HcommReadNbi(ChannelHandle channel_handle, void *dst, const void *src, uint64_t len)
{
    if (dst == NULL || src == NULL) return HCCL_E_PTR;
    if (len == 0) return HCCL_SUCCESS;
    channel *ch = channel_get_ref(channel_handle);
    if (ch == NULL) return HCCL_E_NOT_FOUND;
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&ch->srv_mu);
    if (ch->nbi == NULL && ch->state == CH_READY && !ch->destroyed) {
        ch->nbi = thread_create(ch->engine, 1);
        if (ch->nbi == NULL) rc = HCCL_E_MEMORY;
    }
    soft_thread *q = ch->nbi;
    if (q) thread_ref(q);
    pthread_mutex_unlock(&ch->srv_mu);
    if (rc == HCCL_SUCCESS && q == NULL) rc = HCCL_E_ROCE_CONNECT;
    if (rc == HCCL_SUCCESS) {
        pthread_mutex_lock(&q->mu);
        int full = q->submitted - q->completed >= SOFT_NBI_DEPTH;
        pthread_mutex_unlock(&q->mu);
        op *o = NULL;
        rc = full ? HCCL_E_AGAIN : make_read(q, ch, dst, src, len, &o);
        if (rc == HCCL_SUCCESS) thread_submit(q, o);
    }
    if (q) thread_put(q);
    channel_put(ch);
    return rc;
}

HCOMM_API int32_t HcommReadNbiOnThread(ThreadHandle thread, ChannelHandle channel_handle, void *dst,
                                       const void *src, uint64_t len)
{
    return HcommReadNbi(channel_handle, dst, src, len); /* the host ignores the thread */
}

HCOMM_API int32_t HcommChannelFence(ChannelHandle channel_handle)
{
    channel *ch = channel_get_ref(channel_handle);
    if (ch == NULL) return HCCL_E_NOT_FOUND;
    pthread_mutex_lock(&ch->srv_mu);
    soft_thread *q = ch->nbi;
    if (q) thread_ref(q);
    pthread_mutex_unlock(&ch->srv_mu);
    int32_t rc = q ? thread_wait(q, ch) : HCCL_SUCCESS; /* no ReadNbi posted yet: nothing to complete */
    if (q) thread_put(q);
    channel_put(ch);
    return rc;
}

HCOMM_API int32_t HcommChannelFenceOnThread(ThreadHandle thread, ChannelHandle channel_handle)
{
    return HcommChannelFence(channel_handle);
}

/* ---- declared by the binding, not emulated ---- */

HCOMM_API int32_t HcommWriteOnThread(ThreadHandle thread, ChannelHandle channel_handle, void *dst, const void *src,
                                     uint64_t len)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API int32_t HcommWriteNbi(ChannelHandle channel_handle, void *dst, const void *src, uint64_t len)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API int32_t HcommBatchTransferOnThread(ThreadHandle thread, ChannelHandle channel_handle,
                                             const HcommBatchTransferDesc *descs, uint32_t n)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API int32_t HcommChannelNotifyRecordOnThread(ThreadHandle thread, ChannelHandle channel_handle, uint32_t idx)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API int32_t HcommChannelNotifyWaitOnThread(ThreadHandle thread, ChannelHandle channel_handle, uint32_t idx,
                                                 uint32_t timeOut)
{
    return HCCL_E_NOT_SUPPORT;
}

HCOMM_API HcommResult HcommEndpointCheckFeature(int32_t feature, const EndpointDesc *desc, bool *supported)
{
    return HCCL_E_NOT_SUPPORT;
}
