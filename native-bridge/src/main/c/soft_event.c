/*
 * ACL events (acl_rt.h): an event marks a point of a stream. aclrtRecordEvent queues a task that completes once the
 * stream's earlier tasks completed; aclrtStreamWaitEvent queues a task that holds its stream until the event's
 * latest record (at the time of the call) completed; the host asks without blocking (aclrtQueryEventStatus) or
 * waits (aclrtSynchronizeEventWithTimeout). Records are numbered per event; an event knows the latest record issued,
 * the latest that completed, and the records a reset covers. A record that fails (its stream aborted or ended)
 * completes with that failure: a wait for it, on a stream or on the host, fails with it rather than hanging.
 * Errors are ACL's: NULL or an unknown event or stream ACL_ERROR_INVALID_PARAM, a sync that times out
 * ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, a timeout below -1 ACL_ERROR_RT_PARAM_INVALID, a task on an aborted stream
 * ACL_ERROR_RT_STREAM_ABORT.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "soft_internal.h"

typedef struct soft_event {
    uint64_t id;
    int refs;                  /* under g_lock */
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* on the monotonic clock: a record completed */
    uint64_t recorded;         /* records issued (under mu, as the rest) */
    uint64_t completed;        /* the highest-numbered record that completed */
    uint64_t reset_upto;       /* records up to this one are reset: the event reads as not recorded */
    int32_t failed;            /* how that record failed, or ACL_SUCCESS */
} soft_event;

static soft_event *event_get_ref(aclrtEvent event)
{
    pthread_mutex_lock(&g_lock);
    soft_event *e = event == NULL ? NULL : handle_get((uint64_t)(uintptr_t)event, KIND_EVENT);
    if (e) e->refs++;
    pthread_mutex_unlock(&g_lock);
    return e;
}

static void event_put(soft_event *e)
{
    pthread_mutex_lock(&g_lock);
    int last = --e->refs == 0;
    pthread_mutex_unlock(&g_lock);
    if (last) {
        pthread_mutex_destroy(&e->mu);
        pthread_cond_destroy(&e->cv);
        free(e);
    }
}

HCOMM_API aclError aclrtCreateEvent(aclrtEvent *event)
{
    if (event == NULL) return ACL_ERROR_INVALID_PARAM;
    soft_event *e = calloc(1, sizeof *e);
    if (e == NULL) return ACL_ERROR_RT_MEMORY_ALLOCATION;
    e->refs = 1;
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_lock(&g_lock);
    e->id = handle_put(KIND_EVENT, e);
    pthread_mutex_unlock(&g_lock);
    if (e->id == 0) {
        event_put(e);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    g_count.events++;
    *event = (aclrtEvent)(uintptr_t)e->id;
    return ACL_SUCCESS;
}

/* Tasks still queued that name the event keep it until they complete. */
HCOMM_API aclError aclrtDestroyEvent(aclrtEvent event)
{
    pthread_mutex_lock(&g_lock);
    soft_event *e = event == NULL ? NULL : handle_get((uint64_t)(uintptr_t)event, KIND_EVENT);
    if (e) handle_del(e->id);
    pthread_mutex_unlock(&g_lock);
    if (e == NULL) return ACL_ERROR_INVALID_PARAM;
    g_count.events--;
    event_put(e);
    return ACL_SUCCESS;
}

/* Queues an OP_EV_* task on stream: a record takes the next number, a wait or reset the latest issued. */
static aclError event_task(aclrtEvent event, aclrtStream stream, int kind)
{
    soft_event *e = event_get_ref(event);
    soft_thread *t = stream == NULL ? NULL : stream_thread(stream);
    aclError rc = e == NULL || t == NULL ? ACL_ERROR_INVALID_PARAM : ACL_SUCCESS;
    if (rc == ACL_SUCCESS && __atomic_load_n(&t->aborted, __ATOMIC_ACQUIRE)) rc = ACL_ERROR_RT_STREAM_ABORT;
    op *o = rc == ACL_SUCCESS ? op_new(kind, t, NULL) : NULL;
    if (rc == ACL_SUCCESS && o == NULL) rc = ACL_ERROR_RT_MEMORY_ALLOCATION;
    if (o != NULL) {
        pthread_mutex_lock(&e->mu);
        o->ev_gen = kind == OP_EV_RECORD ? ++e->recorded : e->recorded;
        pthread_mutex_unlock(&e->mu);
        o->ev = e; /* the reference goes with the task */
        e = NULL;
        thread_submit(t, o); /* an ACL task: on the stream now, batch mode or not */
    }
    if (e) event_put(e);
    if (t) thread_put(t);
    return rc;
}

HCOMM_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    return event_task(event, stream, OP_EV_RECORD);
}

/* The stream's later tasks start once the event's latest record so far completed (none yet: no wait). */
HCOMM_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return event_task(event, stream, OP_EV_WAIT);
}

/* A task of the stream: once it ran, the event reads as not recorded until it is recorded again. */
HCOMM_API aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
    return event_task(event, stream, OP_EV_RESET);
}

int32_t event_run(op *o)
{
    soft_event *e = o->ev;
    int32_t rc = HCCL_SUCCESS;
    pthread_mutex_lock(&e->mu);
    switch (o->kind) {
    case OP_EV_RECORD: break; /* event_task_done marks it, as it does a record that fails */
    case OP_EV_RESET:
        if (o->ev_gen > e->reset_upto) e->reset_upto = o->ev_gen;
        break;
    case OP_EV_WAIT:
        while (e->completed < o->ev_gen) {
            if ((rc = thread_halted(o->th)) != HCCL_SUCCESS) break;
            struct timespec ts; /* the stream's stop is looked at every 50 ms */
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 50 * 1000000;
            ts.tv_sec += ts.tv_nsec / 1000000000;
            ts.tv_nsec %= 1000000000;
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        }
        if (rc == HCCL_SUCCESS && e->completed == o->ev_gen) rc = e->failed;
        break;
    default: rc = HCCL_E_INTERNAL;
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void event_task_done(op *o, int32_t code)
{
    soft_event *e = o->ev;
    if (o->kind == OP_EV_RECORD) {
        pthread_mutex_lock(&e->mu);
        if (o->ev_gen > e->completed) {
            e->completed = o->ev_gen;
            e->failed = code;
        }
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
    o->ev = NULL;
    event_put(e);
}

/* COMPLETE once the latest record completed without failure and no reset ran after it; NOT_READY otherwise
 * (never recorded, still queued, failed, or reset). */
HCOMM_API aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    if (status == NULL) return ACL_ERROR_INVALID_PARAM;
    soft_event *e = event_get_ref(event);
    if (e == NULL) return ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&e->mu);
    int done = e->recorded > e->reset_upto && e->completed >= e->recorded && e->failed == ACL_SUCCESS;
    pthread_mutex_unlock(&e->mu);
    *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    event_put(e);
    return ACL_SUCCESS;
}

/* Waits until the event's latest record so far completed: timeout in ms, -1 for as long as it takes, 0 to look
 * once. ACL_SUCCESS (at once when never recorded), the record's failure, or ACL_ERROR_RT_EVENT_SYNC_TIMEOUT. */
HCOMM_API aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
    if (timeout < -1) return ACL_ERROR_RT_PARAM_INVALID;
    soft_event *e = event_get_ref(event);
    if (e == NULL) return ACL_ERROR_INVALID_PARAM;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout > 0) {
        until.tv_sec += timeout / 1000;
        until.tv_nsec += (long)(timeout % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    aclError rc = ACL_SUCCESS;
    pthread_mutex_lock(&e->mu);
    uint64_t target = e->recorded;
    while (e->completed < target) {
        if (timeout == 0) {
            rc = ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
            break;
        }
        if (timeout < 0) pthread_cond_wait(&e->cv, &e->mu);
        else if (pthread_cond_timedwait(&e->cv, &e->mu, &until) == ETIMEDOUT && e->completed < target) {
            rc = ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
            break;
        }
    }
    if (rc == ACL_SUCCESS && target > 0 && e->completed == target) rc = e->failed;
    pthread_mutex_unlock(&e->mu);
    event_put(e);
    return rc;
}

HCOMM_API aclError aclrtSynchronizeEvent(aclrtEvent event) { return aclrtSynchronizeEventWithTimeout(event, -1); }
