/*
 * hcomm-delay-link: a delaying link for the multi-host test cluster (examples/netns-hosts.sh "link I delay D").
 *
 *   hcomm-delay-link [--spin-us S] [--queue-mb M] DELAY IFACE_A IFACE_B
 *
 * Forwards every Ethernet frame arriving on IFACE_A out of IFACE_B and every frame arriving on IFACE_B out of
 * IFACE_A, each one DELAY (e.g. 50us, 0.5ms, 2ms; at most 10s) after it arrived. Both interfaces are normally veth
 * ends in the root namespace: one the host's own end, detached from the bridge, the other the end of a new veth pair
 * whose peer is on the bridge. It stands in for netem's delay on kernels without netem.
 *
 * Design. One thread per direction, with an AF_PACKET socket receiving on its input interface and one sending on its
 * output interface. The delay is constant, so frames leave in the order they came, and the receiving socket's own
 * queue is the FIFO: each frame carries the kernel's receive timestamp (SO_TIMESTAMPNS, the moment it reached the
 * input interface, not the moment this thread woke up); the thread reads the oldest frame, sleeps until its
 * timestamp + DELAY (ppoll with a 1 us timer slack, PR_SET_TIMERSLACK), sends it and reads the next. Frames not yet
 * due stay in the kernel, so each one is copied in and straight out while it is in the cache, and a frame arriving
 * while one is held does not wake the thread. The sockets use PACKET_VNET_HDR: a GSO super-frame of up to 64 KB
 * (what TCP hands a veth) crosses as one frame with its segmentation and checksum-offload state, never segmented or
 * checksummed here. --spin-us S (default 50) wakes S microseconds early and spins to the due time, for the frames
 * of a quiet link, as timer wake-ups come tens of microseconds late. Spinning is paid from a budget of 2% of the
 * thread's time, so a busy link spins at most that much and sends the rest after a plain sleep; --spin-us 0 never
 * spins.
 *
 * What is sent goes through the output interface's qdisc (the tc tbf of "link I rate R" still applies). A frame
 * the receiving queue cannot hold (--queue-mb, default: 50 Gbit/s for 4 x DELAY, at least 64 MB), one too large, or
 * one refused on output (qdisc full, interface down) is dropped and counted, as a link would drop it. Our own
 * transmissions are not received back (PACKET_IGNORE_OUTGOING).
 *
 * It prints "ready" once its sockets are bound, its counters on SIGUSR1 and on exit (SIGTERM, SIGINT, SIGHUP), and
 * exits by itself when either interface disappears. Started in the background, it puts itself in a session of its
 * own (out of reach of a terminal's signals). Needs CAP_NET_RAW and CAP_NET_ADMIN (root).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define VNET_LEN ((uint32_t) sizeof(struct virtio_net_hdr))
#define FRAME_MAX (65536u + 64u) /* a GSO frame: 64 KB of IP, the Ethernet header, a VLAN tag */
#define NS 1000000000LL
/* spinning is paid from a budget of 1/SPIN_SHARE of the time (a thread spins at most 2% of a core), at most
   SPIN_BUDGET_MAX saved up: a quiet link's frames (pings, requests) are sent on time, a busy link's sleep */
#define SPIN_SHARE 50
#define SPIN_BUDGET_MAX 2000000LL

struct counters {
    uint64_t frames, bytes;
    uint64_t drop_trunc, drop_tx;
    uint64_t late_n, late_sum_ns, late_max_ns;
    uint64_t late_hist[4]; /* late by < 10 us, < 50 us, < 200 us, more */
};

struct dir {
    const char *in_name, *out_name;
    int in_ifindex, out_ifindex;
    int rx, tx;
    struct counters c; /* written by the direction's thread only; the stats printer reads a racy snapshot */
};

static int64_t delay_ns;
static int64_t spin_ns = 50000;
static struct dir dirs[2];

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("hcomm-delay-link: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* the clock of SO_TIMESTAMPNS */
static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * NS + ts.tv_nsec;
}

/* "50us", "0.5ms", "2ms", "1s", "250ns" -> nanoseconds, or -1 */
static int64_t parse_duration(const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0)) {
        return -1;
    }
    double mult;
    if (strcmp(end, "ns") == 0) {
        mult = 1;
    } else if (strcmp(end, "us") == 0) {
        mult = 1e3;
    } else if (strcmp(end, "ms") == 0) {
        mult = 1e6;
    } else if (strcmp(end, "s") == 0) {
        mult = 1e9;
    } else {
        return -1;
    }
    double ns = v * mult;
    return ns > 10e9 ? -1 : (int64_t) (ns + 0.5);
}

static void set_int(int fd, int level, int opt, int value, const char *what) {
    if (setsockopt(fd, level, opt, &value, sizeof value) != 0) {
        die("setsockopt %s: %s", what, strerror(errno));
    }
}

static int ifindex_of(const char *name) {
    unsigned idx = if_nametoindex(name);
    if (idx == 0) {
        die("no interface %s", name);
    }
    return (int) idx;
}

/* the receiving socket, the direction's FIFO: every frame arriving on the interface, vnet header and timestamp */
static int open_rx(int ifindex, const char *name, int queue_bytes) {
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        die("socket(AF_PACKET): %s (needs CAP_NET_RAW)", strerror(errno));
    }
    set_int(fd, SOL_PACKET, PACKET_VNET_HDR, 1, "PACKET_VNET_HDR");
    set_int(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING");
    set_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, queue_bytes, "SO_RCVBUFFORCE");
    set_int(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS");
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex};
    if (bind(fd, (struct sockaddr *) &sll, sizeof sll) != 0) {
        die("bind to %s: %s", name, strerror(errno));
    }
    /* what was queued before the bind (from any interface) is not ours to forward */
    char buf[64];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC) >= 0) {
    }
    struct tpacket_stats st;
    socklen_t sl = sizeof st;
    getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl); /* reading them resets them */
    return fd;
}

/* the sending socket: protocol 0 receives nothing; every message names the interface and its EtherType */
static int open_tx(void) {
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) {
        die("socket(AF_PACKET): %s (needs CAP_NET_RAW)", strerror(errno));
    }
    set_int(fd, SOL_PACKET, PACKET_VNET_HDR, 1, "PACKET_VNET_HDR");
    /* large enough that the output qdisc's own limit (tbf: 100 ms at the rate) drops, not this socket */
    set_int(fd, SOL_SOCKET, SO_SNDBUFFORCE, 256 << 20, "SO_SNDBUFFORCE");
    return fd;
}

static void gone_check(const struct dir *d) {
    if ((int) if_nametoindex(d->in_name) != d->in_ifindex || (int) if_nametoindex(d->out_name) != d->out_ifindex) {
        fprintf(stderr, "hcomm-delay-link: %s or %s is gone; exiting\n", d->in_name, d->out_name);
        exit(0);
    }
}

static void sleep_ns(int64_t ns) {
    struct timespec ts = {.tv_sec = ns / NS, .tv_nsec = ns % NS};
    ppoll(NULL, 0, &ts, NULL);
}

/* waits until a frame can be read; looks for a vanished interface after an error or a second without frames (a
   link that went down reports ENETDOWN once, here; one deleted, ENETDOWN too, and then nothing) */
static void await_frame(struct dir *d) {
    struct pollfd pfd = {.fd = d->rx, .events = POLLIN};
    struct timespec ts = {.tv_sec = 1};
    int p = ppoll(&pfd, 1, &ts, NULL);
    if (p < 0 && errno != EINTR) {
        die("ppoll: %s", strerror(errno));
    }
    if (p > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
        int err = 0; /* reading it clears it */
        socklen_t el = sizeof err;
        getsockopt(d->rx, SOL_SOCKET, SO_ERROR, &err, &el);
        gone_check(d);
    } else if (p == 0) {
        gone_check(d);
    }
}

static void *run(void *arg) {
    struct dir *d = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    uint8_t *buf = malloc(VNET_LEN + FRAME_MAX);
    if (!buf) {
        die("out of memory");
    }
    char ctrl[CMSG_SPACE(sizeof(struct timespec)) + 64];
    struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_ifindex = d->out_ifindex, .sll_halen = ETH_ALEN};
    int64_t budget = 0, budget_at = now_ns();
    for (;;) {
        /* the oldest frame */
        struct iovec iov = {.iov_base = buf, .iov_len = VNET_LEN + FRAME_MAX};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl, .msg_controllen = sizeof ctrl};
        ssize_t got = recvmsg(d->rx, &mh, MSG_DONTWAIT | MSG_TRUNC);
        if (got < 0) {
            if (errno == EAGAIN || errno == EINTR || errno == ENETDOWN || errno == ENODEV || errno == ENXIO) {
                await_frame(d);
                continue;
            }
            die("recv on %s: %s", d->in_name, strerror(errno));
        }
        if ((size_t) got > iov.iov_len || (uint32_t) got <= VNET_LEN + ETH_HLEN) {
            d->c.drop_trunc++;
            continue;
        }
        int64_t t = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                t = (int64_t) ts.tv_sec * NS + ts.tv_nsec;
            }
        }
        int64_t now = now_ns();
        /* no timestamp, one of another clock, or one from before a clock step: the frame came now */
        if (t > now || t < now - 10 * NS - delay_ns) {
            t = now;
        }
        /* held until due: a sleep, or a sleep to S us before and a spin, while the spin budget lasts */
        int64_t due = t + delay_ns;
        budget += (now - budget_at) / SPIN_SHARE;
        budget_at = now;
        if (budget > SPIN_BUDGET_MAX) {
            budget = SPIN_BUDGET_MAX;
        }
        int64_t spin = budget >= spin_ns ? spin_ns : 0;
        while (due - now > spin) {
            sleep_ns(due - now - spin);
            now = now_ns();
        }
        int64_t spin_from = now;
        while (now < due) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            now = now_ns();
        }
        budget -= now - spin_from;
        const uint8_t *frame = buf + VNET_LEN;
        memcpy(&to.sll_protocol, frame + 12, 2); /* the EtherType, as on the wire */
        memcpy(to.sll_addr, frame, ETH_ALEN);
        for (;;) {
            if (sendto(d->tx, buf, (size_t) got, MSG_DONTWAIT, (struct sockaddr *) &to, sizeof to) >= 0) {
                break;
            }
            if (errno == EINTR) {
                continue;
            }
            /* refused: the qdisc is full, the link down, the frame too large, the socket's buffer full */
            d->c.drop_tx++;
            if (errno == ENODEV || errno == ENXIO) {
                gone_check(d);
            }
            break;
        }
        uint64_t late = (uint64_t) (now - due);
        d->c.frames++;
        d->c.bytes += (uint64_t) got - VNET_LEN;
        d->c.late_n++;
        d->c.late_sum_ns += late;
        if (late > d->c.late_max_ns) {
            d->c.late_max_ns = late;
        }
        d->c.late_hist[late < 10000 ? 0 : late < 50000 ? 1 : late < 200000 ? 2 : 3]++;
    }
    return NULL;
}

static void print_stats(const char *why) {
    for (int i = 0; i < 2; i++) {
        const struct dir *d = &dirs[i];
        struct counters c;
        memcpy(&c, (const void *) &d->c, sizeof c);
        struct tpacket_stats st = {0};
        socklen_t sl = sizeof st;
        getsockopt(d->rx, SOL_PACKET, PACKET_STATISTICS, &st, &sl); /* since the last report */
        uint64_t n = c.late_n ? c.late_n : 1;
        fprintf(stderr,
                "hcomm-delay-link %s: %s->%s frames %" PRIu64 " bytes %" PRIu64 "; sent late by avg %.1f us, max"
                " %.1f us; <10us %.1f%% <50us %.1f%% <200us %.1f%%; dropped: queue full %u (since the last report)"
                " too large %" PRIu64 " refused on output %" PRIu64 "\n",
                why, d->in_name, d->out_name, c.frames, c.bytes, c.late_sum_ns / 1e3 / n, c.late_max_ns / 1e3,
                100.0 * c.late_hist[0] / n, 100.0 * (c.late_hist[0] + c.late_hist[1]) / n,
                100.0 * (c.late_hist[0] + c.late_hist[1] + c.late_hist[2]) / n, st.tp_drops, c.drop_trunc, c.drop_tx);
    }
    fflush(stderr);
}

static void usage(void) {
    fputs("usage: hcomm-delay-link [--spin-us S] [--queue-mb M] DELAY IFACE_A IFACE_B\n"
          "  forwards frames between IFACE_A and IFACE_B both ways, each held DELAY (e.g. 50us, 0.5ms, 2ms)\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv) {
    long queue_mb = 0;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--queue-mb") == 0 && i + 1 < argc) {
            queue_mb = strtol(argv[++i], NULL, 10);
            if (queue_mb < 1 || queue_mb > 1024) {
                usage();
            }
        } else if (strcmp(argv[i], "--spin-us") == 0 && i + 1 < argc) {
            spin_ns = strtol(argv[++i], NULL, 10) * 1000;
            if (spin_ns < 0 || spin_ns > 1000000) {
                usage();
            }
        } else {
            usage();
        }
    }
    if (argc - i != 3) {
        usage();
    }
    delay_ns = parse_duration(argv[i]);
    if (delay_ns < 0) {
        die("delay like 50us, 0.5ms or 2ms (at most 10s), got '%s'", argv[i]);
    }
    /* the frames in flight: 50 Gbit/s for 4 x the delay (a frame's memory in the kernel is up to twice its bytes) */
    if (queue_mb == 0) {
        double mb = 6.25e9 * 4 * (double) delay_ns / 1e9 / 1048576.0;
        queue_mb = mb < 64 ? 64 : mb > 1024 ? 1024 : (long) mb + 1;
    }
    setsid(); /* fails, harmlessly, for a process group leader: run by hand in a terminal, ^C still stops it */
    const char *names[2] = {argv[i + 1], argv[i + 2]};
    int idx[2] = {ifindex_of(names[0]), ifindex_of(names[1])};
    if (idx[0] == idx[1]) {
        die("two different interfaces, got %s twice", names[0]);
    }
    int queue_bytes = (int) (queue_mb << 20) / 2; /* the kernel doubles it */
    int rx[2] = {open_rx(idx[0], names[0], queue_bytes), open_rx(idx[1], names[1], queue_bytes)};
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* the threads inherit the mask; main takes the signals in sigwait */
    for (int k = 0; k < 2; k++) {
        struct dir *d = &dirs[k];
        d->in_name = names[k];
        d->out_name = names[1 - k];
        d->in_ifindex = idx[k];
        d->out_ifindex = idx[1 - k];
        d->rx = rx[k];
        d->tx = open_tx();
    }
    for (int k = 0; k < 2; k++) {
        pthread_t t;
        int e = pthread_create(&t, NULL, run, &dirs[k]);
        if (e) {
            die("pthread_create: %s", strerror(e));
        }
    }
    fprintf(stderr, "hcomm-delay-link: ready: %s <-> %s, delay %" PRId64 " ns each way, queue %ld MB per direction\n",
            names[0], names[1], delay_ns, queue_mb);
    fflush(stderr);
    for (;;) {
        int sig = 0;
        sigwait(&sigs, &sig);
        if (sig == SIGUSR1) {
            print_stats("stats");
            continue;
        }
        print_stats("exit");
        _exit(0);
    }
}
