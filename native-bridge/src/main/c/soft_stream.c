/*
 * Soft streams: a ThreadHandle is a FIFO of reads run in order by one worker (or by a waiter: thread_wait), and
 * the completion of those reads (op_complete, the failures a drain reports, aclrtSynchronizeStream). The reads
 * are checked, made and run in soft_read.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "soft_internal.h"

#define STREAM_BIT (1ull << 62)

/* ---- completion ---- */

void thread_ref(soft_thread *t)
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

void op_stream_done(op *o)
{
    soft_thread *t = o->th;
    o->stream_done = 1;
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->completed, t->completed + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->done_cv);
    pthread_mutex_unlock(&t->mu);
}

void op_complete(op *o, int32_t code)
{
    soft_thread *t = o->th;
    if (code == HCCL_SUCCESS && o->kind == OP_READ) g_count.bytes_read += o->len;
    pthread_mutex_lock(&t->mu);
    if (code != HCCL_SUCCESS) note_error(t, o->ch ? o->ch->id : 0, code);
    if (!o->stream_done) __atomic_store_n(&t->completed, t->completed + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->done_cv);
    pthread_mutex_unlock(&t->mu);
    if (o->stream_done && o->kind == OP_READ) { /* a delayed read landed (or failed): fenced records and drains on
                                                * its channel go on (a delayed write is ordered at the peer) */
        channel *ch = o->ch;
        pthread_mutex_lock(&ch->pend_mu);
        ch->early_landed++;
        if (code != HCCL_SUCCESS && ch->land_error == HCCL_SUCCESS) ch->land_error = code;
        pthread_cond_broadcast(&ch->notify_cv);
        pthread_mutex_unlock(&ch->pend_mu);
    }
    if (o->ev) event_task_done(o, code);
    if (o->ch) channel_put(o->ch);
    if (o->peer_th) thread_put(o->peer_th);
    thread_put(t);
    free(o);
}

int32_t thread_halted(soft_thread *t)
{
    if (__atomic_load_n(&t->aborted, __ATOMIC_ACQUIRE)) return ACL_ERROR_RT_STREAM_ABORT;
    if (__atomic_load_n(&t->stopping, __ATOMIC_ACQUIRE)) return HCCL_E_NOT_FOUND;
    return HCCL_SUCCESS;
}

op *op_new(int kind, soft_thread *t, channel *ch)
{
    op *o = calloc(1, sizeof *o);
    if (o == NULL) return NULL;
    o->kind = kind;
    o->th = t;
    o->ch = ch;
    pthread_mutex_lock(&g_lock);
    t->refs++;
    if (ch) ch->refs++;
    pthread_mutex_unlock(&g_lock);
    return o;
}

/* ---- the communicator path's stream tasks ---- */

/* Host pointer for an address of a copy: device memory through its hidden mapping, host memory as it is. */
static uint8_t *copy_side(uint64_t addr, uint64_t len, int device)
{
    return device ? device_host_of(addr, len) : (uint8_t *)(uintptr_t)addr;
}

static int32_t run_copy(op *o)
{
    int dir = o->copy_dir; /* 0 host to host, 1 host to device, 2 device to host, 3 device to device */
    uint8_t *dst = copy_side((uint64_t)(uintptr_t)o->dst, o->len, dir == 1 || dir == 3);
    const uint8_t *src = copy_side(o->src, o->len, dir == 2 || dir == 3);
    if (dst == NULL || src == NULL) return HCCL_E_PARA; /* the device memory was freed since the task was queued */
    memmove(dst, src, o->len);
    if (dir == 1) g_count.h2d_bytes += o->len;
    if (dir == 2) g_count.d2h_bytes += o->len;
    return HCCL_SUCCESS;
}

/* Deadline for a wait of timeout_s seconds (0: none), on the monotonic clock in ms. */
static int64_t wait_deadline(uint32_t timeout_s) { return timeout_s ? soft_now_ms() + (int64_t)timeout_s * 1000 : 0; }

static void slice_until(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += ms * 1000000;
    ts->tv_sec += ts->tv_nsec / 1000000000;
    ts->tv_nsec %= 1000000000;
}

/* Waits for notify idx of the channel's end, raised by the peer; checks the stream's stop every 50 ms. */
static int32_t run_channel_wait(op *o)
{
    channel *ch = o->ch;
    int64_t deadline = wait_deadline(o->timeout_s);
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&ch->pend_mu);
    while (ch->notified[o->idx] == 0) {
        if (atomic_load(&ch->peer_dead) || atomic_load(&ch->destroyed)) rc = HCCL_E_NETWORK;
        else if ((rc = thread_halted(o->th)) != HCCL_SUCCESS) break;
        else if (deadline && soft_now_ms() >= deadline) rc = HCCL_E_TIMEOUT;
        if (rc != HCCL_SUCCESS) break;
        struct timespec ts;
        slice_until(&ts, 50);
        pthread_cond_timedwait(&ch->notify_cv, &ch->pend_mu, &ts);
    }
    if (rc == HCCL_SUCCESS) ch->notified[o->idx]--;
    pthread_mutex_unlock(&ch->pend_mu);
    return rc;
}

/* The fence of a channel notify record and of HcommChannelDrainOnThread over ROCE: waits until every read posted on
 * ch so far has landed (with $HCOMM_SOFT_ROCE_LAND_DELAY_MS > 0 a read completes on its stream at post, as a RoCE
 * work request does, and lands later), so a peer that waits on the notify knows the reads before it are done.
 * This is soft HComm's assumption, not CANN's documented behaviour: on A2/A3's host CPU_TS path a channel notify
 * record is a separate RDMA write on the queue pair and nothing in CANN's open sources fences it behind earlier
 * reads (hicann/hcomm transport_ibverbs.cc: TransportIbverbs::Drain is wired for AICPU_TS endpoint channels only,
 * aicpu_ts_roce_channel.cc:275). The communicator path relies on it until the owner writes the data itself.
 * Its first failure, or HCCL_E_TIMEOUT after exec_timeout_ms. */
int32_t channel_await_landed(channel *ch)
{
    soft_config cfg;
    soft_config_get(&cfg);
    int64_t deadline = soft_now_ms() + cfg.exec_timeout_ms;
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&ch->pend_mu);
    uint64_t target = ch->early_posted;
    while (ch->early_landed < target) { /* a channel that ends fails its pending reads: they count as landed */
        if (soft_now_ms() >= deadline) {
            rc = HCCL_E_TIMEOUT;
            break;
        }
        struct timespec ts;
        slice_until(&ts, 50);
        pthread_cond_timedwait(&ch->notify_cv, &ch->pend_mu, &ts);
    }
    if (rc == HCCL_SUCCESS) {
        rc = ch->land_error;
        ch->land_error = HCCL_SUCCESS;
    }
    pthread_mutex_unlock(&ch->pend_mu);
    return rc;
}

static int32_t run_thread_wait(op *o)
{
    soft_thread *t = o->th;
    int64_t deadline = wait_deadline(o->timeout_s);
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&t->mu);
    while (t->notified[o->idx] == 0) {
        if ((rc = thread_halted(t)) != HCCL_SUCCESS) break;
        else if (deadline && soft_now_ms() >= deadline) rc = HCCL_E_TIMEOUT;
        if (rc != HCCL_SUCCESS) break;
        struct timespec ts;
        slice_until(&ts, 50);
        pthread_cond_timedwait(&t->notify_cv, &t->mu, &ts);
    }
    if (rc == HCCL_SUCCESS) t->notified[o->idx]--;
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Stream order: a task other than a read starts once every earlier task of its stream has completed (a read on a
 * TCP channel completes when the peer's answer lands, after op_run returned). Reads still pipeline. */
static int32_t await_earlier(op *o)
{
    soft_thread *t = o->th;
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&t->mu);
    while (t->completed + 1 < o->seq) {
        if ((rc = thread_halted(t)) != HCCL_SUCCESS) break;
        struct timespec ts; /* done_cv is on the monotonic clock */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 50 * 1000000;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&t->done_cv, &t->mu, &ts);
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

static void op_run(op *o)
{
    int32_t rc;
    if (o->kind != OP_READ && (rc = await_earlier(o)) != HCCL_SUCCESS) {
        op_complete(o, rc);
        return;
    }
    switch (o->kind) {
    case OP_READ:
        channel_execute(o->ch, o); /* completes o itself, now or when the peer answers */
        return;
    case OP_WRITE:
        channel_send_write(o->ch, o); /* completed when the peer's soft NIC answers */
        return;
    case OP_COPY: rc = run_copy(o); break;
    case OP_CH_RECORD:
        /* fenced: it leaves only after the channel's earlier reads landed (a soft HComm assumption, see
         * channel_await_landed), unless HCOMM_SOFT_ROCE_READ_FENCE=0 asks for CANN's behaviour */
        rc = o->ch->read_fence ? channel_await_landed(o->ch) : HCCL_SUCCESS;
        if (rc == HCCL_SUCCESS)
            rc = atomic_load(&o->ch->peer_dead) || atomic_load(&o->ch->destroyed) ? HCCL_E_NETWORK
                                                                                  : channel_send_notify(o->ch, o->idx);
        break;
    case OP_CH_WAIT: rc = run_channel_wait(o); break;
    case OP_TH_RECORD: {
        soft_thread *d = o->peer_th;
        pthread_mutex_lock(&d->mu);
        if (soft_notify_flag()) d->notified[o->idx] = 1; /* as a channel's ($HCOMM_SOFT_NOTIFY_FLAG) */
        else d->notified[o->idx]++;
        pthread_cond_broadcast(&d->notify_cv);
        pthread_mutex_unlock(&d->mu);
        rc = HCCL_SUCCESS;
        break;
    }
    case OP_TH_WAIT: rc = run_thread_wait(o); break;
    case OP_EV_RECORD:
    case OP_EV_WAIT:
    case OP_EV_RESET: rc = event_run(o); break;
    default: rc = HCCL_E_INTERNAL;
    }
    op_complete(o, rc);
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

/* Whether a waiter (thread_wait_ms) may run o itself: not a wait on a peer, a thread or an event, which may block
 * far longer than the waiter's own timeout; the worker runs those. */
static int waiter_may_run(const op *o)
{
    return o != NULL && o->kind != OP_CH_WAIT && o->kind != OP_TH_WAIT && o->kind != OP_EV_WAIT;
}

/* Runs o, taken with take_head, then lets the next op start. Called and returns with t->mu held. */
static void run_taken(soft_thread *t, op *o)
{
    int32_t halted = thread_halted(t);
    pthread_mutex_unlock(&t->mu);
    if (halted != HCCL_SUCCESS) op_complete(o, halted);
    else op_run(o);
    pthread_mutex_lock(&t->mu);
    t->running = 0;
    pthread_cond_broadcast(&t->cv); /* the worker, and an aclrtStreamAbort waiting for the running task */
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
    return thread_wait_ms(t, ch, cfg.exec_timeout_ms);
}

int32_t thread_wait_ms(soft_thread *t, channel *ch, int64_t timeout_ms)
{
    return thread_wait_timed(t, ch, timeout_ms, NULL);
}

int32_t thread_wait_timed(soft_thread *t, channel *ch, int64_t timeout_ms, int *expired)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&t->mu);
    uint64_t target = t->submitted;
    int64_t spin_until = soft_now_us() + SOFT_SPIN_US; /* short reads land in microseconds: spin before sleeping */
    int32_t rc = HCCL_SUCCESS;
    while (t->completed < target && rc == HCCL_SUCCESS) {
        if (t->aborted) break;
        op *o = waiter_may_run(t->head) ? take_head(t) : NULL;
        if (o != NULL) {
            g_count.ops_run_by_waiter++;
            run_taken(t, o);
        } else if (soft_now_us() < spin_until) {
            pthread_mutex_unlock(&t->mu);
            sched_yield();
            pthread_mutex_lock(&t->mu);
        } else if (pthread_cond_timedwait(&t->done_cv, &t->mu, &until) == ETIMEDOUT && t->completed < target) {
            rc = HCCL_E_TIMEOUT;
            if (expired) *expired = 1;
        }
    }
    if (t->aborted) rc = ACL_ERROR_RT_STREAM_ABORT; /* an aborted stream can only be destroyed */
    else if (rc == HCCL_SUCCESS) rc = take_errors(t, ch);
    pthread_mutex_unlock(&t->mu);
    return rc;
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
    pthread_cond_init(&t->notify_cv, NULL);
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
        pthread_cond_destroy(&t->notify_cv);
        free(t);
    }
}

void thread_submit(soft_thread *t, op *o)
{
    o->next = NULL;
    pthread_mutex_lock(&t->mu);
    o->seq = ++t->submitted;
    int32_t halted = thread_halted(t);
    if (halted != HCCL_SUCCESS) {
        pthread_mutex_unlock(&t->mu);
        op_complete(o, halted);
        return;
    }
    if (t->tail) t->tail->next = o;
    else __atomic_store_n(&t->head, o, __ATOMIC_RELEASE); /* the idle worker's spin reads head unlocked */
    t->tail = o;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

soft_thread *thread_get_ref(ThreadHandle h)
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
        made[n]->notify_num = notifies;
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
        if (list[i]->comm != 0 || threads[i] != list[i]->id) { /* a communicator's threads (its own, and the
                                                                  * handles HcclThreadAcquireWithStream gave out) */
            pthread_mutex_unlock(&g_lock);
            return HCCL_E_PARA;
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

/* The soft thread behind an ACL stream (aclrtCreateStream, HcommThreadResGetInfo), with a reference; or NULL. */
soft_thread *stream_thread(aclrtStream stream)
{
    uint64_t v = (uint64_t)(uintptr_t)stream;
    return (v & STREAM_BIT) ? thread_get_ref(v & ~STREAM_BIT) : NULL;
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

/* Stops the stream's tasks: the queued ones fail now, the running one (a notify or event wait, say) returns within
 * a poll slice (50 ms), and every later task and sync fails with ACL_ERROR_RT_STREAM_ABORT; the stream can only be
 * destroyed then. Returns once no task of the stream runs. A read already sent to a peer's soft NIC still lands
 * (its bytes are on the wire, as an RDMA work request posted before the abort is). */
HCOMM_API aclError aclrtStreamAbort(aclrtStream stream)
{
    soft_thread *t = stream == NULL ? NULL : stream_thread(stream);
    if (t == NULL) return ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->aborted, 1, __ATOMIC_RELEASE);
    op *queued = t->head;
    __atomic_store_n(&t->head, NULL, __ATOMIC_RELEASE);
    t->tail = NULL;
    pthread_cond_broadcast(&t->cv);
    pthread_cond_broadcast(&t->notify_cv);
    pthread_cond_broadcast(&t->done_cv); /* a sync in progress returns now */
    pthread_mutex_unlock(&t->mu);
    while (queued != NULL) {
        op *next = queued->next;
        op_complete(queued, ACL_ERROR_RT_STREAM_ABORT);
        queued = next;
    }
    pthread_mutex_lock(&t->mu);
    while (t->running) pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    thread_put(t);
    return ACL_SUCCESS;
}
