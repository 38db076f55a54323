/*
 * hostile_peer: a hostile process against real soft HComm endpoints, over the network (a Spark test runs it in
 * another network namespace against executors' soft NIC listeners).
 *
 *   hostile_peer --secret SECRET [--seconds N] [--step-ms MS] [--channel NAME] HOST:PORT [HOST:PORT ...]
 *
 * To every target, in rounds until N seconds have passed (default: one round), one thread per target:
 *   (a) garbage: random bytes, an HTTP request, a hello of another wire version
 *   (b) a hello cut short and held open while the round goes on (the listener drops it SOFT_HELLO_MS after its
 *       last byte)
 *   (c) oversized hellos: 2^32-1 and WIRE_MAX_REGIONS+1 regions declared, bytes beyond what a valid hello declares,
 *       the largest hello (every byte, a wrong secret), the largest cut short by the end of the stream
 *   (d) a wrong secret, the secret's proof for another channel name, a server's hello sent to the listener
 *   (e) a replay: (f)'s own valid client hello sent again on a new connection (a new server nonce)
 *   (f) a valid handshake with SECRET (the application's channel secret) for a made-up channel name, then
 *       out-of-range read requests and malformed data messages; where a channel of that name answers (--channel),
 *       also (g) up to PIPELINE_MAX read requests of the first exported region pipelined without reading an
 *       answer: the owner's soft NIC must stop reading (it queues at most SOFT_SERVE_QUEUE_MAX) long before.
 *
 * What a listener does with (f) (soft_endpoint.c, soft_channel.c): a hello whose proof is valid is "parked", in
 * silence, until a SERVER channel of its name that expects a client from the hello's address claims it, or
 * dropped at the connect timeout. There is no REFUSE_NO_CHANNEL answer, and the listener reads nothing more from a
 * parked connection: data messages reach a soft NIC only through a channel that exists. So for a made-up name
 * (f) sees silence, and its read requests and malformed messages go unread; both count as refused. Should the
 * server answer with its hello (a channel of that name exists), (f) goes on with reads before, after and
 * overlapping what it exported, empty, huge and wrapping, then the malformed messages, one connection each.
 * --channel NAME makes (f) use a real channel's name instead: a test's own channel, whose real client it replaces.
 *
 * One line per attack says what the server did. Every wait is bounded (--step-ms per step, default 3000; the largest
 * hello has LARGEST_SEND_MS to go out; (b) waits SOFT_HELLO_MS + a step after its last byte at most). The last line:
 * "hostile_peer: N attacks on M targets, all refused", or which were not. Exit status: 0 every attack refused
 * (a refusal, a close, a NOT_FOUND status, or a parked connection's silence); 1 an attack served or not refused
 * (a server hello for a bad hello, bytes for an out-of-range read, an answer to a malformed message, a bad hello
 * neither refused nor closed within its bound); 2 a usage error, a target unreachable (before or during the
 * attack), or --secret refused by a target as not the same secret (then (e) and (f) tested no valid proof).
 *
 * Built by `make hostile` (and `make test`) with the library's own sources: its wire checks (soft_wire.c) judge
 * the server's answers, its SHA-256 makes the proofs (hostile_wire.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "hostile_wire.h"

static int g_step_ms = 3000; /* the longest wait of any step for the server (--step-ms) */
#define LARGEST_SEND_MS 10000 /* the largest hello (7.3 MB) may take this long to go out */
#define CUT_AT 300            /* (b): the bytes of a hello sent before the silence */
#define WRONG_PREFIX "not-"   /* a wrong secret: the right one with this in front */
#define PIPELINE_MAX 2000000u /* (g): 96 MB of requests, far more than a bounded queue and the sockets' buffers hold */

typedef enum { REFUSED, NOT_REFUSED, UNREACHABLE } verdict;

typedef struct {
    const char *spec; /* HOST:PORT as given */
    struct sockaddr_in addr;
    int index, round;
    int gone;         /* unreachable: no more attacks on it */
    int attacks, not_refused, unreachable, secret_refused;
    pthread_t thread;
} target;

static const char *g_secret;
static const char *g_channel;  /* --channel: (f) under this name instead of a made-up one */
static int64_t g_until;         /* rounds start until then; 0: one round */
static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER; /* stdout, the counters and g_failed */
static char g_failed[4096];     /* the attacks not refused, for the last line */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void append_failed(const char *s)
{
    size_t have = strlen(g_failed), room = sizeof g_failed - have;
    if (room <= 4 || strcmp(g_failed + (have >= 3 ? have - 3 : 0), "...") == 0) return;
    int n = snprintf(g_failed + have, room, "%s%s", have ? "; " : "", s);
    if (n < 0 || (size_t)n >= room) snprintf(g_failed + sizeof g_failed - 4, 4, "...");
}

/* One line per attack: what the server did. */
static void __attribute__((format(printf, 4, 5))) report(target *t, verdict v, const char *what, const char *fmt, ...)
{
    char how[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(how, sizeof how, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_out);
    if (v == UNREACHABLE) {
        t->unreachable++;
        t->gone = 1;
    } else {
        t->attacks++;
    }
    if (v == NOT_REFUSED) {
        t->not_refused++;
        char item[400];
        snprintf(item, sizeof item, "%s #%d %s", t->spec, t->round, what);
        append_failed(item);
    }
    printf("hostile_peer: %s #%d %s: %s%s\n", t->spec, t->round, what,
           v == NOT_REFUSED ? "NOT REFUSED: " : v == UNREACHABLE ? "UNREACHABLE: " : "", how);
    fflush(stdout);
    pthread_mutex_unlock(&g_out);
}

/* A line that is no attack. */
static void __attribute__((format(printf, 2, 3))) info(target *t, const char *fmt, ...)
{
    char how[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(how, sizeof how, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_out);
    printf("hostile_peer: %s #%d -- %s\n", t->spec, t->round, how);
    fflush(stdout);
    pthread_mutex_unlock(&g_out);
}

static int open_conn(target *t, const char *what, uint8_t nonce[16])
{
    if (t->gone) return -1;
    int fd = raw_connect_to(&t->addr, g_step_ms, nonce);
    if (fd == RAW_NO_NONCE)
        report(t, UNREACHABLE, what, "connected, but no soft HComm nonce (wire version %u) within %d ms", WIRE_VERSION,
               g_step_ms);
    else if (fd < 0)
        report(t, UNREACHABLE, what, "no connection within %d ms", g_step_ms);
    return fd;
}

/* The address of this end of fd: what our hellos claim to come from. */
static uint32_t local_ip(int fd)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    return getsockname(fd, (struct sockaddr *)&sa, &len) == 0 ? sa.sin_addr.s_addr : htonl(INADDR_LOOPBACK);
}

/* "1 region", "2 regions" (a buffer per thread, for one argument of a report). */
static const char *regions(uint32_t n)
{
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "%u region%s", n, n == 1 ? "" : "s");
    return buf;
}

static const char *reason_text(uint32_t r)
{
    return r == REFUSE_AUTH ? "not the same secret"
           : r == REFUSE_NO_CHANNEL ? "no such channel"
           : r == REFUSE_MALFORMED ? "malformed hello"
                                   : "a reason unknown here";
}

/* Judges what the listener did with a hello attack on fd: a refusal or a close is what it must do; silence only
 * where `parked` says why that is right. `sent` says how the sending went. */
static void judge(target *t, const char *what, int fd, const char *sent, const char *parked)
{
    uint32_t reason = 0;
    hello_msg answer;
    switch (raw_outcome(fd, g_step_ms, &reason, &answer)) {
    case 'R':
        report(t, REFUSED, what, "%srefused (%s, reason %u)", sent, reason_text(reason), reason);
        break;
    case 'C':
        report(t, REFUSED, what, "%sclosed without a word", sent);
        break;
    case 'O':
        if (parked != NULL) report(t, REFUSED, what, "%sno answer in %d ms: %s", sent, g_step_ms, parked);
        else report(t, NOT_REFUSED, what, "%sno answer in %d ms and the connection still open", sent, g_step_ms);
        break;
    case 'S':
        report(t, NOT_REFUSED, what, "%sACCEPTED: the server answered with its hello (%s)", sent,
               regions(answer.nregions));
        break;
    default:
        report(t, NOT_REFUSED, what, "%san answer that is neither a refusal, a close nor a server hello", sent);
    }
}

/* Sends bytes as the first words of connection fd (-1: a new one), optionally ends the stream, judges. */
static void hello_attack(target *t, const char *what, int fd, const void *bytes, size_t len, int send_ms, int end,
                         const char *parked)
{
    uint8_t nonce[16];
    if (fd < 0 && (fd = open_conn(t, what, nonce)) < 0) return;
    int sent = send_within(fd, bytes, len, send_ms);
    if (sent == 0 && end) shutdown(fd, SHUT_WR);
    char how[120] = "";
    if (sent == -2) snprintf(how, sizeof how, "not all %zu bytes went out within %d ms, then ", len, send_ms);
    if (sent == -1) snprintf(how, sizeof how, "the send failed (closed or reset by the server), then ");
    judge(t, what, fd, how, parked);
    close(fd);
}

/* A client hello of ours on a new connection (*fd, whose nonce goes to nonce); NULL when none could be made. */
static hello_msg *new_hello(target *t, const char *what, const char *name, const char *secret, uint32_t nregions,
                            int *fd, size_t *len, uint8_t nonce[16])
{
    *fd = open_conn(t, what, nonce);
    if (*fd < 0) return NULL;
    hello_msg *h = raw_hello(name, nonce, secret, nregions, local_ip(*fd), len);
    if (h == NULL) {
        info(t, "%s: not sent: out of memory", what);
        close(*fd);
        *fd = -1;
    }
    return h;
}

/* ---- (f): a valid handshake ---- */

typedef struct {
    int fd;
    uint8_t server_nonce[16];
    hello_msg *hello;   /* ours, for (e) */
    size_t len;
    char outcome;       /* raw_outcome's */
    uint32_t reason;
    uint32_t nregions;  /* what the server's hello declares */
    hello_msg *answer;  /* the server's whole hello, when it sent one */
    const char *flaw;   /* what the library's client check says is wrong with that hello, or NULL */
} session;

static void session_close(session *s)
{
    if (s->fd >= 0) close(s->fd);
    free(s->hello);
    free(s->answer);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* Takes the rest of the server's hello (its regions) and checks it as the library's client would. */
static void take_server_hello(session *s, const hello_msg *head, const char *name)
{
    size_t need = 0;
    const char *why = NULL;
    if (wire_check_hello(head, sizeof *head, &need, &why) == WIRE_BAD) {
        s->flaw = why;
        return;
    }
    hello_msg *h = malloc(need);
    if (h == NULL) {
        s->flaw = "out of memory for its regions";
        return;
    }
    memcpy(h, head, sizeof *head);
    if (need > sizeof *head && recv_within(s->fd, (uint8_t *)h + sizeof *head, need - sizeof *head, g_step_ms) != 0) {
        free(h);
        s->flaw = "its regions did not all come in time";
        return;
    }
    if (wire_check_hello(h, need, &need, &why) != WIRE_OK ||
        wire_verify_server_hello(h, s->server_nonce, s->hello->nonce, name, &why) != WIRE_OK)
        s->flaw = why;
    s->answer = h;
}

/* A client hello with the secret's proof for `name`, and what the listener does with it within g_step_ms. */
static int handshake(target *t, const char *what, const char *name, session *s)
{
    memset(s, 0, sizeof *s);
    s->fd = open_conn(t, what, s->server_nonce);
    if (s->fd < 0) return -1;
    s->hello = raw_hello(name, s->server_nonce, g_secret, 0, local_ip(s->fd), &s->len);
    if (s->hello == NULL || send_within(s->fd, s->hello, s->len, g_step_ms) == -2) {
        info(t, "%s: %s", what, s->hello == NULL ? "out of memory" : "the hello did not go out in time");
        session_close(s);
        return -1;
    }
    hello_msg head;
    s->outcome = raw_outcome(s->fd, g_step_ms, &s->reason, &head);
    if (s->outcome == 'S') {
        s->nregions = head.nregions;
        take_server_hello(s, &head, name);
    }
    return 0;
}

/* What arrives on fd within ms after data messages: 'O' nothing, 'C' closed, 'D' bytes (the first message in *m
 * when whole). */
static char after_messages(int fd, int ms, data_msg *m)
{
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return 'O';
    memset(m, 0, sizeof *m);
    ssize_t n = recv(fd, m, sizeof *m, MSG_WAITALL);
    return n <= 0 ? 'C' : 'D';
}

/* (f) on a connection the listener parked: requests and malformed messages that it must not read, let alone
 * answer. */
static void parked_messages(target *t, int fd)
{
    const char *what = "(f) out-of-range read requests and malformed data messages on the parked connection";
    bad_read reads[OUT_OF_RANGE_READS];
    size_t n = out_of_range_reads(0x100000, 4096, reads);
    int failed = 0; /* send_within's */
    for (size_t i = 0; i < n && failed == 0; i++) {
        data_msg m = {MSG_READ_REQ, 0, 1 + i, reads[i].addr, reads[i].len, 0, 0, 0};
        failed = send_within(fd, &m, sizeof m, g_step_ms);
    }
    for (size_t i = 0; i < BAD_MESSAGES && failed == 0; i++)
        failed = send_within(fd, &bad_messages[i].m, sizeof(data_msg), g_step_ms);
    data_msg m;
    switch (after_messages(fd, g_step_ms, &m)) {
    case 'O':
        report(t, REFUSED, what, "%zu requests and %d messages %s; no answer in %d ms (a parked connection is not "
               "read: nothing is served before a channel claims it)", n, BAD_MESSAGES,
               failed == 0 ? "sent" : "not all sent", g_step_ms);
        break;
    case 'C':
        report(t, REFUSED, what, "closed without a word");
        break;
    default:
        report(t, NOT_REFUSED, what, "answered: type %u, status %d, %llu bytes", m.type, m.status,
               (unsigned long long)m.len);
    }
}

/* A malformed data message on a channel that accepted us: it must close the connection. */
static void message_attack(target *t, const char *what, int fd, const data_msg *bad)
{
    data_msg m;
    char c = send_within(fd, bad, sizeof *bad, g_step_ms) != 0 ? 'C' : after_messages(fd, g_step_ms, &m);
    if (c == 'C') report(t, REFUSED, what, "connection closed");
    else if (c == 'O') report(t, NOT_REFUSED, what, "neither answered nor closed in %d ms", g_step_ms);
    else report(t, NOT_REFUSED, what, "answered: type %u, status %d", m.type, m.status);
}

/* (f) on a channel that accepted us: reads outside what it exported, then an unknown message type. */
static void served_reads(target *t, session *s)
{
    uint32_t n = s->answer->nregions;
    region_info *exported = calloc(n ? n : 1, sizeof *exported);
    if (exported == NULL) {
        info(t, "(f) reads: out of memory");
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        exported[i].addr = s->answer->regions[i].addr;
        exported[i].size = s->answer->regions[i].size;
    }
    uint64_t base = n ? exported[0].addr : 0x100000, size = n ? exported[0].size : 4096;
    info(t, "(f) the channel exported %s; reads relative to %s[0x%llx, +%llu)", regions(n), n ? "the first, " : "",
         (unsigned long long)base, (unsigned long long)size);
    bad_read reads[OUT_OF_RANGE_READS];
    size_t count = out_of_range_reads(base, size, reads);
    static __thread uint8_t body[65536];
    int usable = 1;
    for (size_t i = 0; i < count && usable; i++) {
        char what[120];
        snprintf(what, sizeof what, "(f) read request '%s' (0x%llx, %llu bytes)", reads[i].what,
                 (unsigned long long)reads[i].addr, (unsigned long long)reads[i].len);
        if (reads[i].len > 0 && wire_find_region(exported, n, 0, reads[i].addr, reads[i].len) >= 0) {
            info(t, "%s: not sent: inside another region the channel exported", what);
            continue;
        }
        int rc = raw_read(s->fd, 1000 + i, reads[i].addr, reads[i].len, body, sizeof body);
        if (rc == 0) {
            report(t, NOT_REFUSED, what, "SERVED: status 0, %llu bytes", (unsigned long long)reads[i].len);
            usable = reads[i].len <= sizeof body;
        } else if (rc == HCCL_E_NOT_FOUND) {
            report(t, REFUSED, what, "NOT_FOUND status");
        } else if (rc > 0) {
            report(t, REFUSED, what, "status %d", rc);
        } else if (rc == -1) {
            report(t, REFUSED, what, "closed, or no answer in %d ms", g_step_ms);
            usable = 0;
        } else {
            report(t, NOT_REFUSED, what, "an answer that is not a response to this request");
            usable = 0;
        }
    }
    free(exported);
    if (!usable) return;
    char what[120];
    snprintf(what, sizeof what, "(f) %s after the reads", bad_messages[0].what);
    message_attack(t, what, s->fd, &bad_messages[0].m);
}

/* (g) on a channel that accepted us: read requests of the first exported region (at most 64 KiB of it each)
 * pipelined without reading an answer. A soft NIC that bounds its queue stops reading, and the sends stall. */
static void served_pipeline(target *t, const char *name)
{
    char what[160];
    snprintf(what, sizeof what, "(g) %u read requests pipelined, no answer read", PIPELINE_MAX);
    session s;
    if (handshake(t, what, name, &s) != 0) return;
    if (s.outcome == 'S' && s.flaw == NULL && s.answer->nregions > 0) {
        const wire_region *r = &s.answer->regions[0];
        uint64_t len = r->size < 65536 ? r->size : 65536;
        int64_t t0 = now_ms();
        size_t sent = raw_pipeline(s.fd, r->addr, len, PIPELINE_MAX, g_step_ms);
        if (sent < PIPELINE_MAX)
            report(t, REFUSED, what, "the owner stopped reading after %zu requests (%lld ms; no send went out for %d "
                   "ms)", sent, (long long)(now_ms() - t0), g_step_ms);
        else
            report(t, NOT_REFUSED, what, "all %zu went out in %lld ms: the owner kept reading (an unbounded queue?)",
                   sent, (long long)(now_ms() - t0));
    } else {
        info(t, "%s: not sent: no channel took another client named '%s' (%s)", what, name,
             s.outcome == 'O' ? "parked" : s.outcome == 'S' ? "no region, or its hello does not check" : "refused");
    }
    session_close(&s);
}

/* (f)'s remaining malformed messages, each on a channel of its own (a channel that sees one closes). */
static void served_messages(target *t, const char *name)
{
    for (size_t i = 1; i < BAD_MESSAGES && !t->gone; i++) {
        char what[120];
        snprintf(what, sizeof what, "(f) %s", bad_messages[i].what);
        session s;
        if (handshake(t, what, name, &s) != 0) continue;
        if (s.outcome == 'S' && s.flaw == NULL) {
            message_attack(t, what, s.fd, &bad_messages[i].m);
        } else {
            info(t, "%s: not sent: no channel took another client named '%s' (%s)", what, name,
                 s.outcome == 'O' ? "parked" : s.outcome == 'S' ? s.flaw : "refused or closed");
        }
        session_close(&s);
    }
}

/* (f), and (e) with (f)'s hello. */
static void valid_proof(target *t)
{
    char name[HCOMM_CHANNEL_NAME_MAX_LEN + 1], what[HCOMM_CHANNEL_NAME_MAX_LEN + 80];
    int made_up = g_channel == NULL;
    if (made_up) snprintf(name, sizeof name, "hostile-peer-%d-%d-%d", (int)getpid(), t->index, t->round);
    else snprintf(name, sizeof name, "%s", g_channel);
    snprintf(what, sizeof what, "(f) a valid handshake for the %s channel name '%s'", made_up ? "made-up" : "given",
             name);
    session s;
    if (handshake(t, what, name, &s) != 0) return;
    char ip[INET_ADDRSTRLEN] = "?";
    struct in_addr from = {local_ip(s.fd)};
    inet_ntop(AF_INET, &from, ip, sizeof ip);
    switch (s.outcome) {
    case 'R':
        if (s.reason == REFUSE_AUTH) {
            pthread_mutex_lock(&g_out);
            t->secret_refused++;
            pthread_mutex_unlock(&g_out);
            report(t, REFUSED, what, "refused (not the same secret): --secret is not this target's channel secret, "
                   "so (e) and (f) test no valid proof");
        } else {
            report(t, REFUSED, what, "refused (%s, reason %u)", reason_text(s.reason), s.reason);
        }
        break;
    case 'C':
        report(t, REFUSED, what, "closed without a word");
        break;
    case 'O':
        if (made_up)
            report(t, REFUSED, what, "no answer in %d ms: parked (a verified hello waits, unanswered, for a SERVER "
                   "channel of its name to claim it, here none, or the connect timeout; no REFUSE_NO_CHANNEL)",
                   g_step_ms);
        else
            report(t, REFUSED, what, "no answer in %d ms: parked (no unclaimed SERVER channel of that name expects a "
                   "client from %s)", g_step_ms, ip);
        break;
    case 'S':
        if (made_up)
            report(t, NOT_REFUSED, what, "ACCEPTED a client for a channel name no channel has (%s)%s%s",
                   regions(s.nregions), s.flaw ? "; its hello: " : "", s.flaw ? s.flaw : "");
        else
            info(t, "%s: accepted by the channel of that name (%s)%s%s", what, regions(s.nregions),
                 s.flaw ? "; its hello: " : "", s.flaw ? s.flaw : "");
        break;
    default:
        report(t, NOT_REFUSED, what, "an answer that is neither a refusal, a close nor a server hello");
    }

    /* (e) while (f)'s connection is still open: the same bytes, for another connection's nonce */
    hello_attack(t, "(e) (f)'s client hello replayed on a new connection", -1, s.hello, s.len, g_step_ms, 0, NULL);

    if (s.outcome == 'O') {
        parked_messages(t, s.fd);
    } else if (s.outcome == 'S' && s.answer != NULL && s.flaw == NULL) {
        served_reads(t, &s);
        served_messages(t, name);
        served_pipeline(t, name);
    } else {
        info(t, "(f) out-of-range reads and malformed data messages: not sent: %s",
             s.outcome == 'S'   ? "the server's hello does not check"
             : s.outcome == '?' ? "the server answered with no hello"
                                : "the handshake was refused (no data message comes before the server's hello)");
    }
    session_close(&s);
}

/* ---- a round ---- */

static void one_round(target *t)
{
    char name[64], what[200], cut[64];
    snprintf(name, sizeof name, "hostile-peer-%d-%d-%d", (int)getpid(), t->index, t->round);
    int fd;
    size_t len;
    hello_msg *h;
    uint8_t nonce[16];

    /* (b) first: held open while the rest goes on */
    snprintf(cut, sizeof cut, "(b) a hello cut short at %d bytes and held open", CUT_AT);
    int stalled = -1;
    int64_t stalled_at = 0;
    if ((h = new_hello(t, cut, name, g_secret, 0, &fd, &len, nonce)) != NULL) {
        if (send_within(fd, h, CUT_AT, g_step_ms) == 0) {
            stalled = fd;
            stalled_at = now_ms();
        } else {
            judge(t, cut, fd, "the send failed, then ", NULL);
            close(fd);
        }
        free(h);
    }

    /* (a) garbage */
    uint8_t junk[1000];
    uint32_t x = 0x9e3779b9u ^ (uint32_t)(t->round * 7919 + t->index);
    for (size_t i = 0; i < sizeof junk; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        junk[i] = (uint8_t)x;
    }
    junk[0] = 'x'; /* not a hello's magic */
    hello_attack(t, "(a) 1000 random bytes", -1, junk, sizeof junk, g_step_ms, 0, NULL);
    static const char http[] = "GET / HTTP/1.1\r\nHost: soft-nic\r\n\r\n";
    hello_attack(t, "(a) an HTTP request", -1, http, sizeof http - 1, g_step_ms, 0, NULL);
    hello_msg head;
    memset(&head, 0, sizeof head);
    head.magic = HELLO_MAGIC;
    head.version = WIRE_VERSION + 1;
    head.kind = HELLO_CLIENT;
    hello_attack(t, "(a) a hello of another wire version", -1, &head, sizeof head, g_step_ms, 0, NULL);

    /* (c) oversized */
    head.version = WIRE_VERSION;
    head.nregions = UINT32_MAX;
    hello_attack(t, "(c) a hello declaring 2^32-1 regions", -1, &head, sizeof head, g_step_ms, 0, NULL);
    head.nregions = WIRE_MAX_REGIONS + 1;
    snprintf(what, sizeof what, "(c) a hello declaring %u regions (its first 16 bytes)", WIRE_MAX_REGIONS + 1);
    hello_attack(t, what, -1, &head, 16, g_step_ms, 0, NULL);
    const char *extra = "(c) a valid hello (the secret's proof, 1 region) with 100 bytes more than it declares";
    if ((h = new_hello(t, extra, name, g_secret, 1, &fd, &len, nonce)) != NULL) {
        uint8_t *more = calloc(1, len + 100);
        if (more != NULL) {
            memcpy(more, h, len);
            hello_attack(t, extra, fd, more, len + 100, g_step_ms, 0,
                         "parked (the extra bytes came after the listener had verified the hello)");
        } else {
            close(fd);
        }
        free(more);
        free(h);
    }
    char wrong[300];
    snprintf(wrong, sizeof wrong, "%s%s", WRONG_PREFIX, g_secret);
    snprintf(what, sizeof what, "(c) the largest hello (%u regions, %zu bytes, every one), a wrong secret",
             WIRE_MAX_REGIONS, sizeof(hello_msg) + (size_t)WIRE_MAX_REGIONS * sizeof(wire_region));
    if ((h = new_hello(t, what, name, wrong, WIRE_MAX_REGIONS, &fd, &len, nonce)) != NULL) {
        hello_attack(t, what, fd, h, len, LARGEST_SEND_MS, 0, NULL);
        snprintf(what, sizeof what, "(c) a hello of %u regions cut short at 1000 bytes by the end of the stream",
                 WIRE_MAX_REGIONS);
        hello_attack(t, what, -1, h, sizeof *h + 1000, g_step_ms, 1, NULL);
        free(h);
    }

    /* (d) a wrong secret */
    if ((h = new_hello(t, "(d) a wrong secret", name, wrong, 0, &fd, &len, nonce)) != NULL) {
        hello_attack(t, "(d) a wrong secret", fd, h, len, g_step_ms, 0, NULL);
        free(h);
    }
    const char *renamed = "(d) the secret's proof for another channel name";
    if ((h = new_hello(t, renamed, name, g_secret, 0, &fd, &len, nonce)) != NULL) {
        proof_of('C', g_secret, nonce, h->nonce, "another-name", h->proof); /* this connection's nonce, not name */
        hello_attack(t, renamed, fd, h, len, g_step_ms, 0, NULL);
        h->kind = HELLO_SERVER;
        hello_attack(t, "(d) a server's hello sent to the listener", -1, h, len, g_step_ms, 0, NULL);
        free(h);
    }

    /* (f) and (e) */
    valid_proof(t);

    /* (b) at last: the listener must have dropped it SOFT_HELLO_MS after its last byte */
    if (stalled >= 0) {
        int64_t left = stalled_at + SOFT_HELLO_MS + g_step_ms - now_ms();
        uint32_t reason = 0;
        char c = raw_outcome(stalled, left > 0 ? (int)left : 0, &reason, NULL);
        long long after = (long long)(now_ms() - stalled_at);
        if (c == 'C' || c == 'R') /* the round may have outlasted SOFT_HELLO_MS: when it was closed is not known */
            report(t, REFUSED, cut, "%s, found %lld ms after its last byte", c == 'C' ? "closed without a word"
                   : "refused", after);
        else if (c == 'O')
            report(t, NOT_REFUSED, cut, "still open %lld ms after its last byte (the listener drops a hello that stops "
                   "for %d ms)", after, SOFT_HELLO_MS);
        else
            report(t, NOT_REFUSED, cut, "an answer that is neither a refusal nor a close");
        close(stalled);
    }

    /* still there? */
    if ((fd = open_conn(t, "after the round", nonce)) >= 0) {
        info(t, "still listening after the round");
        close(fd);
    }
}

static void *attack_main(void *arg)
{
    target *t = arg;
    do {
        t->round++;
        one_round(t);
    } while (!t->gone && g_until != 0 && now_ms() < g_until);
    return NULL;
}

static int usage(const char *why)
{
    if (why != NULL) fprintf(stderr, "hostile_peer: %s\n", why);
    fprintf(stderr, "usage: hostile_peer --secret SECRET [--seconds N] [--step-ms MS] [--channel NAME] HOST:PORT "
                    "[HOST:PORT ...]\n"
                    "  attacks soft HComm soft NIC listeners as a hostile peer; SECRET: the application's channel "
                    "secret;\n  N: seconds of rounds (default: one round); MS: the longest wait of a step for a target "
                    "(default 3000;\n  a loaded host needs more); NAME: (f) under a real channel's name "
                    "(it takes that\n  channel's client's place) instead of a made-up one. Exit 0: all refused; 1: "
                    "some not; 2: usage,\n  unreachable, or SECRET refused by a target.\n");
    return 2;
}

/* HOST:PORT (HOST a name or an IPv4 address) into t->addr; 0, or -1 with a message. */
static int parse_target(const char *spec, target *t)
{
    const char *colon = strrchr(spec, ':');
    char host[256];
    if (colon == NULL || colon == spec || (size_t)(colon - spec) >= sizeof host) {
        fprintf(stderr, "hostile_peer: %s: not HOST:PORT\n", spec);
        return -1;
    }
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end != '\0' || port < 1 || port > 65535) {
        fprintf(stderr, "hostile_peer: %s: not a port\n", spec);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &ai);
    if (rc != 0 || ai == NULL) {
        fprintf(stderr, "hostile_peer: %s: %s\n", spec, rc != 0 ? gai_strerror(rc) : "no IPv4 address");
        return -1;
    }
    t->addr = *(struct sockaddr_in *)ai->ai_addr;
    t->addr.sin_port = htons((uint16_t)port);
    freeaddrinfo(ai);
    t->spec = spec;
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    long seconds = 0;
    int ntargets = 0;
    target *targets = calloc((size_t)argc, sizeof *targets);
    if (targets == NULL) return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(NULL);
        if (strcmp(a, "--secret") == 0 || strcmp(a, "--seconds") == 0 || strcmp(a, "--channel") == 0 ||
            strcmp(a, "--step-ms") == 0) {
            if (i + 1 >= argc) return usage("an option without its value");
            const char *v = argv[++i];
            if (strcmp(a, "--secret") == 0) {
                g_secret = v;
            } else if (strcmp(a, "--channel") == 0) {
                if (v[0] == '\0' || strlen(v) > HCOMM_CHANNEL_NAME_MAX_LEN) return usage("--channel: 1 to 191 bytes");
                g_channel = v;
            } else if (strcmp(a, "--step-ms") == 0) {
                char *end = NULL;
                long ms = strtol(v, &end, 10);
                if (end == v || *end != '\0' || ms < 100 || ms > 600000) return usage("--step-ms: 100 to 600000");
                g_step_ms = (int)ms;
            } else {
                char *end = NULL;
                seconds = strtol(v, &end, 10);
                if (end == v || *end != '\0' || seconds < 0 || seconds > 86400) return usage("--seconds: 0 to 86400");
            }
        } else if (a[0] == '-') {
            return usage("an unknown option");
        } else {
            if (parse_target(a, &targets[ntargets]) != 0) return usage(NULL);
            targets[ntargets].index = ntargets;
            ntargets++;
        }
    }
    if (g_secret == NULL) return usage("--secret is required");
    if (ntargets == 0) return usage("no target");
    /* the library's client check of a server hello proves the secret as configured */
    if (HcommSoftConfigure("secret", g_secret) != 0) return usage("--secret: at most 255 bytes (soft HComm's limit)");

    int unreachable = 0;
    for (int i = 0; i < ntargets; i++) { /* every target answers as a soft NIC before any attack */
        uint8_t nonce[16];
        int fd = raw_connect_to(&targets[i].addr, g_step_ms, nonce);
        if (fd >= 0) {
            close(fd);
            continue;
        }
        printf("hostile_peer: %s: unreachable: %s\n", targets[i].spec,
               fd == RAW_NO_NONCE ? "connected, but no soft HComm nonce" : "no connection");
        unreachable++;
    }
    if (unreachable > 0) {
        printf("hostile_peer: 0 attacks on %d targets, %d unreachable\n", ntargets, unreachable);
        return 2;
    }
    if (seconds > 0) printf("hostile_peer: attacking %d targets in rounds for %ld s", ntargets, seconds);
    else printf("hostile_peer: attacking %d targets for one round", ntargets);
    printf(", (f) under %s, every wait at most %d ms\n", g_channel ? "--channel's name" : "a made-up channel name",
           g_step_ms);
    fflush(stdout);
    int64_t start = now_ms();
    g_until = seconds > 0 ? start + seconds * 1000 : 0;
    for (int i = 0; i < ntargets; i++)
        if (pthread_create(&targets[i].thread, NULL, attack_main, &targets[i]) != 0) {
            targets[i].thread = 0;
            attack_main(&targets[i]);
        }
    for (int i = 0; i < ntargets; i++)
        if (targets[i].thread != 0) pthread_join(targets[i].thread, NULL);

    int attacks = 0, not_refused = 0, secret_refused = 0;
    char gone[1024] = "", refused_by[1024] = "";
    unreachable = 0;
    for (int i = 0; i < ntargets; i++) {
        target *t = &targets[i];
        attacks += t->attacks;
        not_refused += t->not_refused;
        if (t->unreachable) {
            unreachable++;
            size_t k = strlen(gone);
            snprintf(gone + k, sizeof gone - k, "%s%s", k ? ", " : "", t->spec);
        }
        if (t->secret_refused) {
            secret_refused++;
            size_t k = strlen(refused_by);
            snprintf(refused_by + k, sizeof refused_by - k, "%s%s", k ? ", " : "", t->spec);
        }
    }
    printf("hostile_peer: %d attacks on %d targets, ", attacks, ntargets);
    if (not_refused == 0) printf("all refused");
    else printf("%d not refused: %s", not_refused, g_failed);
    if (unreachable) printf("; %d unreachable during the attack: %s", unreachable, gone);
    if (secret_refused) printf("; --secret is not the channel secret of %s", refused_by);
    printf(" (%lld ms)\n", (long long)(now_ms() - start));
    free(targets);
    return not_refused ? 1 : unreachable || secret_refused ? 2 : 0;
}
