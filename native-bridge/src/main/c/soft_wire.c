/*
 * Checks of what a peer sends: hellos (gathered without blocking, judged field by field as their bytes arrive)
 * and data messages (the owner's range check of a request, the reader's check of a response). Pure functions on
 * memory, except hello_rx_read (one non-blocking socket) and wire_log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "soft_wire.h"

static int bad(const char **why, const char *reason)
{
    *why = reason;
    return WIRE_BAD;
}

int wire_check_hello(const void *buf, size_t len, size_t *need, const char **why)
{
    hello_msg h; /* the fixed part, as far as it has arrived */
    size_t got = len < sizeof h ? len : sizeof h;
    memset(&h, 0, sizeof h);
    memcpy(&h, buf, got);
    *need = sizeof h;
    if (got >= 4 && h.magic != HELLO_MAGIC) return bad(why, "not a hello");
    if (got >= 8 && h.version != WIRE_VERSION) return bad(why, "another wire version");
    if (got >= 12 && (h.kind < HELLO_CLIENT || h.kind > HELLO_REFUSE)) return bad(why, "unknown hello kind");
    if (got >= 16) {
        if (h.nregions > WIRE_MAX_REGIONS) return bad(why, "too many regions");
        *need = sizeof h + (size_t)h.nregions * sizeof(wire_region);
    }
    if (len > *need) return bad(why, "bytes after the hello");
    if (got < sizeof h) return WIRE_MORE;
    if (memchr(h.name, '\0', sizeof h.name) == NULL) return bad(why, "unterminated channel name");
    if (memchr(h.host_id, '\0', sizeof h.host_id) == NULL) return bad(why, "unterminated host id");
    if (len < *need) return WIRE_MORE;
    const uint8_t *p = (const uint8_t *)buf + sizeof h;
    for (uint32_t i = 0; i < h.nregions; i++) {
        wire_region w;
        memcpy(&w, p + (size_t)i * sizeof w, sizeof w);
        /* what HcommMemReg accepts: a non-empty range that does not wrap, a slot of the state table */
        if (w.size == 0 || w.addr + w.size < w.addr) return bad(why, "a region with an empty or wrapping range");
        if (w.slot >= SOFT_STATE_SLOTS) return bad(why, "a region with a slot out of range");
    }
    return WIRE_OK;
}

uint32_t wire_verify_client_hello(const hello_msg *h, const uint8_t server_nonce[16], const char **why)
{
    if (h->kind != HELLO_CLIENT) {
        *why = "not a client hello";
        return REFUSE_MALFORMED;
    }
    uint8_t want[32];
    wire_proof('C', server_nonce, h->nonce, h->name, want);
    if (!wire_proof_ok(want, h->proof)) {
        *why = "no proof of the shared secret for this connection's nonce";
        return REFUSE_AUTH;
    }
    return 0;
}

int wire_verify_server_hello(const hello_msg *h, const uint8_t server_nonce[16], const uint8_t client_nonce[16],
                             const char *name, const char **why)
{
    if (h->kind == HELLO_REFUSE)
        return bad(why, h->refuse_reason == REFUSE_AUTH ? "refused by the peer: not the same secret"
                        : h->refuse_reason == REFUSE_MALFORMED ? "refused by the peer: malformed hello"
                                                               : "refused by the peer");
    if (h->kind != HELLO_SERVER) return bad(why, "not a server hello");
    if (memcmp(h->nonce, client_nonce, 16) != 0) return bad(why, "the answer to another hello");
    uint8_t want[32];
    wire_proof('S', server_nonce, client_nonce, name, want);
    if (!wire_proof_ok(want, h->proof)) return bad(why, "no proof of the shared secret");
    if (strcmp(h->name, name) != 0) return bad(why, "another channel's name");
    return WIRE_OK;
}

int hello_rx_space(hello_rx *rx, size_t *budget, uint8_t **dst, size_t *room, const char **why)
{
    size_t need = sizeof(hello_msg);
    if (rx->have > 0 && wire_check_hello(rx->buf, rx->have, &need, why) != WIRE_MORE)
        return bad(why, "no more bytes expected");
    if (rx->have == rx->cap) { /* full: at most double, never past what the hello declares */
        size_t cap = rx->cap == 0 ? sizeof(hello_msg) : rx->cap * 2;
        if (cap > need) cap = need;
        size_t grow = cap - rx->cap;
        if (budget != NULL && *budget < grow) {
            *why = "the endpoint's buffers for incoming hellos are full";
            return WIRE_GONE;
        }
        uint8_t *p = realloc(rx->buf, cap);
        if (p == NULL) {
            *why = "out of memory";
            return WIRE_GONE;
        }
        if (budget != NULL) *budget -= grow;
        rx->buf = p;
        rx->cap = cap;
    }
    *dst = rx->buf + rx->have;
    *room = rx->cap - rx->have;
    return WIRE_MORE;
}

int hello_rx_fill(hello_rx *rx, size_t n, const char **why)
{
    size_t need;
    rx->have += n;
    return wire_check_hello(rx->buf, rx->have, &need, why);
}

int hello_rx_read(hello_rx *rx, int fd, size_t *budget, int64_t now, const char **why)
{
    for (;;) {
        uint8_t *dst;
        size_t room;
        int v = hello_rx_space(rx, budget, &dst, &room, why);
        if (v != WIRE_MORE) return v;
        ssize_t n = recv(fd, dst, room, MSG_DONTWAIT);
        if (n == 0) {
            *why = rx->have > 0 ? "connection closed inside its hello" : "connection closed before its hello";
            return WIRE_GONE;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return WIRE_MORE;
            *why = "receive failed";
            return WIRE_GONE;
        }
        rx->last_ms = now > 0 ? now : 1;
        v = hello_rx_fill(rx, (size_t)n, why);
        if (v != WIRE_MORE) return v;
    }
}

hello_msg *hello_rx_take(hello_rx *rx, size_t *budget)
{
    hello_msg *h = (hello_msg *)rx->buf;
    if (budget != NULL) *budget += rx->cap;
    *rx = (hello_rx){0};
    return h;
}

void hello_rx_free(hello_rx *rx, size_t *budget) { free(hello_rx_take(rx, budget)); }

int64_t wire_find_region(const region_info *regions, uint32_t n, uint32_t from, uint64_t addr, uint64_t len)
{
    for (uint32_t i = from; i < n; i++) {
        const region_info *r = &regions[i];
        if (addr >= r->addr && len <= r->size && addr - r->addr <= r->size - len) return i;
    }
    return -1;
}

int64_t wire_check_request(const data_msg *m, const region_info *local, uint32_t n, uint32_t from)
{
    if ((m->type != MSG_READ_REQ && m->type != MSG_WRITE_REQ) || m->len == 0) return -1; /* never for nothing */
    if (m->type == MSG_WRITE_REQ && m->len > WIRE_MAX_WRITE) return -1;
    return wire_find_region(local, n, from, m->addr, m->len);
}

int wire_check_response(const data_msg *m, const op *pending, const char **why)
{
    if (m->type != MSG_READ_RESP && m->type != MSG_WRITE_RESP) return bad(why, "not a response");
    if (pending == NULL) return bad(why, "a response to no request");
    int write = pending->kind == OP_WRITE;
    if (m->type != (write ? MSG_WRITE_RESP : MSG_READ_RESP) || m->reqid != pending->reqid ||
        m->addr != pending->src)
        return bad(why, "a response to another request");
    if (m->status == 0 && !write ? m->len != pending->len : m->len != 0)
        return bad(why, "a response of the wrong length");
    return WIRE_OK;
}

int wire_check_notify(const data_msg *m, uint32_t notify_num, const char **why)
{
    if (m->type != MSG_NOTIFY) return bad(why, "not a notify");
    if (m->addr >= notify_num || m->len != 0) return bad(why, "a notify this end does not have");
    return WIRE_OK;
}

void wire_log(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "hcomm-soft[%d]: ", (int)getpid());
    size_t room = sizeof line - (size_t)n - 1; /* one byte kept for the newline */
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, room, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < room ? (size_t)m : room - 1);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len); /* one write: lines of several threads do not interleave */
    (void)w;
}
