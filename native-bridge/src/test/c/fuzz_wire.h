/* The wire fuzz target (fuzz_wire.c), and what our own mutation driver (fuzz_driver.c) needs of it. */
#ifndef FUZZ_WIRE_H
#define FUZZ_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: one input, always 0; a failed check aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Seed input `which` (0 .. FUZZ_WIRE_SEEDS - 1), well formed, written to out: its length, 0 if cap is too small. */
#define FUZZ_WIRE_SEEDS 5
size_t fuzz_wire_seed(int which, uint8_t *out, size_t cap);

/* What the last input reached, one bit per outcome: the driver keeps inputs that show a new one. */
uint64_t fuzz_wire_outcomes(void);

#endif
