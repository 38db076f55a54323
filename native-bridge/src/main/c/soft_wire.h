/* What soft HComm peers say to each other on a channel's TCP connection. Little endian, packed. */
#ifndef SOFT_WIRE_H
#define SOFT_WIRE_H

#include "soft_internal.h"

#define WIRE_VERSION 1u
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
    char boot_id[SOFT_BOOT_ID_LEN];
    uint32_t pid;
    int32_t state_fd;
    uint64_t start_time;
    uint32_t force_tcp;
    uint32_t refuse_reason;
    wire_region regions[];
} hello_msg;

/* Data messages after the handshake. */
enum { MSG_READ_REQ = 1, MSG_READ_RESP = 2 };
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

void wire_proof(char role, const uint8_t server_nonce[16], const uint8_t client_nonce[16], const char *name,
                uint8_t out[32]);
int wire_proof_ok(const uint8_t a[32], const uint8_t b[32]);
hello_msg *wire_recv_hello(int fd);
void wire_fill_identity(hello_msg *h);

#endif
