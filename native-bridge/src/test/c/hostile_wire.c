/* A hostile peer's tools on raw sockets (hostile_wire.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "hostile_wire.h"

EndpointDesc ipv4_desc(uint32_t ip)
{
    EndpointDesc d;
    memset(&d, 0xFF, sizeof d);
    d.protocol = COMM_PROTOCOL_ROCE;
    d.commAddr.type = COMM_ADDR_TYPE_IP_V4;
    d.commAddr.addr.s_addr = ip;
    d.loc.locType = ENDPOINT_LOC_TYPE_HOST;
    return d;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* With a deadline: 1 when fd is ready for ev, -2 when the deadline passed first. */
static int wait_ready(int fd, short ev, int64_t until)
{
    for (;;) {
        int64_t left = until - mono_ms();
        if (left <= 0) return -2;
        struct pollfd p = {fd, ev, 0};
        int n = poll(&p, 1, (int)left);
        if (n > 0) return 1;
        if (n == 0) return -2;
        if (errno != EINTR) return -1;
    }
}

/* send (out = 1) or receive the whole buffer; see send_within. */
static int transfer(int fd, uint8_t *p, size_t len, int ms, int out)
{
    int64_t until = ms >= 0 ? mono_ms() + ms : 0;
    int flags = ms >= 0 ? MSG_DONTWAIT : 0;
    while (len > 0) {
        if (ms >= 0) {
            int w = wait_ready(fd, out ? POLLOUT : POLLIN, until);
            if (w < 0) return w;
        }
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL | flags) : recv(fd, p, len, flags);
        if (n < 0 && ms >= 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int send_within(int fd, const void *buf, size_t len, int ms) { return transfer(fd, (uint8_t *)buf, len, ms, 1); }
int recv_within(int fd, void *buf, size_t len, int ms) { return transfer(fd, buf, len, ms, 0); }
int send_all(int fd, const void *buf, size_t len) { return send_within(fd, buf, len, -1); }
int recv_all(int fd, void *buf, size_t len) { return recv_within(fd, buf, len, -1); }

int raw_connect_to(const struct sockaddr_in *to, int ms, uint8_t server_nonce[16])
{
    return raw_connect_from(to, 0, ms, server_nonce);
}

int raw_connect_from(const struct sockaddr_in *to, uint32_t from_ip, int ms, uint8_t server_nonce[16])
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return RAW_UNREACHABLE;
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = from_ip};
    if (from_ip != 0 && bind(fd, (const struct sockaddr *)&from, sizeof from) != 0) {
        close(fd);
        return RAW_UNREACHABLE;
    }
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int64_t until = mono_ms() + ms;
    int err = 0;
    socklen_t elen = sizeof err;
    if (connect(fd, (const struct sockaddr *)to, sizeof *to) != 0 &&
        (errno != EINPROGRESS || wait_ready(fd, POLLOUT, until) != 1 ||
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0)) {
        close(fd);
        return RAW_UNREACHABLE;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    nonce_msg n;
    int64_t left = until - mono_ms();
    if (recv_within(fd, &n, sizeof n, left > 0 ? (int)left : 0) != 0 || n.magic != NONCE_MAGIC ||
        n.version != WIRE_VERSION) {
        close(fd);
        return RAW_NO_NONCE;
    }
    memcpy(server_nonce, n.nonce, 16);
    return fd;
}

void proof_of(char role, const char *secret, const uint8_t server_nonce[16], const uint8_t client_nonce[16],
              const char *name, uint8_t out[32])
{
    static const char label[] = "hcomm-soft-handshake-v1";
    const void *parts[] = {secret, label, &role, server_nonce, client_nonce, name};
    size_t lens[] = {strlen(secret), sizeof label, 1, 16, 16, strlen(name)};
    soft_sha256(parts, lens, 6, out);
}

hello_msg *raw_hello(const char *name, const uint8_t server_nonce[16], const char *secret, uint32_t nregions,
                     uint32_t from_ip, size_t *len)
{
    *len = sizeof(hello_msg) + (size_t)nregions * sizeof(wire_region);
    hello_msg *h = calloc(1, *len);
    if (h == NULL) return NULL;
    h->magic = HELLO_MAGIC;
    h->version = WIRE_VERSION;
    h->kind = HELLO_CLIENT;
    h->nregions = nregions;
    static atomic_uint counter; /* a client nonce of its own for every hello */
    unsigned c = atomic_fetch_add(&counter, 1) + 1;
    for (int i = 0; i < 16; i++) h->nonce[i] = (uint8_t)(c * 37 + (unsigned)i + (i >= 8 ? c >> (i - 8) : 0));
    snprintf(h->name, sizeof h->name, "%s", name);
    h->from = h->to = ipv4_desc(from_ip);
    snprintf(h->host_id, sizeof h->host_id, "%s", "hostile-peer");
    h->pid = (uint32_t)getpid();
    h->state_fd = -1;
    h->force_tcp = 1;
    for (uint32_t i = 0; i < nregions; i++)
        h->regions[i] = (wire_region){.addr = 0x100000ull * (i + 1), .size = 4096, .cookie = i + 1, .slot = i % 100,
                                      .memfd = -1};
    proof_of('C', secret, server_nonce, h->nonce, h->name, h->proof);
    return h;
}

char raw_outcome(int fd, int ms, uint32_t *reason, hello_msg *answer)
{
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return 'O';
    hello_msg h;
    ssize_t n = recv(fd, &h, sizeof h, MSG_WAITALL);
    if (n <= 0) return 'C';
    if (n != (ssize_t)sizeof h || h.magic != HELLO_MAGIC) return '?';
    if (h.kind == HELLO_SERVER) {
        if (answer != NULL) *answer = h;
        return 'S';
    }
    if (h.kind != HELLO_REFUSE) return '?';
    *reason = h.refuse_reason;
    char c;
    ssize_t end = recv(fd, &c, 1, 0);
    return end == 0 || (end < 0 && errno == ECONNRESET) ? 'R' : '?';
}

int raw_read(int fd, uint64_t reqid, uint64_t addr, uint64_t len, uint8_t *body, size_t cap)
{
    data_msg m = {MSG_READ_REQ, 0, reqid, addr, len, 0, 0, 0}, resp;
    if (send_all(fd, &m, sizeof m) != 0 || recv_all(fd, &resp, sizeof resp) != 0) return -1;
    if (resp.type != MSG_READ_RESP || resp.reqid != reqid || resp.addr != addr) return -2;
    if (resp.status != 0) return resp.len == 0 ? resp.status : -2;
    if (resp.len != len) return -2;
    return recv_all(fd, body, len < cap ? len : cap) == 0 ? 0 : -1;
}

size_t raw_pipeline(int fd, uint64_t addr, uint64_t len, size_t max, int stall_ms)
{
    enum { BATCH = 256 };
    data_msg batch[BATCH];
    size_t sent = 0;
    while (sent < max) {
        size_t n = max - sent < BATCH ? max - sent : BATCH;
        for (size_t i = 0; i < n; i++) batch[i] = (data_msg){MSG_READ_REQ, 0, sent + i + 1, addr, len, 0, 0, 0};
        const uint8_t *p = (const uint8_t *)batch;
        size_t left = n * sizeof *batch;
        while (left > 0) {
            ssize_t k = send(fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0) {
                p += k;
                left -= (size_t)k;
                continue;
            }
            if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return sent;
            if (k < 0 && errno == EINTR) continue;
            if (wait_ready(fd, POLLOUT, mono_ms() + stall_ms) != 1) /* stalled: what went out so far */
                return sent + (n * sizeof *batch - left + sizeof *batch - 1) / sizeof *batch;
        }
        sent += n;
    }
    return sent;
}

size_t out_of_range_reads(uint64_t base, uint64_t size, bad_read out[OUT_OF_RANGE_READS])
{
    const bad_read all[OUT_OF_RANGE_READS] = {
        {"before", base - 1, 1},
        {"overlapping the start", base - 8, 16},
        {"after", base + size, 1},
        {"overlapping the end", base + size - 10, 11},
        {"empty", base + size / 2, 0},
        {"huge", base, 1ull << 62},
        {"longest", base, UINT64_MAX},
        {"wrapping", base + 16, UINT64_MAX - 15},
        {"wrapping from the top", UINT64_MAX - 7, 16},
        {"address 0", 0, 8},
    };
    memcpy(out, all, sizeof all);
    return OUT_OF_RANGE_READS;
}

const bad_message bad_messages[BAD_MESSAGES] = {
    {"an unknown message type", {7, 0, 1, 0, 0, 0, 0, 0}},
    {"a response never asked for", {MSG_READ_RESP, 0, 77, 0x1000, 16, 0, 0, 0}},
    {"an error response never asked for", {MSG_READ_RESP, HCCL_E_NOT_FOUND, 78, 0, 0, 0, 0, 0}},
};
