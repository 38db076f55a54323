/* Blocking socket helpers: whole-buffer send/receive that survive EINTR and short transfers. */
#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "soft_internal.h"

int net_send_all(int fd, const void *buf, size_t len) { return net_send_flags(fd, buf, len, 0); }

/* flags: MSG_MORE when more bytes follow at once (a header before its payload). */
int net_send_flags(int fd, const void *buf, size_t len, int flags)
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

/* 0 on success, -1 on error or end of stream, -2 on timeout. */
int net_recv_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n == 0) return -1;
        if (n < 0) {
            if (errno == EINTR) continue;
            return (errno == EAGAIN || errno == EWOULDBLOCK) ? -2 : -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void net_set_timeout(int fd, int64_t ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}
