/*
 * A mutation driver of our own for fuzz_wire.c, so the wire is fuzzed where no clang (libFuzzer) is installed.
 * Deterministic: a seeded PRNG, the target's well-formed seed inputs, and stacked mutations (bit flips, bytes set
 * to 0/0xff/0x7f/0x80, edits of the length and range fields the wire carries, truncation, extension, splicing,
 * duplicated and deleted chunks, regions added or removed, data messages repeated). An input that shows an outcome not seen before joins the pool of parents.
 * On a failure the sanitizer (or the target's oracle) aborts; the input is first written to
 * fuzz-crash-<seed>-<n>.bin in the working directory, which `fuzz_driver FILE` runs again.
 *
 *   fuzz_driver [-s SEED] [-w DIR] N    run N inputs; -w DIR also writes the seeds there (a libFuzzer corpus)
 *   fuzz_driver FILE...                 run saved inputs once each
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "soft_wire.h"
#include "fuzz_wire.h"

#define MAX_INPUT (64u << 10)
#define POOL_MAX 512

typedef struct {
    uint8_t *data;
    size_t len;
} input;

static input g_pool[POOL_MAX];
static int g_npool, g_nseeds;
static uint64_t g_rng;

/* The input running now, for the death callback. */
static const uint8_t *g_cur;
static size_t g_cur_len;
static uint64_t g_seed, g_iter;

void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void save_current(void)
{
    char path[96];
    snprintf(path, sizeof path, "fuzz-crash-%llu-%llu.bin", (unsigned long long)g_seed, (unsigned long long)g_iter);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, g_cur, g_cur_len);
        close(fd);
        fprintf(stderr, "fuzz_driver: input %llu (%zu bytes, %s) written to %s\n", (unsigned long long)g_iter,
                g_cur_len, w == (ssize_t)g_cur_len ? "whole" : "cut", path);
    }
}

static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t rnd(size_t n) { return n ? (size_t)(rnd64() % n) : 0; }

static uint64_t interesting(uint64_t current)
{
    static const uint64_t v[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 0x10000, 0x10001, 0x7fffffff, 0x80000000,
                                 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
                                 UINT64_MAX - 1, UINT64_MAX};
    switch (rnd(4)) {
    case 0: return current + 1 + rnd(16);
    case 1: return current - 1 - rnd(16);
    case 2: return rnd64() >> rnd(64);
    default: return v[rnd(sizeof v / sizeof *v)];
    }
}

static void put_le(uint8_t *p, uint64_t v, size_t width)
{
    for (size_t i = 0; i < width; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t width)
{
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Where a field the wire carries lies in buf: the hello's counts and regions, or a data message's fields. */
static int pick_field(const uint8_t *buf, size_t len, size_t *at, size_t *width)
{
    size_t msgs = 1; /* data messages start after the mode byte, or after the hello */
    if (len > 0 && !(buf[0] & 4) && len >= 1 + 16) {
        uint64_t n = get_le(buf + 1 + 12, 4);
        msgs = 1 + sizeof(hello_msg) + (size_t)n * sizeof(wire_region);
        if (rnd(2) == 0) {
            static const size_t hello_fields[][2] = {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {12, 4}};
            size_t k = rnd(6);
            if (k < 5) {
                *at = 1 + hello_fields[k][0];
                *width = hello_fields[k][1];
            } else { /* a region's addr, size or slot */
                static const size_t region_fields[][2] = {{0, 8}, {8, 8}, {8, 8}, {32, 4}};
                size_t f = rnd(4);
                *at = 1 + sizeof(hello_msg) + rnd(n < 16 ? n + 1 : 16) * sizeof(wire_region) + region_fields[f][0];
                *width = region_fields[f][1];
            }
            return *at + *width <= len;
        }
    }
    if (msgs >= len) return 0;
    static const size_t msg_fields[][2] = {{0, 4}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {24, 8}, {16, 8}};
    size_t f = rnd(sizeof msg_fields / sizeof *msg_fields);
    size_t count = (len - msgs) / sizeof(data_msg) + 1;
    *at = msgs + rnd(count) * sizeof(data_msg) + msg_fields[f][0];
    *width = msg_fields[f][1];
    return *at + *width <= len;
}

static size_t insert(uint8_t *buf, size_t len, size_t at, const uint8_t *src, size_t n)
{
    if (len + n > MAX_INPUT) n = MAX_INPUT - len;
    memmove(buf + at + n, buf + at, len - at);
    memmove(buf + at, src, n);
    return len + n;
}

/* Regions added to or removed from the hello with its count kept right, or a data message repeated. */
static size_t mutate_structure(uint8_t *buf, size_t len)
{
    size_t base = 1 + sizeof(hello_msg);
    if (len > 0 && !(buf[0] & 4) && len >= base) {
        uint64_t n = get_le(buf + 1 + 12, 4);
        size_t k = 1 + rnd(16);
        if (n > 0 && rnd(3) == 0) { /* remove k regions */
            if (k > n) k = (size_t)n;
            size_t end = base + k * sizeof(wire_region);
            if (end > len) return len;
            memmove(buf + base, buf + end, len - end);
            put_le(buf + 1 + 12, n - k, 4);
            return len - k * sizeof(wire_region);
        }
        uint8_t region[sizeof(wire_region)];
        if (n > 0 && len >= base + sizeof region) memcpy(region, buf + base, sizeof region);
        else for (size_t i = 0; i < sizeof region; i++) region[i] = (uint8_t)rnd64();
        for (size_t i = 0; i < k && len + sizeof region <= MAX_INPUT; i++) {
            put_le(region, get_le(region, 8) + 0x100000 * (i + 1), 8); /* another address */
            len = insert(buf, len, base, region, sizeof region);
            put_le(buf + 1 + 12, ++n, 4);
        }
        return len;
    }
    if (len < 1 + sizeof(data_msg)) return len;
    size_t from = 1 + rnd((len - 1) / sizeof(data_msg)) * sizeof(data_msg), times = 1 + rnd(80);
    uint8_t msg[sizeof(data_msg)];
    memcpy(msg, buf + from, sizeof msg);
    for (size_t i = 0; i < times && len + sizeof msg <= MAX_INPUT; i++) len = insert(buf, len, from, msg, sizeof msg);
    return len;
}

static size_t mutate_once(uint8_t *buf, size_t len)
{
    static const uint8_t bytes[] = {0, 0xff, 0x7f, 0x80};
    size_t at, width;
    switch (rnd(13)) {
    case 0: /* bit flip */
        if (len > 0) buf[rnd(len)] ^= (uint8_t)(1u << rnd(8));
        return len;
    case 1: /* interesting byte */
        if (len > 0) buf[rnd(len)] = bytes[rnd(4)];
        return len;
    case 2:
    case 3: /* a length, count or range field the wire carries */
        if (pick_field(buf, len, &at, &width)) put_le(buf + at, interesting(get_le(buf + at, width)), width);
        return len;
    case 4: /* truncation */
        return len > 0 ? rnd(len) : 0;
    case 5: { /* extension: zeros, random bytes or another data message */
        size_t n = 1 + rnd(rnd(2) ? 48 : 512);
        if (len + n > MAX_INPUT) return len;
        int kind = (int)rnd(3);
        for (size_t i = 0; i < n; i++) buf[len + i] = kind == 0 ? 0 : (uint8_t)rnd64();
        if (kind == 2 && n >= sizeof(data_msg) && len >= 1 + sizeof(data_msg))
            memcpy(buf + len, buf + len - sizeof(data_msg), sizeof(data_msg));
        return len + n;
    }
    case 6: { /* splice: this input's head, another's tail */
        const input *o = &g_pool[rnd(g_npool)];
        size_t cut = rnd(len + 1), from = rnd(o->len + 1), n = o->len - from;
        if (cut + n > MAX_INPUT) n = MAX_INPUT - cut;
        memcpy(buf + cut, o->data + from, n);
        return cut + n;
    }
    case 7: { /* a chunk duplicated somewhere */
        if (len == 0) return len;
        size_t from = rnd(len), n = 1 + rnd(len - from < 256 ? len - from : 256), to = rnd(len + 1);
        uint8_t chunk[256];
        memcpy(chunk, buf + from, n);
        return insert(buf, len, to, chunk, n);
    }
    case 8: { /* a chunk deleted */
        if (len == 0) return len;
        size_t from = rnd(len), n = 1 + rnd(len - from);
        memmove(buf + from, buf + from + n, len - from - n);
        return len - n;
    }
    case 9: /* 4 or 8 bytes anywhere */
        width = rnd(2) ? 8 : 4;
        if (len >= width) {
            at = rnd(len - width + 1);
            put_le(buf + at, interesting(get_le(buf + at, width)), width);
        }
        return len;
    case 10: /* another mode */
        if (len > 0) buf[0] = (uint8_t)rnd64();
        return len;
    case 11:
        return mutate_structure(buf, len);
    default: /* a value of this input copied into another place (an address into a length, ...) */
        if (len >= 16) {
            size_t from = rnd(len - 8 + 1), to = rnd(len - 8 + 1);
            memmove(buf + to, buf + from, 8);
        }
        return len;
    }
}

static void pool_add(const uint8_t *data, size_t len)
{
    int slot = g_npool < POOL_MAX ? g_npool++ : g_nseeds + (int)rnd((size_t)(POOL_MAX - g_nseeds));
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL) return;
    memcpy(copy, data, len);
    free(g_pool[slot].data);
    g_pool[slot] = (input){copy, len};
}

static int write_seeds(const char *dir, const uint8_t *seed, size_t len, int k)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%d", dir, k);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(seed, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "fuzz_driver: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int run_files(int argc, char **argv)
{
    uint8_t *buf = malloc(MAX_INPUT);
    for (int i = 0; buf != NULL && i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            fprintf(stderr, "fuzz_driver: cannot open %s\n", argv[i]);
            free(buf);
            return 2;
        }
        size_t len = fread(buf, 1, MAX_INPUT, f);
        fclose(f);
        g_cur = buf;
        g_cur_len = len;
        LLVMFuzzerTestOneInput(buf, len);
        printf("fuzz_driver: %s (%zu bytes): ok, outcomes %#llx\n", argv[i], len,
               (unsigned long long)fuzz_wire_outcomes());
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    const char *seed_dir = NULL;
    int opt;
    g_seed = 1;
    while ((opt = getopt(argc, argv, "s:w:")) != -1) {
        if (opt == 's') g_seed = strtoull(optarg, NULL, 10);
        else if (opt == 'w') seed_dir = optarg;
        else return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: fuzz_driver [-s SEED] [-w DIR] N | fuzz_driver FILE...\n");
        return 2;
    }
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(save_current);
    char *end;
    unsigned long long n = strtoull(argv[optind], &end, 10);
    if (*end != '\0') return run_files(argc - optind, argv + optind);

    g_rng = g_seed;
    uint8_t *buf = malloc(MAX_INPUT);
    if (buf == NULL) return 1;
    uint64_t seen = 0;
    for (int k = 0; k < FUZZ_WIRE_SEEDS; k++) {
        size_t len = fuzz_wire_seed(k, buf, MAX_INPUT);
        if (len == 0 || (seed_dir != NULL && write_seeds(seed_dir, buf, len, k) != 0)) return 1;
        g_cur = buf;
        g_cur_len = len;
        LLVMFuzzerTestOneInput(buf, len);
        seen |= fuzz_wire_outcomes();
        pool_add(buf, len);
    }
    g_nseeds = g_npool;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t bytes = 0;
    for (g_iter = 0; g_iter < n; g_iter++) {
        const input *parent = &g_pool[rnd((size_t)g_npool)];
        memcpy(buf, parent->data, parent->len);
        size_t len = parent->len;
        for (size_t r = 1 + rnd(4); r > 0; r--) len = mutate_once(buf, len);
        g_cur = buf;
        g_cur_len = len;
        bytes += len;
        LLVMFuzzerTestOneInput(buf, len);
        uint64_t got = fuzz_wire_outcomes();
        if (got & ~seen) {
            seen |= got;
            pool_add(buf, len);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("fuzz_driver: %llu inputs (seed %llu, %.1f MB) in %.1f s: %.0f inputs/s; outcomes seen %#llx, "
           "pool %d; no failure\n",
           n, (unsigned long long)g_seed, (double)bytes / 1e6, s, s > 0 ? (double)n / s : 0.0,
           (unsigned long long)seen, g_npool);
    for (int i = 0; i < g_npool; i++) free(g_pool[i].data);
    free(buf);
    return 0;
}
