/*
 * How the soft NIC's owner side should put registered memory on a TCP socket: a benchmark of its own (make bench-nic).
 * A server process owns a memfd-backed region (as HcommMemAlloc makes one) and answers read requests over one TCP
 * connection, each with a 16-byte header and then the bytes, in one of three ways:
 *   send      the CPU copies the bytes into the socket (what the soft NIC did until issue 29)
 *   sendfile  the kernel takes the memfd's pages into the socket (no copy by the server)
 *   zerocopy  send(MSG_ZEROCOPY) of the mapping, completions read from the socket's error queue
 * A client process keeps `depth` requests in flight and receives the answers. Printed: the client's bytes/s and the
 * server's CPU seconds (getrusage, user + system) per GB served, and for zerocopy how many completions said the
 * kernel copied after all (SO_EE_CODE_ZEROCOPY_COPIED).
 *
 *   nic_bench MODE SIZE [MB [DEPTH]]          both ends on loopback (the server is a child process)
 *   nic_bench serve MODE ADDR PORT            the server alone (run it in another network namespace)
 *   nic_bench client ADDR PORT SIZE MB DEPTH  the client alone
 *   nic_bench aliasing                        does sendfile copy the bytes, or hand the socket the pages?
 *   nic_bench lib copy|zerocopy SIZE [MB [DEPTH]]
 *                                             the same through soft HComm itself: an owner process serves a reader
 *                                             process over a force_tcp channel on loopback, answers copied (key
 *                                             "zerocopy" 0) or zero-copy where the kernel does not copy anyway; the
 *                                             owner's CPU per GB and the reads' bytes/s
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hcomm_api.h"
#include "hcomm_soft.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define REGION (256u << 20) /* the served region: larger than the caches, so every answer reads memory */

typedef struct {
    uint64_t off, len;
} request;

typedef struct {
    uint64_t off, len;
} header;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds the whole host spent so far (user, nice, system, irq, softirq of /proc/stat): softirq work of the
 * network stack is charged to whichever task it interrupts (no IRQ time accounting here), so this is the fair sum
 * when nothing else runs. */
static double host_cpu_s(void)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[7] = {0};
    if (f == NULL || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                            &v[6]) != 7) {
        if (f) fclose(f);
        return 0;
    }
    fclose(f);
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / (double)sysconf(_SC_CLK_TCK);
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static int recv_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_all(int fd, const void *buf, size_t len, int flags)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | flags);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* zerocopy bookkeeping: ids handed out (one per successful send call) and completed */
static uint32_t zc_next, zc_done, zc_copied, zc_notes;

static void zc_reap(int fd, int wait_ms)
{
    while (zc_done < zc_next) {
        char control[128];
        struct msghdr msg = {.msg_control = control, .msg_controllen = sizeof control};
        if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            if (errno == EAGAIN && wait_ms > 0) {
                struct pollfd p = {fd, 0, 0}; /* POLLERR is always reported */
                poll(&p, 1, wait_ms);
                continue;
            }
            return;
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(c);
            if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY) continue;
            zc_notes++;
            if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) zc_copied += e->ee_data - e->ee_info + 1;
            zc_done += e->ee_data - e->ee_info + 1;
        }
    }
}

static int serve_conn(int fd, const char *mode, int memfd, const uint8_t *base)
{
    int zc = strcmp(mode, "zerocopy") == 0, sf = strcmp(mode, "sendfile") == 0;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (zc && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0) die("SO_ZEROCOPY");
    request q;
    double cpu0 = -1, t0 = 0;
    uint64_t bytes = 0;
    while (recv_all(fd, &q, sizeof q) == 0) {
        if (cpu0 < 0) {
            cpu0 = cpu_s();
            t0 = now_s();
        }
        if (q.off > REGION || q.len > REGION - q.off) return 3;
        header h = {q.off, q.len};
        if (send_all(fd, &h, sizeof h, MSG_MORE) != 0) break;
        if (sf) {
            off_t off = (off_t)q.off;
            size_t left = q.len;
            while (left > 0) {
                ssize_t n = sendfile(fd, memfd, &off, left);
                if (n <= 0) {
                    if (n < 0 && errno == EINTR) continue;
                    return 4;
                }
                left -= (size_t)n;
            }
        } else if (zc) {
            const uint8_t *p = base + q.off;
            size_t left = q.len;
            while (left > 0) {
                ssize_t n = send(fd, p, left, MSG_NOSIGNAL | MSG_ZEROCOPY);
                if (n < 0) {
                    if (errno == EINTR) continue;
                    if (errno == ENOBUFS) { /* too many notifications pending: reap, then again */
                        zc_reap(fd, 10);
                        continue;
                    }
                    return 4;
                }
                zc_next++;
                p += n;
                left -= (size_t)n;
            }
            zc_reap(fd, 0);
        } else if (send_all(fd, base + q.off, q.len, 0) != 0) {
            return 4;
        }
        bytes += q.len;
    }
    if (zc) zc_reap(fd, 1000);
    double cpu = cpu_s() - cpu0, t = now_s() - t0;
    printf("server %-8s %8.3f s cpu, %6.3f cpu s/GB, %7.0f MB/s served", mode, cpu, cpu / (bytes / 1e9),
           bytes / 1e6 / t);
    if (zc) printf(", %u/%u sends copied by the kernel (%u notifications)", zc_copied, zc_next, zc_notes);
    printf("\n");
    fflush(stdout);
    return 0;
}

static int make_region(uint8_t **base)
{
    int memfd = memfd_create("nic-bench", MFD_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, REGION) != 0) die("memfd");
    *base = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (*base == MAP_FAILED) die("mmap");
    for (size_t i = 0; i < REGION; i += 8) *(uint64_t *)(*base + i) = i * 2654435761u;
    return memfd;
}

static int listen_on(const char *addr, int port)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, addr, &sa.sin_addr);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 4) != 0) die("listen");
    return l;
}

static int serve(const char *mode, const char *addr, int port)
{
    uint8_t *base;
    int memfd = make_region(&base);
    int l = listen_on(addr, port);
    int fd = accept(l, NULL, NULL);
    if (fd < 0) die("accept");
    return serve_conn(fd, mode, memfd, base);
}

static int client(const char *addr, int port, uint64_t size, uint64_t mb, int depth)
{
    int fd = -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, addr, &sa.sin_addr);
    for (int i = 0; i < 200 && fd < 0; i++) { /* the server may not listen yet */
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(fd);
            fd = -1;
            usleep(20000);
        }
    }
    if (fd < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    uint8_t *buf = malloc(size);
    uint64_t n = (mb << 20) / size, sent = 0, got = 0, slots = REGION / size;
    double c0 = cpu_s(), t0 = now_s(), h0 = host_cpu_s();
    while (got < n) {
        while (sent < n && sent - got < (uint64_t)depth) {
            request q = {(sent % slots) * size, size};
            if (send_all(fd, &q, sizeof q, 0) != 0) die("request");
            sent++;
        }
        header h;
        if (recv_all(fd, &h, sizeof h) != 0 || h.len != size || recv_all(fd, buf, size) != 0) die("answer");
        if (*(uint64_t *)buf != h.off * 2654435761u) {
            fprintf(stderr, "wrong bytes at %llu\n", (unsigned long long)h.off);
            return 5;
        }
        got++;
    }
    double t = now_s() - t0, c = cpu_s() - c0, h = host_cpu_s() - h0, gb = (double)(n * size) / 1e9;
    printf("client size %7llu: %7.0f MB/s, client %6.3f cpu s/GB, host %6.3f cpu s/GB\n", (unsigned long long)size,
           gb * 1e3 / t, c / gb, h / gb);
    close(fd);
    free(buf);
    return 0;
}

/* sendfile 64 KiB to a receiver that does not read yet, wait until the sender's socket has it all acknowledged
 * (SIOCOUTQ 0), change the memory, then read: the old bytes (sendfile copied) or the new ones (the socket, and then
 * the receiver's queue, hold the memfd's pages)? */
static int aliasing(void)
{
    uint8_t *base;
    int memfd = make_region(&base);
    int l = listen_on("127.0.0.1", 0);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    getsockname(l, (struct sockaddr *)&sa, &len);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(c, (struct sockaddr *)&sa, sizeof sa) != 0) die("connect");
    int s = accept(l, NULL, NULL);
    const size_t n = 64u << 10; /* within the receiver's first window: all of it is acknowledged at once */
    memset(base, 'A', n);
    off_t off = 0;
    size_t left = n;
    while (left > 0) {
        ssize_t k = sendfile(s, memfd, &off, left);
        if (k <= 0) die("sendfile");
        left -= (size_t)k;
    }
    int outq = -1;
    for (int i = 0; i < 1000 && outq != 0; i++) {
        if (ioctl(s, SIOCOUTQ, &outq) != 0) die("SIOCOUTQ");
        if (outq != 0) usleep(1000);
    }
    memset(base, 'B', n); /* sendfile returned and the peer acknowledged: the owner reuses its memory */
    uint8_t *buf = malloc(n);
    if (recv_all(c, buf, n) != 0) die("recv");
    size_t changed = 0;
    for (size_t i = 0; i < n; i++) changed += buf[i] == 'B';
    printf("sendfile of 64 KiB to a loopback TCP socket, unread, acknowledged (SIOCOUTQ %d), then the memory changed: "
           "%zu of %zu bytes the receiver read are the new ones (%s)\n",
           outq, changed, n, changed ? "the sockets held the pages, not a copy" : "sendfile copied");
    free(buf);
    return 0;
}

/* ---- through the library ---- */

static EndpointDesc loopback(void)
{
    EndpointDesc d;
    memset(&d, 0xFF, sizeof d);
    d.protocol = COMM_PROTOCOL_ROCE;
    d.commAddr.type = COMM_ADDR_TYPE_IP_V4;
    d.commAddr.addr.s_addr = htonl(INADDR_LOOPBACK);
    d.loc.locType = ENDPOINT_LOC_TYPE_HOST;
    return d;
}

static HcommChannelDesc channel_to(uint16_t port, int role, HcommMemHandle *mem)
{
    HcommChannelDesc d;
    memset(&d, 0xFF, sizeof d);
    d.header = (CommAbiHeader){HCOMM_CHANNEL_VERSION, HCOMM_CHANNEL_MAGIC_WORD, sizeof d, 0};
    d.remoteEndpoint = loopback();
    d.notifyNum = 0;
    d.exchangeAllMems = false;
    d.memHandles = mem;
    d.memHandleNum = 1;
    d.socket = NULL;
    d.role = role;
    d.port = port;
    d.roceAttr.srcPortList = NULL;
    d.channelName = "nic-bench";
    return d;
}

static int ready(ChannelHandle ch)
{
    for (int i = 0; i < 20000; i++) {
        int32_t st = 1;
        if (HcommChannelGetStatus(&ch, 1, &st) != 0 || (st != 0 && st != 1)) return -1;
        if (st == 0) return 0;
        usleep(500);
    }
    return -1;
}

typedef struct {
    uint32_t port;
    uint64_t addr;
} owner_hello;

/* The owner: REGION bytes registered, one SERVER channel; serves until the reader writes a byte. */
static int lib_owner(int up, int down, const char *mode)
{
    HcommSoftConfigure("force_tcp", "1");
    HcommSoftConfigure("zerocopy", strcmp(mode, "zerocopy") == 0 ? "1" : "0");
    EndpointDesc d = loopback();
    EndpointHandle ep;
    uint8_t *mem;
    HcommMemHandle mh;
    uint32_t port = 0;
    if (HcommEndpointCreate(&d, &ep) != 0 || HcommEndpointGetListenPort(ep, &port) != 0 ||
        HcommMemAlloc((void **)&mem, REGION) != 0)
        return 2;
    for (size_t i = 0; i < REGION; i += 8) *(uint64_t *)(mem + i) = i * 2654435761u;
    CommMem m = {COMM_MEM_TYPE_HOST, mem, REGION};
    if (HcommMemReg(ep, "bench", &m, &mh) != 0) return 2;
    owner_hello h = {port, (uint64_t)(uintptr_t)mem};
    HcommChannelDesc cd = channel_to(0, HCOMM_SOCKET_ROLE_SERVER, &mh);
    ChannelHandle ch;
    if (write(up, &h, sizeof h) != sizeof h || HcommChannelCreate(ep, COMM_ENGINE_CPU, &cd, 1, &ch) != 0 ||
        ready(ch) != 0)
        return 3;
    double c0 = cpu_s();
    char done;
    if (read(down, &done, 1) != 1) return 4;
    double cpu = cpu_s() - c0;
    HcommSoftCounters k = {.size = sizeof k};
    HcommSoftGetCounters(&k);
    printf("owner  %-8s %8.3f s cpu, %6.3f cpu s/GB served\n", mode, cpu, cpu / (k.bytesServed / 1e9));
    HcommChannelDestroy(&ch, 1);
    HcommMemUnreg(ep, mh);
    HcommMemFree(mem);
    HcommEndpointDestroy(ep);
    return 0;
}

static int lib_bench(const char *mode, uint64_t size, uint64_t mb, int depth)
{
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) die("pipe");
    fflush(stdout);
    pid_t pid = fork(); /* before the library's first call: its threads do not survive a fork */
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        _exit(lib_owner(up[1], down[0], mode));
    }
    close(up[1]);
    close(down[0]);
    owner_hello h;
    if (read(up[0], &h, sizeof h) != sizeof h) die("owner");
    HcommSoftConfigure("force_tcp", "1");
    EndpointDesc d = loopback();
    EndpointHandle ep;
    uint8_t *buf;
    HcommMemHandle mh;
    ThreadHandle th;
    uint32_t notifies = 0;
    if (HcommEndpointCreate(&d, &ep) != 0 || HcommMemAlloc((void **)&buf, size * (uint64_t)depth) != 0) die("reader");
    CommMem m = {COMM_MEM_TYPE_HOST, buf, size * (uint64_t)depth};
    HcommChannelDesc cd = channel_to((uint16_t)h.port, HCOMM_SOCKET_ROLE_CLIENT, &mh);
    ChannelHandle ch;
    if (HcommMemReg(ep, "dst", &m, &mh) != 0 || HcommThreadAlloc(COMM_ENGINE_CPU, 1, &notifies, &th) != 0 ||
        HcommChannelCreate(ep, COMM_ENGINE_CPU, &cd, 1, &ch) != 0 || ready(ch) != 0)
        die("channel");
    uint64_t n = (mb << 20) / size, slots = REGION / size;
    double t0 = now_s(), c0 = cpu_s(), h0 = host_cpu_s();
    for (uint64_t i = 0; i < n; i += (uint64_t)depth) {
        for (int k = 0; k < depth && i + (uint64_t)k < n; k++) {
            const uint8_t *src = (const uint8_t *)(uintptr_t)h.addr + ((i + (uint64_t)k) % slots) * size;
            if (HcommReadOnThread(th, ch, buf + (uint64_t)k * size, src, size) != 0) die("read");
        }
        if (HcommChannelDrainOnThread(th, ch) != 0) die("drain");
    }
    double t = now_s() - t0, c = cpu_s() - c0, hc = host_cpu_s() - h0, gb = (double)(n * size) / 1e9;
    printf("reader size %7llu: %7.0f MB/s, reader %6.3f cpu s/GB, host %6.3f cpu s/GB\n", (unsigned long long)size,
           gb * 1e3 / t, c / gb, hc / gb);
    if (write(down[1], "x", 1) != 1) die("done");
    int st = 0;
    waitpid(pid, &st, 0);
    HcommChannelDestroy(&ch, 1);
    HcommThreadFree(&th, 1);
    HcommMemUnreg(ep, mh);
    HcommMemFree(buf);
    HcommEndpointDestroy(ep);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strcmp(argv[1], "aliasing") == 0) return aliasing();
    if (argc >= 4 && argc <= 6 && strcmp(argv[1], "lib") == 0)
        return lib_bench(argv[2], strtoull(argv[3], NULL, 0), argc > 4 ? strtoull(argv[4], NULL, 0) : 4096,
                         argc > 5 ? atoi(argv[5]) : 4);
    if (argc == 5 && strcmp(argv[1], "serve") == 0) return serve(argv[2], argv[3], atoi(argv[4]));
    if (argc == 7 && strcmp(argv[1], "client") == 0)
        return client(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0), atoi(argv[6]));
    if (argc >= 3 && argc <= 5) {
        uint64_t size = strtoull(argv[2], NULL, 0), mb = argc > 3 ? strtoull(argv[3], NULL, 0) : 4096;
        int depth = argc > 4 ? atoi(argv[4]) : 4;
        int port = 20000 + (int)(getpid() % 20000);
        pid_t pid = fork();
        if (pid == 0) _exit(serve(argv[1], "127.0.0.1", port));
        int rc = client("127.0.0.1", port, size, mb, depth);
        int st = 0;
        waitpid(pid, &st, 0);
        return rc ? rc : WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    fprintf(stderr, "usage: nic_bench send|sendfile|zerocopy SIZE [MB [DEPTH]] | serve MODE ADDR PORT |"
                    " client ADDR PORT SIZE MB DEPTH | aliasing | lib copy|zerocopy SIZE [MB [DEPTH]]\n");
    return 2;
}
