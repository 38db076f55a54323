/*
 * A hostile peer's tools on raw sockets against a soft NIC listener, in the wire format of soft_wire.h: shared by
 * test_soft.c (against an endpoint of its own) and hostile_peer.c (against a remote one). hostile_wire.c needs
 * the library's SHA-256 (soft_sha256.c, hidden in the shared library) built in beside it.
 */
#ifndef HOSTILE_WIRE_H
#define HOSTILE_WIRE_H

#include <netinet/in.h>
#include "soft_wire.h"

/* An IPv4 host endpoint's descriptor; ip in network byte order. */
EndpointDesc ipv4_desc(uint32_t ip);

/* Whole-buffer transfers: 0, -1 when the connection failed or ended, -2 when ms passed first. ms < 0: no deadline
 * of their own (the socket's SO_SNDTIMEO / SO_RCVTIMEO still ends a blocked call, as -1). */
int send_within(int fd, const void *buf, size_t len, int ms);
int recv_within(int fd, void *buf, size_t len, int ms);
int send_all(int fd, const void *buf, size_t len);
int recv_all(int fd, void *buf, size_t len);

/* A raw TCP client of the listener at `to`, after the server's nonce (in server_nonce), with SO_RCVTIMEO and
 * SO_SNDTIMEO of ms. The socket, or RAW_UNREACHABLE (no connection within ms) or RAW_NO_NONCE (connected, but no
 * soft HComm nonce of this wire version within ms). */
enum { RAW_UNREACHABLE = -1, RAW_NO_NONCE = -2 };
int raw_connect_to(const struct sockaddr_in *to, int ms, uint8_t server_nonce[16]);
/* The same from source address from_ip (network byte order; 0: any), e.g. 127.0.0.2 to look like another host. */
int raw_connect_from(const struct sockaddr_in *to, uint32_t from_ip, int ms, uint8_t server_nonce[16]);

/* The handshake proof as a peer that knows `secret` computes it, with the library's SHA-256. */
void proof_of(char role, const char *secret, const uint8_t server_nonce[16], const uint8_t client_nonce[16],
              const char *name, uint8_t out[32]);

/* A client hello for the connection whose nonce is server_nonce, proven with `secret`, from an endpoint at from_ip
 * (network byte order), with nregions made-up regions; *len: its size. NULL when out of memory. */
hello_msg *raw_hello(const char *name, const uint8_t server_nonce[16], const char *secret, uint32_t nregions,
                     uint32_t from_ip, size_t *len);

/* What the listener did within ms: 'R' refused (*reason) and closed, 'C' closed without a word, 'O' still open and
 * silent, 'S' answered with a server hello (its fixed part in *answer when answer is not NULL; the regions follow
 * on the socket), '?' anything else. A close with bytes of ours still unread there reaches us as a reset. */
char raw_outcome(int fd, int ms, uint32_t *reason, hello_msg *answer);

/* One read request as a hostile reader sends it: the response's status (0: served, its bytes in body; when len is
 * more than cap, only the first cap bytes were taken and the stream is out of step), -1 if the stream broke (or
 * the socket's receive timeout passed), -2 for an answer that is not a response to this request (or of another
 * length than asked). */
int raw_read(int fd, uint64_t reqid, uint64_t addr, uint64_t len, uint8_t *body, size_t cap);

/* Pipelines read requests of len bytes at addr on fd (reqids from 1) and reads no answer, until max went out or the
 * socket took nothing for stall_ms: how many went out (a request cut by the stall counts as out). An owner that
 * bounds what it queues stops reading after its bound plus what the sockets' buffers hold. */
size_t raw_pipeline(int fd, uint64_t addr, uint64_t len, size_t max, int stall_ms);

/* Read requests that the owner of the one region [base, base + size) must answer HCCL_E_NOT_FOUND: before, after
 * and overlapping its edges, empty, huge, wrapping around the address space, at address 0. */
typedef struct {
    const char *what;
    uint64_t addr, len;
} bad_read;
#define OUT_OF_RANGE_READS 10
size_t out_of_range_reads(uint64_t base, uint64_t size, bad_read out[OUT_OF_RANGE_READS]);

/* Data messages after a valid handshake that close the connection: an unknown type, responses never asked for. */
typedef struct {
    const char *what;
    data_msg m;
} bad_message;
#define BAD_MESSAGES 3
extern const bad_message bad_messages[BAD_MESSAGES];

#endif
