/* Helpers shared by the C tests (test_soft.c, test_comm.c). */
#ifndef TEST_COMMON_H
#define TEST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Failed checks so far, and who checks (test_comm's ranks say which; empty: this process). */
static int failures;
static char g_who[64];

#define CHECK(cond, ...)                                                                              \
    do {                                                                                              \
        if (!(cond)) {                                                                                \
            __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                                       \
            fprintf(stderr, "FAIL %s%s%s%s:%d: %s: ", g_who[0] ? "[" : "", g_who, g_who[0] ? "] " : "", \
                    __FILE__, __LINE__, #cond);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                             \
            fprintf(stderr, "\n");                                                                    \
        }                                                                                             \
    } while (0)
#define CHECK_RC(expr, want)                                                                          \
    do {                                                                                              \
        int rc_ = (int)(expr);                                                                        \
        CHECK(rc_ == (want), "got %d, want %d", rc_, (int)(want));                                    \
    } while (0)

/* Executes this test's own binary afresh with argv (argv[0] its name; NULL-terminated); returns only on failure.
 * HCOMM_TEST_EMULATOR names a user-mode emulator (qemu-aarch64-static, its sysroot in QEMU_LD_PREFIX) that this
 * binary runs under: the kernel cannot start a foreign-architecture image itself (no binfmt_misc handler needed or
 * assumed), so the child is the emulator again, given this binary's path (the emulator reports the guest's). */
static inline void exec_self(char **argv)
{
    const char *emu = getenv("HCOMM_TEST_EMULATOR");
    if (emu == NULL || emu[0] == 0) {
        execv("/proc/self/exe", argv);
        return;
    }
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    char *args[32];
    int k = 0;
    args[k++] = (char *)emu;
    args[k++] = self;
    for (int i = 1; argv[i] != NULL && k < 31; i++) args[k++] = argv[i];
    args[k] = NULL;
    execvp(emu, args);
}

static inline int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The byte at offset i of test data seeded by seed: cheap, and different for every offset and seed. */
static inline uint8_t pattern(uint64_t i, uint32_t seed)
{
    return (uint8_t)(((i * 2654435761u) >> 13) ^ seed ^ (i >> 7));
}

#endif
