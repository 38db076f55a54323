/*
 * soft HComm internals. One global lock guards the handle table and all object metadata; data copies and
 * socket I/O happen outside it, with references held. Objects are reached only through handles, so a stale
 * or forged handle is HCCL_E_NOT_FOUND, never a crash.
 */
#ifndef SOFT_INTERNAL_H
#define SOFT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include "hcomm_api.h"
#include "hcomm_soft.h"

#define SOFT_VERSION "soft-hcomm 0.1.0 abi-v4"
#define SOFT_TAG_MAX 64
#define SOFT_STATE_SLOTS 65536u      /* registrations per endpoint */
#define SOFT_NBI_DEPTH 4096u         /* outstanding ReadNbi operations per channel (a finite send queue) */
#define SOFT_MAX_THREADS 1000u
#define SOFT_MAX_NOTIFY 64u
#define SOFT_HOST_ID_LEN 72
#define SOFT_SPIN_US 50               /* completion and queue waits spin this long before sleeping */
/* Connections per endpoint whose hello is still coming: at most SOFT_MAX_UNVERIFIED, and SOFT_MAX_UNVERIFIED_PER_ADDR
 * from one source address; past either, a new connection takes the slot of the one silent the longest. */
#define SOFT_MAX_UNVERIFIED 1024u
#define SOFT_MAX_UNVERIFIED_PER_ADDR 256u
#define SOFT_HELLO_MS 5000           /* a hello whose bytes stop this long before it is whole is dropped */
#define SOFT_HANDSHAKE_MS 10000      /* default handshake_timeout_ms: a whole hello (or a join at a root) by then */
#define SOFT_HELLO_BUDGET (64u << 20) /* bytes per endpoint buffering hellos that are still coming */
/* A channel's soft NIC takes at most this many of the peer's requests, and this many bytes of its writes, before it
 * has served them (the one being served included); past either it stops reading the socket until the queue drains
 * (TCP backpressure). A reader keeps at most as many requests (and write bytes) unanswered on a channel, so a soft
 * HComm peer never meets the bound, and two ends that read each other heavily cannot both stop reading. */
#define SOFT_SERVE_QUEUE_MAX 1024u
#define SOFT_SERVE_QUEUE_BYTES (16u << 20)
/* Answers of at least this many bytes go out with MSG_ZEROCOPY (the kernel reads the registered pages itself; the
 * registration stays pinned until its completion), until the kernel reports for the channel that it copied anyway
 * (loopback, veth: then plain send(), which costs less than a deferred copy). At most SOFT_ZC_PENDING answers per
 * channel wait for their completion; more are copied. */
#define SOFT_ZC_MIN (16u << 10)
#define SOFT_ZC_PENDING 256u

/* ThreadSanitizer annotations (libtsan's entry points; nothing in other builds), for orderings TSan cannot see:
 * causality through another process (a peer's notify sent after it received what this process served), and the
 * delayed landing of a RoCE read, a device's write that the host is not ordered with by design. */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define SOFT_TSAN_ACQUIRE(a) __tsan_acquire(a)
#define SOFT_TSAN_RELEASE(a) __tsan_release(a)
#define SOFT_TSAN_IGNORE_BEGIN() __tsan_ignore_thread_begin()
#define SOFT_TSAN_IGNORE_END() __tsan_ignore_thread_end()
#else
#define SOFT_TSAN_ACQUIRE(a) ((void)(a))
#define SOFT_TSAN_RELEASE(a) ((void)(a))
#define SOFT_TSAN_IGNORE_BEGIN() ((void)0)
#define SOFT_TSAN_IGNORE_END() ((void)0)
#endif

enum obj_kind { KIND_ENDPOINT = 1, KIND_MEM = 2, KIND_CHANNEL = 3, KIND_THREAD = 4, KIND_COMM = 5, KIND_EVENT = 6 };

/* ---- configuration and process identity (soft_core.c) ---- */
typedef struct {
    char secret[256];
    int force_tcp;
    int64_t exec_timeout_ms;
    int64_t connect_timeout_ms;
    int64_t handshake_timeout_ms; /* an accepted connection's whole hello (a rank's join) within this, else dropped */
    int zerocopy;             /* 1: the soft NIC may answer with MSG_ZEROCOPY (HCOMM_SOFT_ZEROCOPY, key "zerocopy") */
    char if_ip[16];           /* HCCL_IF_IP or "if_ip": the address communicators listen and connect on */
} soft_config;

void soft_init(void);
void soft_config_get(soft_config *out);

/* The Ascend product soft HComm behaves like (soft_profile.c; HCOMM_SOFT_SOC, default Atlas 350). */
typedef enum { SOFT_PRODUCT_ATLAS350, SOFT_PRODUCT_A2, SOFT_PRODUCT_A3, SOFT_PRODUCT_UNKNOWN } soft_product;
soft_product soft_product_now(void);
/* Sets the profile from a SoC name (HcommSoftConfigure "soc"); NULL or "" is the default. */
int32_t soft_profile_set(const char *soc);
/* HCCL_SUCCESS where the profile offers what CANN documents for Atlas 350 only, else the code CANN answers. */
int32_t soft_atlas350_only(void);
/* HCCL_SUCCESS for a data-plane call in batch mode, or outside it where the profile allows that (Atlas 350). */
int32_t soft_batch_required(int in_batch);
const char *soft_host_id(void);
uint64_t soft_start_time(int pid);
int64_t soft_now_ms(void);
int64_t soft_now_us(void);
uint64_t soft_random64(void);
void soft_random_bytes(void *buf, size_t n);

extern pthread_mutex_t g_lock;
typedef struct {
    atomic_uint_fast64_t endpoints, regions, allocations, imports, channels, threads, bytes_served, bytes_read,
        ops_run_by_waiter, comms, device_bytes, h2d_bytes, d2h_bytes, notifies, events, host_bytes;
} soft_counters;
extern soft_counters g_count;

/* Handle table: 64-bit handles -> objects, guarded by g_lock. */
uint64_t handle_put(enum obj_kind kind, void *obj);
void *handle_get(uint64_t handle, enum obj_kind kind);
void handle_del(uint64_t handle);

/* ---- SHA-256 (soft_sha256.c), for the handshake proof ---- */
void soft_sha256(const void *const *parts, const size_t *lens, int nparts, uint8_t out[32]);

/* ---- socket helpers (soft_net.c) ---- */
int net_send_all(int fd, const void *buf, size_t len);
int net_send_flags(int fd, const void *buf, size_t len, int flags);
int net_recv_all(int fd, void *buf, size_t len);
void net_set_timeout(int fd, int64_t ms);

/* ---- memory (soft_mem.c) ---- */
typedef struct registration {
    struct registration *next;
    uint64_t addr, size;
    int32_t type;
    char tag[SOFT_TAG_MAX];
    uint64_t cookie;      /* non-zero while live; published in the endpoint's state table */
    uint32_t slot;
    int memfd;            /* -1 when the memory did not come from HcommMemAlloc */
    uint64_t memfd_off;
    uint64_t host_delta;  /* where the bytes are for this process: addr + host_delta (non-zero for device memory) */
    int handles;          /* handles (aliases included) sharing this registration */
    int inflight;         /* soft NIC sends reading this memory right now */
} registration;

typedef struct mem_handle {
    uint64_t id;
    struct endpoint *ep;
    registration *reg;
    uint64_t addr, size;  /* the handle's own range (an alias may be a sub-range) */
    uint8_t *export_desc;
    uint32_t export_len;
    struct mem_handle *next;
} mem_handle;

/* What one end of a channel knows of a region: its own (local) or the peer's (remote). */
typedef struct {
    uint64_t addr, size, cookie, memfd_off;
    uint64_t host_delta;  /* local regions only: addr + host_delta is where this process reaches the bytes */
    uint32_t slot;
    int32_t type;
    int32_t memfd;
    char tag[SOFT_TAG_MAX];
} region_info;

int mem_find_alloc(uint64_t addr, uint64_t size, int *fd, uint64_t *off, uint64_t *host_delta);

/* ---- soft device memory (soft_mem.c): HCCL buffers, not mapped for the host at their device address ---- */
/* Allocates size bytes on device dev: *dev_addr (PROT_NONE for the host), backed by a memfd mapped hidden. */
int32_t device_alloc(int32_t dev, uint64_t size, void **dev_addr);
void device_free(void *dev_addr);
/* The host mapping of [addr, addr + len) when it lies in one device allocation, else NULL. */
uint8_t *device_host_of(uint64_t addr, uint64_t len);
/* The device the calling OS thread set (aclrtSetDevice), or -1. */
int32_t acl_current_device(void);
registration *reg_find_live(struct endpoint *ep, uint64_t addr, uint64_t len, uint32_t slot, uint64_t cookie);
void reg_release_inflight(registration *r);
void endpoint_drop_regions(struct endpoint *ep);
void endpoint_drop_imports(struct endpoint *ep);
void endpoint_revoke_fd_locked(struct endpoint *ep, int fd);
void endpoints_revoke_fd(int fd);

/* A hello arriving on a socket, gathered without blocking as its bytes come (soft_wire.c). */
typedef struct hello_rx {
    uint8_t *buf;
    size_t have, cap;          /* cap grows with what has arrived, never past the size the hello declares */
    int64_t last_ms;           /* when its latest bytes came; 0 before the first */
} hello_rx;

/* ---- endpoints (soft_endpoint.c) ---- */
typedef struct parked_conn {
    struct parked_conn *next;
    int fd;
    uint32_t addr;             /* the client's IPv4 address (network byte order) */
    uint64_t seq;              /* accept order (ties of accepted_ms) */
    int64_t accepted_ms;
    int64_t hello_deadline_ms; /* its whole hello by then (the handshake timeout), else dropped */
    int64_t deadline_ms;       /* 0: dropped, reaped next */
    const char *evicted;       /* why a newer connection took its slot (logged when reaped), or NULL */
    int hello_ok;
    uint8_t nonce[16];
    hello_rx rx;               /* the client's hello while it arrives (listener thread only) */
    struct hello_msg *hello;   /* the client's verified hello */
    char peer[24];             /* the client's address, for the log */
} parked_conn;

typedef struct import_entry {
    struct import_entry *next;
    uint64_t cookie, addr, size;
    uint32_t pid;
} import_entry;

typedef struct endpoint {
    uint64_t id;
    EndpointDesc desc;
    uint32_t ip;              /* network byte order */
    int listen_fd;
    uint16_t listen_port;
    int wake[2];
    int stopping;
    pthread_t nic;
    registration *regs;
    mem_handle *handles;
    import_entry *imports;
    parked_conn *parked;
    size_t hello_budget;      /* of SOFT_HELLO_BUDGET, what hellos still coming may take (listener thread only) */
    uint64_t accepted;        /* connections accepted so far (listener thread only) */
    _Atomic uint64_t *state;  /* SOFT_STATE_SLOTS cookies, memfd-backed so same-host peers can check liveness */
    int state_fd;
    uint32_t state_next;
    int channels;
    struct endpoint *next_ep;  /* all live endpoints, for HcommMemFree */
} endpoint;

endpoint *endpoint_get(EndpointHandle h);
void endpoint_wake(endpoint *ep);

/* ---- channels and the data plane (soft_channel.c, soft_nic_server.c, soft_read.c, soft_stream.c) ---- */
struct hello_msg;
struct soft_thread;

/* A task of a soft stream: OP_READ on both paths; the others are the communicator path's stream tasks
 * (soft_stream.c runs them; the ACL events' OP_EV_* in soft_event.c). */
enum op_kind { OP_READ = 0, OP_COPY, OP_CH_RECORD, OP_CH_WAIT, OP_TH_RECORD, OP_TH_WAIT, OP_WRITE, OP_EV_RECORD,
               OP_EV_WAIT, OP_EV_RESET };
struct soft_event;

typedef struct op {
    struct op *next;
    int kind;
    struct channel *ch;        /* OP_READ, OP_CH_*: a reference; NULL otherwise */
    struct soft_thread *th;
    uint8_t *dst;              /* OP_READ, OP_COPY: where this process writes the bytes; OP_WRITE: the bytes */
    uint64_t src, len;         /* OP_COPY: src is a pointer of this process; OP_WRITE: the peer's address */
    uint32_t ridx;             /* index of the peer region holding src */
    uint64_t reqid;
    uint32_t idx;              /* OP_*_RECORD, OP_*_WAIT: the notify */
    uint32_t timeout_s;        /* OP_*_WAIT: 0 waits as long as the peer lives */
    struct soft_thread *peer_th; /* OP_TH_RECORD: the thread whose notify is raised (a reference) */
    int32_t copy_dir;          /* OP_COPY: 1 host to device, 2 device to host, else 0 (counted so) */
    uint64_t seq;              /* its place on the stream: 1 + the tasks submitted before it */
    int stream_done;           /* OP_READ with a landing delay: counted complete on its stream at post */
    int64_t land_at_ms;        /* such a read's bytes land no earlier than this (soft_now_ms) */
    struct soft_event *ev;     /* OP_EV_*: the event (a reference, dropped by op_complete) */
    uint64_t ev_gen;           /* OP_EV_RECORD: the record's number; OP_EV_WAIT, OP_EV_RESET: the records it covers */
} op;

enum ch_state { CH_NEW, CH_CONNECTING, CH_WAIT_NONCE, CH_WAIT_HELLO, CH_WAIT_PEER, CH_READY, CH_FAILED, CH_TIMEOUT };

typedef struct remote_map {
    void *base;          /* mapping of the peer's memfd, or NULL when unmappable */
    size_t len;
    uint64_t delta;      /* region start inside the mapping */
    int tried;
} remote_map;

typedef struct channel {
    uint64_t id;
    endpoint *ep;
    int engine;
    int role;
    uint16_t port;
    uint32_t remote_ip;
    char name[HCOMM_CHANNEL_NAME_MAX_LEN + 1];
    enum ch_state state;
    int64_t deadline_ms;
    int64_t retry_at_ms;
    int fd;
    uint8_t my_nonce[16], peer_nonce[16];
    hello_rx hrx;              /* the server's hello while it arrives (CLIENT role) */
    region_info *local;
    uint32_t nlocal;
    region_info *remote;
    uint32_t nremote;
    remote_map *maps;
    int tcp;                   /* this end reads through the peer's soft NIC */
    int peer_pid;
    int pidfd;
    _Atomic uint64_t *peer_state;
    int refs;
    atomic_int destroyed;      /* set by HcommChannelDestroy under g_lock; read by workers and readers without it */
    atomic_int peer_dead;
    /* receive side of the socket */
    pthread_t rx;
    int rx_started;
    pthread_mutex_t wlock;     /* one writer at a time on fd */
    pthread_mutex_t pend_mu;   /* pending list and lazy peer mappings */
    op *pending_head, *pending_tail;   /* TCP reads awaiting the peer's answer, in order */
    uint64_t next_reqid;
    uint32_t pend_n;           /* requests sent (or about to be) and not answered: at most SOFT_SERVE_QUEUE_MAX */
    uint64_t pend_bytes;       /* of them, write bytes: at most SOFT_SERVE_QUEUE_BYTES */
    pthread_cond_t window_cv;  /* a request answered, or the channel ends */
    /* soft NIC serving side (started at the first request) */
    pthread_t server;
    int server_started;
    pthread_mutex_t srv_mu;
    pthread_cond_t srv_cv;
    pthread_cond_t srv_room_cv; /* room in the queue, or the channel ends: the receiver reads on */
    struct serve_req *srv_head, *srv_tail;
    uint32_t srv_n;            /* requests taken and not yet served: at most SOFT_SERVE_QUEUE_MAX */
    uint64_t srv_bytes;        /* their write bytes: at most SOFT_SERVE_QUEUE_BYTES */
    int srv_stop;
    int srv_closing;           /* the channel ends: the receiver waits for no room */
    struct zc_send *zc_head, *zc_tail; /* answers whose pages the kernel may still read (the server thread's) */
    uint32_t zc_count;         /* entries of that list */
    uint32_t zc_next;          /* MSG_ZEROCOPY ids the socket has handed out */
    int zc;                    /* ZC_UNTRIED, ZC_ON, ZC_OFF (soft_nic_server.c) */
    /* ReadNbi queue */
    struct soft_thread *nbi;
    /* communicator channels (soft_comm.c) */
    uint64_t comm;             /* the communicator's handle, 0 for an endpoint channel */
    int want_tcp;              /* protocol ROCE: always through the soft NIC, as a RoCE loopback would */
    uint32_t notify_num;
    uint32_t notified[HCCL_CHANNEL_NOTIFY_MAX]; /* raised by the peer, not yet taken by a wait (under pend_mu) */
    int notify_flag;           /* a notify is a flag (at most 1 raised), as CANN's ($HCOMM_SOFT_NOTIFY_FLAG=1) */
    pthread_cond_t notify_cv;  /* also broadcast when a delayed read lands */
    /* HCCS: the reader's own address for the peer's HCCL buffer (an IPC mapping's stand-in, PROT_NONE), set before
     * HcclChannelAcquire returns the handle; data-plane addresses of the peer must lie in it. 0: none (ROCE). */
    uint64_t alias_base, alias_size;
    /* ROCE: reads complete on their stream at post and land land_delay_ms later ($HCOMM_SOFT_ROCE_LAND_DELAY_MS);
     * counts under pend_mu, for the notify record and drain that wait for earlier reads to land */
    int64_t land_delay_ms;
    int read_fence;            /* a notify record waits for the earlier reads to land ($HCOMM_SOFT_ROCE_READ_FENCE) */
    uint64_t early_posted, early_landed;
    int32_t land_error;        /* the first failure of such a read, reported by the next fenced record or drain */
} channel;

/* $HCOMM_SOFT_NOTIFY_FLAG=1: notifies are flags, as CANN's; read when a channel is made and at a thread notify. */
int soft_notify_flag(void);
channel *channel_get_ref(ChannelHandle h);
/* One more reference on a channel the caller holds one on. The last put frees the channel, on whichever thread
 * drops it: whoever touches a channel holds a reference for as long as it does (an op's reference goes with the op,
 * to whoever completes it). */
void channel_ref(channel *ch);
void channel_put(channel *ch);
int channel_start_io(channel *ch);
void channel_stop_io(channel *ch);
/* After the socket is closed: releases the registrations of zero-copy answers whose completion never came. */
void channel_release_sends(channel *ch);
void channel_fail_pending(channel *ch, int32_t code);
int channel_check_read(channel *ch, const void *dst, uint64_t src, uint64_t len, uint32_t *ridx, uint64_t *delta,
                       uint64_t *peer_addr);
/* HCCS channels of a communicator: reserves the reader's own address range for the peer's HCCL buffer. */
int32_t channel_make_alias(channel *ch);
/* Waits until every delayed read posted on ch so far has landed; its first failure, or HCCL_E_TIMEOUT. */
int32_t channel_await_landed(channel *ch);
int channel_send_notify(channel *ch, uint32_t idx);
void channel_wake_waiters(channel *ch);
void channel_execute(channel *ch, op *o);
void channel_send_write(channel *ch, op *o);

/* A failed read not yet reported: kept by the thread that submitted it, so that a drain reports only the failures
 * of the reads its own thread submitted on that channel (threads of one process share channels). */
typedef struct op_error {
    struct op_error *next;
    uint64_t channel_id;
    int32_t code;
} op_error;

typedef struct soft_thread {
    uint64_t id;
    int engine;
    int internal;              /* a channel's ReadNbi queue, not a user thread */
    pthread_t worker;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_cond_t done_cv;
    op *head, *tail;
    int running;               /* an op taken from the FIFO is being run (by the worker or a waiter) */
    uint64_t submitted, completed;
    struct op_error *errors;   /* per channel, the first failed read of this thread not yet reported by a wait */
    int32_t errors_lost;       /* a failure that found no memory for its entry: the next wait, on any channel, reports it */
    int stopping;
    int aborted;               /* aclrtStreamAbort: every task fails with ACL_ERROR_RT_STREAM_ABORT from then on */
    int refs;
    uint64_t comm;             /* the communicator that owns it (HcommThreadFree refuses it), or 0 */
    uint32_t notify_num;
    uint32_t notified[SOFT_MAX_NOTIFY]; /* thread notifies raised, not yet taken (under mu) */
    pthread_cond_t notify_cv;
} soft_thread;

soft_thread *thread_create(int engine, int internal);
void thread_stop(soft_thread *t);
void thread_ref(soft_thread *t);
void thread_put(soft_thread *t);
soft_thread *thread_get_ref(ThreadHandle h);
void thread_submit(soft_thread *t, op *o);
void op_complete(op *o, int32_t code);
/* Counts a read complete on its stream before its bytes land (a RoCE post); op_complete later lands it. */
void op_stream_done(op *o);
int32_t thread_wait(soft_thread *t, channel *ch);
int32_t thread_wait_ms(soft_thread *t, channel *ch, int64_t timeout_ms);
/* As thread_wait_ms; *expired (when given) set to 1 when the wait itself timed out, not a task. */
int32_t thread_wait_timed(soft_thread *t, channel *ch, int64_t timeout_ms, int *expired);
/* A data-plane task of the communicator path: recorded in batch mode, else run now where the product allows. */
int32_t stream_task(soft_thread *t, op *o);
op *op_new(int kind, soft_thread *t, channel *ch);
soft_thread *stream_thread(aclrtStream stream);
/* The stream's tasks are to stop (its end, or aclrtStreamAbort); the code a task that stops for it fails with. */
int32_t thread_halted(soft_thread *t);

/* ---- ACL events (soft_event.c): stream tasks that mark and wait for a point of a stream ---- */
/* Runs an OP_EV_* task (its stream's earlier tasks have completed); its result. */
int32_t event_run(op *o);
/* op_complete's part for an OP_EV_* task: a record that ran or failed marks its event; drops o's reference. */
void event_task_done(op *o, int32_t code);

/* ---- internal forms of the endpoint API, which communicators use on every product (soft_endpoint.c, ...) ---- */
int32_t soft_endpoint_create(const EndpointDesc *desc, EndpointHandle *out);
int32_t soft_mem_reg(EndpointHandle ep, const char *tag, const CommMem *mem, HcommMemHandle *out);
int32_t soft_channel_create(EndpointHandle ep, CommEngine engine, HcommChannelDesc *descs, uint32_t n,
                            ChannelHandle *out, uint64_t comm, int want_tcp);
int32_t soft_channel_destroy(const ChannelHandle *channels, uint32_t n);

#endif
