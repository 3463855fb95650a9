/* The random bytes of the CPU plugins' own unit tests (test_*.c): a
 * seeded xorshift32, so a failure reproduces. */
#ifndef GLLMK_CPU_TEST_RNG_H
#define GLLMK_CPU_TEST_RNG_H

#include <stdint.h>

static inline uint32_t test_xorshift32(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

#endif
