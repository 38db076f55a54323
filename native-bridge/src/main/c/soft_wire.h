/*
 * What soft HComm peers say to each other on a channel's TCP connection. Little endian, packed.
 * Everything a peer sends is checked by the pure functions below (soft_wire.c) before it is used; they work on
 * memory buffers, so they can be fuzzed with hostile bytes without a socket.
 */
#ifndef SOFT_WIRE_H
#define SOFT_WIRE_H

#include "soft_internal.h"

#define WIRE_VERSION 2u /* 2: host_id (boot id and network namespace) replaces boot_id */
#define NONCE_MAGIC 0x4843534Eu /* "HCSN": the server's challenge, sent on accept */
#define HELLO_MAGIC 0x48435348u /* "HCSH" */
#define DEFAULT_CHANNEL_NAME "hcomm_default"

enum { HELLO_CLIENT = 1, HELLO_SERVER = 2, HELLO_REFUSE = 3 };
enum { REFUSE_AUTH = 1, REFUSE_NO_CHANNEL = 2, REFUSE_MALFORMED = 3 };

typedef struct __attribute__((packed)) {
    uint32_t magic;
    uint32_t version;
    uint8_t nonce[16];
} nonce_msg;

typedef struct __attribute__((packed)) {
    uint64_t addr, size, cookie, memfd_off;
    uint32_t slot;
    int32_t type;
    int32_t memfd;
    uint32_t reserved;
    char tag[SOFT_TAG_MAX];
} wire_region;

typedef struct __attribute__((packed)) hello_msg {
    uint32_t magic;
    uint32_t version;
    uint32_t kind;
    uint32_t nregions;
    uint8_t nonce[16];   /* the client's nonce (echoed back by the server) */
    uint8_t proof[32];   /* SHA-256(secret, label, role, server nonce, client nonce, name) */
    char name[HCOMM_CHANNEL_NAME_MAX_LEN + 1];
    EndpointDesc from;
    EndpointDesc to;
    char host_id[SOFT_HOST_ID_LEN];
    uint32_t pid;
    int32_t state_fd;
    uint64_t start_time;
    uint32_t force_tcp;
    uint32_t refuse_reason;
    wire_region regions[];
} hello_msg;

/* Data messages after the handshake. MSG_NOTIFY raises the receiver's channel notify addr (no answer).
 * MSG_WRITE_REQ carries len bytes to write at addr (communicator channels only), answered by MSG_WRITE_RESP. */
enum { MSG_READ_REQ = 1, MSG_READ_RESP = 2, MSG_NOTIFY = 3, MSG_WRITE_REQ = 4, MSG_WRITE_RESP = 5 };
#define WIRE_MAX_WRITE (4u << 20) /* bytes one write message carries: a writer splits larger writes */
typedef struct __attribute__((packed)) {
    uint32_t type;
    int32_t status;
    uint64_t reqid;
    uint64_t addr;
    uint64_t len;
    uint64_t cookie;
    uint32_t slot;
    uint32_t reserved;
} data_msg;

#define WIRE_MAX_REGIONS SOFT_STATE_SLOTS /* a hello lists at most this many regions */

/* Verdicts of the checks below. */
enum {
    WIRE_OK = 0,     /* whole and well formed */
    WIRE_MORE = 1,   /* well formed so far: more bytes to come */
    WIRE_BAD = -1,   /* malformed or refused: the peer is told (a hello) or the connection closed */
    WIRE_GONE = -2,  /* the connection ended, failed, or the buffer budget ran out: dropped without a word */
};

void wire_proof(char role, const uint8_t server_nonce[16], const uint8_t client_nonce[16], const char *name,
                uint8_t out[32]);
int wire_proof_ok(const uint8_t a[32], const uint8_t b[32]);
void wire_fill_identity(hello_msg *h);

/* The first len bytes of a hello: WIRE_OK (exactly one whole hello), WIRE_MORE (*need: the bytes the whole hello
 * takes, as far as known) or WIRE_BAD (*why). Each field is judged as soon as its bytes are there. */
int wire_check_hello(const void *buf, size_t len, size_t *need, const char **why);
/* The listener's check of a whole client hello: 0, or the REFUSE_ reason (*why). */
uint32_t wire_verify_client_hello(const hello_msg *h, const uint8_t server_nonce[16], const char **why);
/* The client's check of the server's answer to its hello: WIRE_OK or WIRE_BAD (*why). */
int wire_verify_server_hello(const hello_msg *h, const uint8_t server_nonce[16], const uint8_t client_nonce[16],
                             const char *name, const char **why);

/* Gathering a hello: where the next bytes go (hello_rx_space: at most *room at *dst, the buffer grown to at most
 * twice what has arrived and charged to *budget when budget is not NULL), then how many came (hello_rx_fill). */
int hello_rx_space(hello_rx *rx, size_t *budget, uint8_t **dst, size_t *room, const char **why);
int hello_rx_fill(hello_rx *rx, size_t n, const char **why);
/* Everything the socket has of the hello, without blocking; the caller bounds the wait (last_ms). */
int hello_rx_read(hello_rx *rx, int fd, size_t *budget, int64_t now, const char **why);
/* The whole hello (after WIRE_OK), now the caller's to free; rx is empty again. */
hello_msg *hello_rx_take(hello_rx *rx, size_t *budget);
void hello_rx_free(hello_rx *rx, size_t *budget);

/* The index of the first of regions[from..n) that holds all of [addr, addr + len), or -1. */
int64_t wire_find_region(const region_info *regions, uint32_t n, uint32_t from, uint64_t addr, uint64_t len);
/* The owner's check of a read or write request against what the channel exported: the first of local[from..n)
 * that holds the whole range, or -1 (answered HCCL_E_NOT_FOUND): outside every region, or empty. */
int64_t wire_check_request(const data_msg *m, const region_info *local, uint32_t n, uint32_t from);
/* The reader's check of a response against its oldest pending read or write (NULL when none): WIRE_OK, and then
 * m->len bytes follow when it answers a read and m->status is 0, none otherwise; WIRE_BAD (*why) for a protocol
 * violation. */
int wire_check_response(const data_msg *m, const op *pending, const char **why);

/* The receiver's check of a notify: WIRE_OK when it names one of the notify_num notifies of this end, else WIRE_BAD. */
int wire_check_notify(const data_msg *m, uint32_t notify_num, const char **why);

/* One line on stderr: what soft HComm refused from a peer, and why. */
void wire_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
