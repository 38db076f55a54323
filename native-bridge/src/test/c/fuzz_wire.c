/*
 * Fuzz target: what a hostile peer sends on a soft NIC connection, through the library's own checks (soft_wire.c):
 * the hello as the listener gathers it (cut into arrivals of varying size, within an endpoint budget), the proof
 * check of a client's hello or of the server's answer, then the data messages after it through the owner's range
 * check of a request and the reader's check of a response. Every verdict is compared with an oracle written apart
 * from the library; a disagreement aborts, as do the sanitizers on any memory error or undefined behaviour.
 * Built with the library's sources by `make fuzz` (driver: fuzz_driver.c) or with clang -fsanitize=fuzzer.
 *
 * Input: byte 0 is the mode (FUZZ_ bits below), the rest is what the peer sends: a hello, then data messages
 * (with FUZZ_DATA_ONLY, data messages only, against a fixed table of regions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "soft_wire.h"
#include "fuzz_wire.h"

enum {
    FUZZ_SERVER_HELLO = 1, /* judge the hello as a client judges the server's answer */
    FUZZ_FIX_PROOF = 2,    /* give the hello the right proof (and nonce) first, so what comes after it runs */
    FUZZ_DATA_ONLY = 4,    /* no hello: data messages against FIXED_REGIONS */
    FUZZ_SMALL_BUDGET = 8, /* an endpoint budget that a hello of more than 6 regions exceeds */
    /* bits 4-7: how the hello's bytes are cut into arrivals (0: as much as there is room for, 1: byte by byte) */
};

static const char SECRET[] = "fuzz-secret";
static const char NAME[] = "fuzz-channel";
static const uint8_t SERVER_NONCE[16] = {0x53, 0x4e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
static const uint8_t CLIENT_NONCE[16] = {0x43, 0x4e, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 9, 8, 7, 6, 5, 4, 3, 2};
#define SMALL_BUDGET 1500u
#define MAX_PENDING 64

/* Edges of the address space, overlaps (the first region holding a range wins) and a one-byte region. */
static const region_info FIXED_REGIONS[] = {
    {.addr = 0x1000, .size = 0x1000},
    {.addr = 0x1800, .size = 0x1000},
    {.addr = UINT64_MAX - 0x1000, .size = 0x1000},
    {.addr = 0x7fff0000, .size = 0x20000},
    {.addr = 0x10, .size = 1},
};
#define NFIXED (uint32_t)(sizeof FIXED_REGIONS / sizeof *FIXED_REGIONS)

enum outcome {
    O_HELLO_OK, O_HELLO_MORE, O_HELLO_BAD, O_HELLO_GONE, O_CLIENT_OK, O_CLIENT_AUTH, O_CLIENT_MALFORMED,
    O_SERVER_OK, O_SERVER_BAD, O_REQ_OK, O_REQ_EMPTY, O_REQ_OUTSIDE, O_RESP_DATA, O_RESP_STATUS, O_RESP_BAD,
    O_BODY_CUT, O_UNKNOWN_TYPE, O_PENDING_FULL, O_DATA, O_OVERLAP, O_REGIONS, O_MANY_REGIONS, O_FIXED_OK,
    O_NOTIFY_OK, O_NOTIFY_BAD, O_WRITE,
    O_WHY = 32 /* 32 more bits: which refusal */
};

static uint64_t g_outcomes;

/* The notifies the receiving end of the fuzzed channel has (HcclChannelDesc's notifyNum). */
#define FUZZ_NOTIFY_NUM 4u

static void saw(enum outcome o) { g_outcomes |= 1ull << o; }

static void saw_why(const char *why)
{
    if (why != NULL) g_outcomes |= 1ull << (O_WHY + (((uintptr_t)why * 0x9E3779B97F4A7C15ull) >> 59));
}

#define ORACLE(cond)                                                                                   \
    do {                                                                                               \
        if (!(cond)) {                                                                                 \
            fprintf(stderr, "fuzz_wire: the library disagrees with the oracle at %s:%d: %s\n", __FILE__, \
                    __LINE__, #cond);                                                                  \
            abort();                                                                                   \
        }                                                                                              \
    } while (0)

uint64_t fuzz_wire_outcomes(void) { return g_outcomes; }

static void configure(void)
{
    static int done;
    if (!done && HcommSoftConfigure("secret", SECRET) == HCCL_SUCCESS) done = 1;
}

/* The handshake proof as the protocol defines it, from the SHA-256 primitive (not from wire_proof). */
static void ref_proof(char role, const uint8_t server_nonce[16], const uint8_t client_nonce[16], const char *name,
                      uint8_t out[32])
{
    static const char label[] = "hcomm-soft-handshake-v1";
    const void *parts[] = {SECRET, label, &role, server_nonce, client_nonce, name};
    size_t lens[] = {strlen(SECRET), sizeof label, 1, 16, 16, strlen(name)};
    soft_sha256(parts, lens, 6, out);
}

static int ref_contains(const region_info *r, uint64_t addr, uint64_t len)
{
    return len > 0 && addr >= r->addr && (unsigned __int128)addr + len <= (unsigned __int128)r->addr + r->size;
}

/* The hello's own checks, field by field, on a whole hello of `len` bytes that the library accepted. */
static void oracle_hello_ok(const uint8_t *buf, size_t len)
{
    hello_msg h;
    ORACLE(len >= sizeof h);
    memcpy(&h, buf, sizeof h);
    ORACLE(h.magic == HELLO_MAGIC && h.version == WIRE_VERSION);
    ORACLE(h.kind == HELLO_CLIENT || h.kind == HELLO_SERVER || h.kind == HELLO_REFUSE);
    ORACLE(h.nregions <= WIRE_MAX_REGIONS);
    ORACLE(len == sizeof h + (size_t)h.nregions * sizeof(wire_region));
    ORACLE(strnlen(h.name, sizeof h.name) < sizeof h.name && strnlen(h.host_id, sizeof h.host_id) < sizeof h.host_id);
    for (uint32_t i = 0; i < h.nregions; i++) {
        wire_region w;
        memcpy(&w, buf + sizeof h + (size_t)i * sizeof w, sizeof w);
        ORACLE(w.size > 0 && (unsigned __int128)w.addr + w.size < ((unsigned __int128)1 << 64));
        ORACLE(w.slot < SOFT_STATE_SLOTS);
    }
}

static uint32_t next_cut(uint32_t *state, int mode, size_t room)
{
    if (mode == 0) return (uint32_t)(room < UINT32_MAX ? room : UINT32_MAX);
    if (mode == 1) return 1;
    *state = *state * 1103515245u + 12345u;
    uint32_t r = (*state >> 8) % 4;
    uint32_t n = r == 0 ? 1 + (*state >> 16) % 16 : r == 1 ? 672 : 1 + (*state >> 12) % 300; /* 672: a header */
    return n;
}

/* Gathers the hello the way the listener does. Returns the verdict; *used: the bytes taken; *h: the hello. */
static int gather_hello(const uint8_t *data, size_t size, int mode, size_t *used, hello_msg **h)
{
    size_t budget0 = (mode & FUZZ_SMALL_BUDGET) ? SMALL_BUDGET : SOFT_HELLO_BUDGET, budget = budget0;
    hello_rx rx = {0};
    uint32_t cut_state = (uint32_t)size ^ 0x5bd1e995u;
    const char *why = NULL;
    size_t off = 0;
    int v = WIRE_MORE;
    while (v == WIRE_MORE && off < size) {
        uint8_t *dst;
        size_t room;
        v = hello_rx_space(&rx, &budget, &dst, &room, &why);
        if (v != WIRE_MORE) break;
        ORACLE(room > 0 && rx.cap <= (rx.have > sizeof(hello_msg) / 2 ? 2 * rx.have : sizeof(hello_msg)));
        ORACLE(budget0 - budget == rx.cap);
        size_t n = next_cut(&cut_state, mode >> 4, room);
        if (n > room) n = room;
        if (n > size - off) n = size - off;
        memcpy(dst, data + off, n);
        off += n;
        v = hello_rx_fill(&rx, n, &why);
    }
    /* the verdict on all the bytes at once is the same as on their arrivals one after another */
    size_t need;
    const char *why1 = NULL;
    int once = off > 0 ? wire_check_hello(data, off, &need, &why1) : WIRE_MORE;
    if (v != WIRE_GONE) ORACLE(once == v);
    if (v == WIRE_BAD) ORACLE(why != NULL && why1 == why);
    *used = off;
    *h = NULL;
    saw_why(why);
    if (v == WIRE_OK) {
        oracle_hello_ok(data, off);
        *h = hello_rx_take(&rx, &budget);
        ORACLE(rx.buf == NULL && rx.have == 0 && rx.cap == 0);
    } else {
        if (v == WIRE_GONE) ORACLE(mode & FUZZ_SMALL_BUDGET); /* memory is plentiful here: only the budget */
        hello_rx_free(&rx, &budget);
    }
    ORACLE(budget == budget0);
    return v;
}

/* The checks of the hello's sender: its proof, its nonce, its name. 1 when the connection would go on. */
static int verify_hello(hello_msg *h, int mode)
{
    char role = (mode & FUZZ_SERVER_HELLO) ? 'S' : 'C';
    const uint8_t *client_nonce = role == 'S' ? CLIENT_NONCE : h->nonce;
    if (mode & FUZZ_FIX_PROOF) {
        if (role == 'S') {
            memcpy(h->nonce, CLIENT_NONCE, 16);
            snprintf(h->name, sizeof h->name, "%s", NAME);
        }
        wire_proof(role, SERVER_NONCE, client_nonce, h->name, h->proof);
    }
    uint8_t want[32];
    ref_proof(role, SERVER_NONCE, client_nonce, role == 'S' ? NAME : h->name, want);
    int proof_ok = memcmp(want, h->proof, 32) == 0;
    const char *why = NULL;
    if (role == 'C') {
        uint32_t reason = wire_verify_client_hello(h, SERVER_NONCE, &why);
        ORACLE((reason == 0) == (h->kind == HELLO_CLIENT && proof_ok));
        ORACLE(reason == 0 || reason == (h->kind == HELLO_CLIENT ? REFUSE_AUTH : REFUSE_MALFORMED));
        saw(reason == 0 ? O_CLIENT_OK : reason == REFUSE_AUTH ? O_CLIENT_AUTH : O_CLIENT_MALFORMED);
        saw_why(why);
        return reason == 0;
    }
    int v = wire_verify_server_hello(h, SERVER_NONCE, CLIENT_NONCE, NAME, &why);
    int expect = h->kind == HELLO_SERVER && memcmp(h->nonce, CLIENT_NONCE, 16) == 0 && proof_ok &&
                 strcmp(h->name, NAME) == 0;
    ORACLE((v == WIRE_OK) == expect);
    ORACLE(v == WIRE_OK || (v == WIRE_BAD && why != NULL));
    saw(v == WIRE_OK ? O_SERVER_OK : O_SERVER_BAD);
    saw_why(why);
    if (mode & FUZZ_FIX_PROOF) ORACLE(h->kind != HELLO_SERVER || v == WIRE_OK);
    return v == WIRE_OK;
}

/* The owner's check of one request: the regions that hold it, in order, as serve_one walks them. */
static int check_request(const data_msg *m, const region_info *regions, uint32_t n)
{
    int64_t want = -1;
    int takes = m->type == MSG_READ_REQ || (m->type == MSG_WRITE_REQ && m->len <= WIRE_MAX_WRITE);
    for (uint32_t i = 0; i < n && want < 0 && takes; i++)
        if (ref_contains(&regions[i], m->addr, m->len)) want = i;
    int64_t got = wire_check_request(m, regions, n, 0);
    ORACLE(got == want);
    int holders = 0;
    for (int64_t i = got; i >= 0; i = wire_check_request(m, regions, n, (uint32_t)i + 1)) {
        ORACLE(i < (int64_t)n && ref_contains(&regions[i], m->addr, m->len));
        for (int64_t k = want + 1; k < i; k++) ORACLE(!ref_contains(&regions[k], m->addr, m->len));
        want = i;
        holders++;
    }
    if (holders > 1) saw(O_OVERLAP);
    saw(got >= 0 ? O_REQ_OK : m->len == 0 ? O_REQ_EMPTY : O_REQ_OUTSIDE);
    return got >= 0;
}

/* Data messages as the receiver reads them: requests for the server thread, responses against the oldest
 * pending read (here: the requests this stream made that the check accepted, as if they had been ours). */
static void run_data(const uint8_t *p, size_t len, const region_info *regions, uint32_t n)
{
    op pending[MAX_PENDING];
    size_t head = 0, tail = 0;
    saw(O_DATA);
    while (len >= sizeof(data_msg)) {
        data_msg m;
        memcpy(&m, p, sizeof m);
        p += sizeof m;
        len -= sizeof m;
        if (m.type == MSG_WRITE_REQ) { /* checked as a request; its bytes follow */
            check_request(&m, regions, n);
            if (m.len > WIRE_MAX_WRITE || m.len > len) {
                saw(O_BODY_CUT);
                return; /* the receiver closes the connection, or waits for bytes that never come */
            }
            p += m.len;
            len -= m.len;
            saw(O_WRITE);
        } else if (m.type == MSG_READ_REQ) {
            if (!check_request(&m, regions, n)) continue;
            if (tail - head == MAX_PENDING) {
                saw(O_PENDING_FULL);
                continue;
            }
            pending[tail % MAX_PENDING] = (op){.reqid = m.reqid, .src = m.addr, .len = m.len};
            tail++;
        } else if (m.type == MSG_READ_RESP || m.type == MSG_WRITE_RESP) {
            ORACLE(wire_check_request(&m, regions, n, 0) == -1); /* not a request */
            const op *o = head < tail ? &pending[head % MAX_PENDING] : NULL;
            const char *why = NULL;
            int v = wire_check_response(&m, o, &why);
            int expect = o != NULL && m.type == MSG_READ_RESP && m.reqid == o->reqid && m.addr == o->src &&
                         (m.status == 0 ? m.len == o->len : m.len == 0);
            ORACLE((v == WIRE_OK) == expect && (v == WIRE_OK || (v == WIRE_BAD && why != NULL)));
            saw_why(why);
            if (v != WIRE_OK) {
                saw(O_RESP_BAD);
                return; /* the connection is closed */
            }
            head++;
            saw(m.status == 0 ? O_RESP_DATA : O_RESP_STATUS);
            if (m.status == 0) {
                if (m.len > len) {
                    saw(O_BODY_CUT);
                    return;
                }
                p += m.len;
                len -= m.len;
            }
        } else if (m.type == MSG_NOTIFY) {
            ORACLE(wire_check_request(&m, regions, n, 0) == -1); /* not a request */
            const char *why = NULL;
            int v = wire_check_notify(&m, FUZZ_NOTIFY_NUM, &why);
            int expect = m.addr < FUZZ_NOTIFY_NUM && m.len == 0;
            ORACLE((v == WIRE_OK) == expect && (v == WIRE_OK || (v == WIRE_BAD && why != NULL)));
            saw_why(why);
            if (v != WIRE_OK) {
                saw(O_NOTIFY_BAD);
                return; /* the connection is closed */
            }
            saw(O_NOTIFY_OK);
        } else {
            saw(O_UNKNOWN_TYPE);
            return;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_outcomes = 0;
    if (size < 1) return 0;
    configure();
    int mode = data[0];
    data++;
    size--;
    if (mode & FUZZ_DATA_ONLY) {
        run_data(data, size, FIXED_REGIONS, NFIXED);
        return 0;
    }
    size_t used;
    hello_msg *h;
    int v = gather_hello(data, size, mode, &used, &h);
    saw(v == WIRE_OK ? O_HELLO_OK : v == WIRE_MORE ? O_HELLO_MORE : v == WIRE_BAD ? O_HELLO_BAD : O_HELLO_GONE);
    if (h == NULL) return 0;
    if (h->nregions > 0) saw(O_REGIONS);
    if (h->nregions > 8) saw(O_MANY_REGIONS);
    if (verify_hello(h, mode)) {
        if (mode & FUZZ_FIX_PROOF) saw(O_FIXED_OK);
        region_info *regions = calloc(h->nregions ? h->nregions : 1, sizeof *regions);
        if (regions != NULL) {
            for (uint32_t i = 0; i < h->nregions; i++)
                regions[i] = (region_info){.addr = h->regions[i].addr, .size = h->regions[i].size};
            run_data(data + used, size - used, regions, h->nregions);
            free(regions);
        }
    }
    free(h);
    return 0;
}

/* ---- seeds for the driver (and a libFuzzer corpus) ---- */

static size_t put(uint8_t *out, size_t cap, size_t at, const void *p, size_t n)
{
    if (at + n <= cap) memcpy(out + at, p, n);
    return at + n;
}

static size_t put_msg(uint8_t *out, size_t cap, size_t at, uint32_t type, int32_t status, uint64_t reqid,
                      uint64_t addr, uint64_t len)
{
    data_msg m = {type, status, reqid, addr, len, 0, 0, 0};
    return put(out, cap, at, &m, sizeof m);
}

/* A request answered with data, one answered with an error status, two refused, and a response to nothing. */
static size_t put_requests(uint8_t *out, size_t cap, size_t at, uint64_t a, uint64_t asize, uint64_t b,
                           uint64_t bsize)
{
    uint8_t body[64];
    memset(body, 0xA5, sizeof body);
    at = put_msg(out, cap, at, MSG_READ_REQ, 0, 1, a + 16, 64);
    at = put_msg(out, cap, at, MSG_READ_RESP, 0, 1, a + 16, 64);
    at = put(out, cap, at, body, sizeof body);
    at = put_msg(out, cap, at, MSG_READ_REQ, 0, 2, b, bsize);
    at = put_msg(out, cap, at, MSG_READ_RESP, HCCL_E_NOT_FOUND, 2, b, 0);
    at = put_msg(out, cap, at, MSG_READ_REQ, 0, 3, a + asize - 8, 16); /* reaches past the end */
    at = put_msg(out, cap, at, MSG_READ_REQ, 0, 4, a, 0);              /* empty */
    at = put_msg(out, cap, at, MSG_READ_REQ, 0, 5, b + bsize - 1, 1);
    at = put_msg(out, cap, at, MSG_READ_RESP, 0, 5, b + bsize - 1, 1);
    at = put(out, cap, at, body, 1);
    at = put_msg(out, cap, at, MSG_WRITE_REQ, 0, 6, a + 8, 8);             /* a write and its bytes */
    at = put(out, cap, at, body, 8);
    at = put_msg(out, cap, at, MSG_WRITE_RESP, 0, 6, a + 8, 0);            /* answers no read of ours */
    at = put_msg(out, cap, at, MSG_NOTIFY, 0, 0, 1, 0);                    /* a notify the receiver has */
    at = put_msg(out, cap, at, MSG_NOTIFY, 0, 0, FUZZ_NOTIFY_NUM, 0);      /* one it does not have */
    return put_msg(out, cap, at, MSG_READ_RESP, 0, 9, a, 64); /* nobody asked */
}

static size_t put_hello(uint8_t *out, size_t cap, size_t at, uint32_t kind, uint32_t nregions)
{
    hello_msg h;
    memset(&h, 0, sizeof h);
    h.magic = HELLO_MAGIC;
    h.version = WIRE_VERSION;
    h.kind = kind;
    h.nregions = nregions;
    char role = kind == HELLO_SERVER ? 'S' : 'C';
    memcpy(h.nonce, role == 'S' ? CLIENT_NONCE : (const uint8_t *)"client-nonce-016", 16);
    snprintf(h.name, sizeof h.name, "%s", NAME);
    snprintf(h.host_id, sizeof h.host_id, "%s", "fuzz-host/net:1:2");
    h.pid = 4242;
    h.state_fd = 5;
    h.start_time = 123456;
    if (kind == HELLO_REFUSE) h.refuse_reason = REFUSE_AUTH;
    else wire_proof(role, SERVER_NONCE, h.nonce, h.name, h.proof);
    at = put(out, cap, at, &h, sizeof h);
    for (uint32_t i = 0; i < nregions; i++) {
        wire_region w = {0x10000ull << (4 * i), 0x4000ull << i, 0x1234 + i, 0, 3 + i, 0, -1, 0, "seed"};
        at = put(out, cap, at, &w, sizeof w);
    }
    return at;
}

size_t fuzz_wire_seed(int which, uint8_t *out, size_t cap)
{
    configure();
    size_t at = 0;
    uint8_t mode;
    switch (which) {
    case 0: /* a client's hello with two regions, then requests and responses */
        mode = 0x20;
        at = put(out, cap, at, &mode, 1);
        at = put_hello(out, cap, at, HELLO_CLIENT, 2);
        at = put_requests(out, cap, at, 0x10000, 0x4000, 0x100000, 0x8000);
        break;
    case 1: /* the server's answer, as its client judges it */
        mode = FUZZ_SERVER_HELLO | 0x30;
        at = put(out, cap, at, &mode, 1);
        at = put_hello(out, cap, at, HELLO_SERVER, 3);
        at = put_requests(out, cap, at, 0x10000, 0x4000, 0x100000, 0x8000);
        break;
    case 2: /* data only, against the fixed regions */
        mode = FUZZ_DATA_ONLY;
        at = put(out, cap, at, &mode, 1);
        at = put_requests(out, cap, at, FIXED_REGIONS[0].addr, FIXED_REGIONS[0].size, FIXED_REGIONS[2].addr,
                          FIXED_REGIONS[2].size);
        break;
    case 3: /* a refusal, as a client receives it */
        mode = FUZZ_SERVER_HELLO;
        at = put(out, cap, at, &mode, 1);
        at = put_hello(out, cap, at, HELLO_REFUSE, 0);
        break;
    default: /* a client's hello with eight regions arriving byte by byte, against the small budget */
        mode = FUZZ_SMALL_BUDGET | FUZZ_FIX_PROOF | 0x10;
        at = put(out, cap, at, &mode, 1);
        at = put_hello(out, cap, at, HELLO_CLIENT, 8);
        break;
    }
    return at <= cap ? at : 0;
}
