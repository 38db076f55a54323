/*
 * The data plane. A ThreadHandle is a soft "stream": a FIFO of reads run in order by one worker. A read on a
 * shared-memory channel is a copy by the reader from the owner's memfd (no work by the owner); on a TCP channel
 * it is a request that the owner's soft NIC serves after checking the range against what it exchanged.
 * Completion is observed with HcommChannelDrainOnThread, aclrtSynchronizeStream or HcommChannelFence.
 *
 * This file is the reader's side: checking and running reads, batch mode, ReadNbi + Fence. The streams and
 * completion are in soft_stream.c, the owner's soft NIC and the channel's receiver in soft_nic_server.c, the
 * calls the binding declares but soft HComm does not emulate in soft_unsupported.c. Batch mode is per calling OS
 * thread (thread-local); a read runs on its stream's worker, or on a thread waiting for the stream.
 */
#include <fcntl.h>
#include <poll.h>
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

/* ---- the reader's side ---- */

/* Caller holds a reference on ch. dst must lie in memory this end exchanged and still has registered, src in
 * one region the peer exchanged: on an HCCS channel of a communicator, at this end's own address for it (the one
 * HcclChannelGetHcclBuffer gave), which *peer_addr translates to the owner's. */
int channel_check_read(channel *ch, const void *dst, uint64_t src, uint64_t len, uint32_t *ridx, uint64_t *delta,
                       uint64_t *peer_addr)
{
    uint64_t d = (uint64_t)(uintptr_t)dst;
    int local_ok = 0;
    for (uint32_t i = 0; i < ch->nlocal && !local_ok; i++) {
        const region_info *l = &ch->local[i];
        local_ok = d >= l->addr && len <= l->size && d - l->addr <= l->size - len &&
                   atomic_load(&ch->ep->state[l->slot]) == l->cookie;
        if (local_ok) *delta = l->host_delta;
    }
    /* a communicator's channel reads from the peer's HCCL buffer into one's own; anything else is a bad parameter */
    int32_t outside = ch->comm ? HCCL_E_PARA : HCCL_E_NOT_FOUND;
    if (!local_ok) return outside;
    if (ch->alias_base != 0) { /* an IPC mapping's address, not the owner's: translated as the mapping would */
        if (src < ch->alias_base || len > ch->alias_size || src - ch->alias_base > ch->alias_size - len)
            return HCCL_E_PARA;
        src = ch->remote[0].addr + (src - ch->alias_base);
    }
    int64_t i = wire_find_region(ch->remote, ch->nremote, 0, src, len);
    if (i < 0) return outside;
    *ridx = (uint32_t)i;
    *peer_addr = src;
    return HCCL_SUCCESS;
}

/* Takes room for one more unanswered request (write bytes of them: bytes) in the channel's window, waiting while
 * SOFT_SERVE_QUEUE_MAX requests or SOFT_SERVE_QUEUE_BYTES write bytes are unanswered: the peer's soft NIC then never
 * has more queued than it takes without stopping to read its socket. 0, or -1 when the channel ends first. */
static int window_take(channel *ch, uint64_t bytes)
{
    pthread_mutex_lock(&ch->pend_mu);
    int ended = 0;
    while (!(ended = atomic_load(&ch->peer_dead) || atomic_load(&ch->destroyed)) &&
           (ch->pend_n >= SOFT_SERVE_QUEUE_MAX || ch->pend_bytes + bytes > SOFT_SERVE_QUEUE_BYTES)) {
        struct timespec ts; /* the end of the channel is also looked at every 50 ms */
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&ch->window_cv, &ch->pend_mu, &ts);
    }
    if (!ended) {
        ch->pend_n++; /* given back by pop_pending when the answer (or the channel's end) comes */
        ch->pend_bytes += bytes;
    }
    pthread_mutex_unlock(&ch->pend_mu);
    return ended ? -1 : 0;
}

/* A request to the peer's soft NIC, pending until its answer: a read, or a write carrying its bytes (o->dst).
 * It is pending before its bytes go out (the answer must find it), so the receiver, or a destroy failing what is
 * pending, may complete o, and drop o's reference on ch, while the send still waits for room: the sender holds a
 * reference of its own, and reads nothing of o from then on. Once the channel has ended nothing becomes pending (the
 * receiver and the destroy fail what is pending for the last time after the end): o fails here. */
static void send_request(channel *ch, op *o)
{
    const region_info *r = &ch->remote[o->ridx];
    int write = o->kind == OP_WRITE;
    const uint8_t *bytes = o->dst;
    uint64_t len = o->len;
    data_msg m = {write ? MSG_WRITE_REQ : MSG_READ_REQ, 0, 0, o->src, len, r->cookie, r->slot, 0};
    if (window_take(ch, write ? len : 0) != 0) {
        op_complete(o, HCCL_E_NETWORK);
        return;
    }
    channel_ref(ch);
    pthread_mutex_lock(&ch->wlock);
    pthread_mutex_lock(&ch->pend_mu);
    int ended = atomic_load(&ch->peer_dead) || atomic_load(&ch->destroyed);
    if (ended) { /* no answer will come to give its room in the window back */
        ch->pend_n--;
        if (write) ch->pend_bytes -= len;
    } else {
        o->reqid = m.reqid = ++ch->next_reqid;
        if (!write && ch->land_delay_ms > 0) { /* RoCE: the stream sees the post; the bytes land later */
            o->land_at_ms = soft_now_ms() + ch->land_delay_ms;
            ch->early_posted++;
            op_stream_done(o);
        } else if (write && ch->land_delay_ms > 0) { /* the peer lands it later, before what follows it there */
            op_stream_done(o);
        }
        o->next = NULL;
        if (ch->pending_tail) ch->pending_tail->next = o;
        else ch->pending_head = o;
        ch->pending_tail = o;
    }
    pthread_mutex_unlock(&ch->pend_mu);
    int rc = ended ? -1 : net_send_flags(ch->fd, &m, sizeof m, write ? MSG_MORE : 0);
    if (rc == 0 && write) rc = net_send_all(ch->fd, bytes, len);
    pthread_mutex_unlock(&ch->wlock);
    if (ended) {
        op_complete(o, HCCL_E_NETWORK);
    } else if (rc != 0) { /* the receiver fails what is pending once it sees the broken stream */
        atomic_store(&ch->peer_dead, 1);
        shutdown(ch->fd, SHUT_RDWR);
    }
    channel_put(ch);
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

void channel_send_write(channel *ch, op *o)
{
    if (atomic_load(&ch->peer_dead) || ch->destroyed) op_complete(o, HCCL_E_NETWORK);
    else send_request(ch, o);
}

void channel_execute(channel *ch, op *o)
{
    if (atomic_load(&ch->peer_dead) || ch->destroyed) op_complete(o, HCCL_E_NETWORK);
    else if (ch->tcp) send_request(ch, o);
    else execute_local(ch, o);
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

static void batch_append(op *o)
{
    o->next = NULL;
    if (tl_batch.tail) tl_batch.tail->next = o;
    else tl_batch.head = o;
    tl_batch.tail = o;
}

int32_t stream_task(soft_thread *t, op *o)
{
    if (tl_batch.active) batch_append(o);
    else thread_submit(t, o);
    return HCCL_SUCCESS;
}

/* Checks a read and makes its operation (holding references on the channel and the thread). */
static int32_t make_read(soft_thread *t, channel *ch, void *dst, const void *src, uint64_t len, op **out)
{
    if (ch->state != CH_READY) return HCCL_E_ROCE_CONNECT;
    uint32_t ridx = 0;
    uint64_t delta = 0, at = 0;
    int32_t rc = channel_check_read(ch, dst, (uint64_t)(uintptr_t)src, len, &ridx, &delta, &at);
    if (rc != HCCL_SUCCESS) return rc;
    op *o = op_new(OP_READ, t, ch);
    if (o == NULL) return HCCL_E_MEMORY;
    o->dst = (uint8_t *)dst + delta; /* device memory: where this process reaches it */
    o->src = at;                     /* the owner's address */
    o->len = len;
    o->ridx = ridx;
    *out = o;
    return HCCL_SUCCESS;
}

HCOMM_API int32_t HcommReadOnThread(ThreadHandle thread, ChannelHandle channel_handle, void *dst, const void *src,
                                    uint64_t len)
{
    if (thread == 0 || dst == NULL || src == NULL) return HCCL_E_PTR;
    int32_t mode = soft_batch_required(tl_batch.active); /* batch mode is mandatory on A2/A3 */
    if (mode != HCCL_SUCCESS) return mode;
    if (len == 0) return HCCL_SUCCESS;
    soft_thread *t = thread_get_ref(thread);
    channel *ch = channel_get_ref(channel_handle);
    int32_t rc = (t == NULL || ch == NULL) ? HCCL_E_NOT_FOUND : HCCL_SUCCESS;
    op *o = NULL;
    if (rc == HCCL_SUCCESS) rc = make_read(t, ch, dst, src, len, &o);
    if (rc == HCCL_SUCCESS) {
        stream_task(t, o);
    }
    if (ch) channel_put(ch);
    if (t) thread_put(t);
    return rc;
}

/* ---- the communicator path's other stream tasks: writes, local copies and notifies ---- */

/* One-sided writes from this end's HCCL buffer into the peer's, through the peer's soft NIC (shared memory is mapped
 * read-only), in pieces of at most WIRE_MAX_WRITE; communicator channels only. */
HCOMM_API int32_t HcommWriteOnThread(ThreadHandle thread, ChannelHandle channel_handle, void *dst, const void *src,
                                     uint64_t len)
{
    if (thread == 0 || dst == NULL || src == NULL) return HCCL_E_PTR;
    int32_t rc = soft_batch_required(tl_batch.active);
    if (rc != HCCL_SUCCESS || len == 0) return rc;
    soft_thread *t = thread_get_ref(thread);
    channel *ch = channel_get_ref(channel_handle);
    uint32_t ridx = 0;
    uint64_t delta = 0, peer_dst = 0;
    if (t == NULL || ch == NULL) rc = HCCL_E_NOT_FOUND;
    else if (ch->comm == 0) rc = HCCL_E_NOT_SUPPORT; /* soft HComm writes on the communicator path only */
    else if (ch->state != CH_READY) rc = HCCL_E_ROCE_CONNECT;
    else rc = channel_check_read(ch, src, (uint64_t)(uintptr_t)dst, len, &ridx, &delta, &peer_dst); /* mirrored */
    for (uint64_t at = 0; rc == HCCL_SUCCESS && at < len; at += WIRE_MAX_WRITE) {
        uint64_t piece = len - at < WIRE_MAX_WRITE ? len - at : WIRE_MAX_WRITE;
        op *o = op_new(OP_WRITE, t, ch);
        if (o == NULL) {
            rc = HCCL_E_MEMORY;
            break;
        }
        o->dst = (uint8_t *)src + delta + at; /* this end's bytes, where the process reaches them */
        o->src = peer_dst + at;
        o->len = piece;
        o->ridx = ridx;
        rc = stream_task(t, o);
    }
    if (ch) channel_put(ch);
    if (t) thread_put(t);
    return rc;
}

HCOMM_API int32_t HcommLocalCopyOnThread(ThreadHandle thread, void *dst, const void *src, uint64_t len)
{
    if (thread == 0 || dst == NULL || src == NULL) return HCCL_E_PTR;
    int32_t rc = soft_batch_required(tl_batch.active);
    if (rc != HCCL_SUCCESS || len == 0) return rc;
    /* device memory to device memory: HCCL buffers (a user buffer on a real card; soft HComm has no other) */
    if (device_host_of((uint64_t)(uintptr_t)dst, len) == NULL || device_host_of((uint64_t)(uintptr_t)src, len) == NULL)
        return HCCL_E_PARA;
    soft_thread *t = thread_get_ref(thread);
    if (t == NULL) return HCCL_E_NOT_FOUND;
    op *o = op_new(OP_COPY, t, NULL);
    if (o == NULL) rc = HCCL_E_MEMORY;
    else {
        o->dst = dst;
        o->src = (uint64_t)(uintptr_t)src;
        o->len = len;
        o->copy_dir = 3;
        rc = stream_task(t, o);
    }
    thread_put(t);
    return rc;
}

/* A notify task on (thread, channel): checks shared by record and wait. */
static int32_t channel_notify_task(ThreadHandle thread, ChannelHandle channel_handle, uint32_t idx, int kind,
                                   uint32_t timeout_s)
{
    if (thread == 0) return HCCL_E_PTR;
    int32_t rc = soft_batch_required(tl_batch.active);
    if (rc != HCCL_SUCCESS) return rc;
    soft_thread *t = thread_get_ref(thread);
    channel *ch = channel_get_ref(channel_handle);
    if (t == NULL || ch == NULL) rc = HCCL_E_NOT_FOUND;
    else if (ch->state != CH_READY) rc = HCCL_E_ROCE_CONNECT;
    else if (idx >= ch->notify_num) rc = HCCL_E_PARA;
    op *o = rc == HCCL_SUCCESS ? op_new(kind, t, ch) : NULL;
    if (rc == HCCL_SUCCESS && o == NULL) rc = HCCL_E_MEMORY;
    if (o != NULL) {
        o->idx = idx;
        o->timeout_s = timeout_s;
        rc = stream_task(t, o);
    }
    if (ch) channel_put(ch);
    if (t) thread_put(t);
    return rc;
}

HCOMM_API int32_t HcommChannelNotifyRecordOnThread(ThreadHandle thread, ChannelHandle channel_handle, uint32_t idx)
{
    return channel_notify_task(thread, channel_handle, idx, OP_CH_RECORD, 0);
}

HCOMM_API int32_t HcommChannelNotifyWaitOnThread(ThreadHandle thread, ChannelHandle channel_handle, uint32_t idx,
                                                 uint32_t timeOut)
{
    return channel_notify_task(thread, channel_handle, idx, OP_CH_WAIT, timeOut);
}

HCOMM_API int32_t HcommThreadNotifyRecordOnThread(ThreadHandle thread, ThreadHandle dstThread, uint32_t dstNotifyIdx)
{
    if (thread == 0 || dstThread == 0) return HCCL_E_PTR;
    int32_t rc = soft_batch_required(tl_batch.active);
    if (rc != HCCL_SUCCESS) return rc;
    soft_thread *t = thread_get_ref(thread), *d = thread_get_ref(dstThread);
    if (t == NULL || d == NULL) rc = HCCL_E_NOT_FOUND;
    else if (dstNotifyIdx >= d->notify_num) rc = HCCL_E_PARA;
    op *o = rc == HCCL_SUCCESS ? op_new(OP_TH_RECORD, t, NULL) : NULL;
    if (rc == HCCL_SUCCESS && o == NULL) rc = HCCL_E_MEMORY;
    if (o != NULL) {
        o->idx = dstNotifyIdx;
        o->peer_th = d; /* the reference goes with the task */
        d = NULL;
        rc = stream_task(t, o);
    }
    if (d) thread_put(d);
    if (t) thread_put(t);
    return rc;
}

HCOMM_API int32_t HcommThreadNotifyWaitOnThread(ThreadHandle thread, uint32_t notifyIdx, uint32_t timeOut)
{
    if (thread == 0) return HCCL_E_PTR;
    int32_t rc = soft_batch_required(tl_batch.active);
    if (rc != HCCL_SUCCESS) return rc;
    soft_thread *t = thread_get_ref(thread);
    if (t == NULL) return HCCL_E_NOT_FOUND;
    if (notifyIdx >= t->notify_num) rc = HCCL_E_PARA;
    op *o = rc == HCCL_SUCCESS ? op_new(OP_TH_WAIT, t, NULL) : NULL;
    if (rc == HCCL_SUCCESS && o == NULL) rc = HCCL_E_MEMORY;
    if (o != NULL) {
        o->idx = notifyIdx;
        o->timeout_s = timeOut;
        rc = stream_task(t, o);
    }
    thread_put(t);
    return rc;
}

HCOMM_API int32_t HcommChannelDrainOnThread(ThreadHandle thread, ChannelHandle channel_handle)
{
    if (thread == 0) return HCCL_E_PTR;
    soft_thread *t = thread_get_ref(thread);
    channel *ch = channel_get_ref(channel_handle);
    int32_t rc = (t == NULL || ch == NULL) ? HCCL_E_NOT_FOUND : thread_wait(t, ch);
    if (rc == HCCL_SUCCESS) rc = channel_await_landed(ch); /* and what the stream counted at post has landed */
    if (ch) channel_put(ch);
    if (t) thread_put(t);
    return rc;
}

/* ---- ReadNbi + Fence: the host RoCE flavour (Atlas 350); each channel has its own send queue ---- */

HCOMM_API int32_t HcommReadNbi(ChannelHandle channel_handle, void *dst, const void *src, uint64_t len)
{
    if (dst == NULL || src == NULL) return HCCL_E_PTR;
    int32_t allowed = soft_atlas350_only(); /* ReadNbi and the fences are Atlas 350's */
    if (allowed != HCCL_SUCCESS) return allowed;
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
    int32_t allowed = soft_atlas350_only(); /* ReadNbi and the fences are Atlas 350's */
    if (allowed != HCCL_SUCCESS) return allowed;
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
