/* gllmk-probe: device tensors and host data for the probe's own runs
 * (capability sweep, self-test, bench, demo), all through the public API.
 *
 * An arena owns the buffers one run allocates: a run creates its tensors,
 * checks arena.st once, calls ops, and frees the arena. Host-side encoders
 * (f16, bf16, q8_0) and the double-precision decoders live here too, so a
 * check never trusts the plugin to build its own reference.
 */
#ifndef GLLMK_PROBE_TENSOR_H
#define GLLMK_PROBE_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "gllmk.h"

#define ARENA_MAX 32

struct arena {
	gllmk_context *ctx;
	gllmk_status st;          /* first failure, GLLMK_OK if none */
	char err[256];            /* its message */
	int n;
	gllmk_buffer *bufs[ARENA_MAX];
	gllmk_tensor t[ARENA_MAX];
};

/* `ndim, shape` from a list of sizes: SHAPE(4, 256) */
#define SHAPE(...) (int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (const int64_t[]){ __VA_ARGS__ }

/* A new contiguous tensor in its own buffer, filled from host (its dtype's
 * layout) or with zero bytes when host is NULL. NULL (and a->st set) on failure;
 * later calls after a failure do nothing and return NULL. */
const gllmk_tensor *arena_new(struct arena *a, gllmk_dtype dt, const void *host, int32_t ndim,
			      const int64_t *shape);
/* A contiguous view of base's buffer at a byte offset (no new buffer). */
const gllmk_tensor *arena_view(struct arena *a, const gllmk_tensor *base, uint64_t offset, gllmk_dtype dt,
			       int32_t ndim, const int64_t *shape);
/* Reads a contiguous tensor's bytes into host. */
gllmk_status arena_read(struct arena *a, const gllmk_tensor *t, void *host);
/* Records a failed call's status and message in the arena (first one wins). */
gllmk_status arena_check(struct arena *a, gllmk_status st);
/* Records a failure with its message (host memory, a helper arena's error). */
gllmk_status arena_fail(struct arena *a, gllmk_status st, const char *msg);
void arena_free(struct arena *a);

uint64_t tensor_elems(const gllmk_tensor *t);
uint64_t tensor_bytes(const gllmk_tensor *t);

/* -------------------------------------------------------- host data */

struct prng {
	uint64_t s;
};
double prng_uniform(struct prng *r, double lo, double hi);
void prng_fill(struct prng *r, float *x, size_t n, double lo, double hi);
/* n new floats in [lo, hi) from seed; NULL when out of memory. */
float *prng_floats(uint64_t seed, size_t n, double lo, double hi);

uint16_t f32_to_f16(float x);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float x);

/* ggml's q8_0 reference encoder (SPEC/OPERATORS.md) and its decoder.
 * n is a multiple of 32; q8_0 takes 34 bytes per 32 values. */
#define Q8_0_BLOCK 32
#define Q8_0_BYTES 34
void q8_0_encode(const float *x, uint8_t *q, size_t n);
void q8_0_decode(const uint8_t *q, double *x, size_t n);

/* ||got - ref||₂ / ||ref||₂; infinity if any got is not finite. */
double rel_error(const float *got, const double *ref, size_t n);
double rel_error_f(const float *got, const float *ref, size_t n);
double checksum(const float *x, size_t n);
/* The median of v[0..n) (n >= 1); sorts v. */
double median(double *v, size_t n);

#endif
