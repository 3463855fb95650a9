/* What the pieces of the f32 GEMM (plugins/cpu/gemm/) share: the block
 * arithmetic, and the packing (pack.c) and small-M path (sgemm_small_m.c)
 * that the driver (sgemm.c) calls. Not for the op files: they use
 * sgemm.h. */
#ifndef GLLMK_CPU_SGEMM_INTERNAL_H
#define GLLMK_CPU_SGEMM_INTERNAL_H

#include "gemm/sgemm.h"

/* The limits of the block sizes (sgemm.c, gemm_blocking). */
#define KC_MIN 128
#define KC_MAX 1024
#define MC_MAX 4096
#define A_BLOCKS_BYTES (64 << 20)
#define NC_MAX 4096

static inline int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

static inline int64_t ceil_div(int64_t x, int64_t m)
{
	return (x + m - 1) / m;
}

static inline int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t isqrt(int64_t x)
{
	int64_t r = 0;

	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

/* pack.c: A[i0.., p0..] (mc×kc) into mr-row panels and B[p0.., j0..]
 * (kc×nc, decoded when B is a weight matrix) into nr-column panels, the
 * last panels padded with zeros. */
void sgemm_pack_a(const struct cpu_sgemm *g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t mr,
		   float *dst);
void sgemm_pack_b(const struct cpu_sgemm *g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr, float *dst);

/* pack.c, bf16 pairs (sgemm.h): as sgemm_pack_b, B(p, j) the word of
 * depths 2p, 2p + 1 of weight row j, k_elems the weights' K (g->k counts
 * words there). */
void sgemm_pack_b_pairs(const struct cpu_sgemm *g, int64_t k_elems, int64_t p0, int64_t kc, int64_t j0,
			int64_t nc, int64_t nr, float *dst);

/* sgemm_small_m.c: M below the register block; 0 when the layout has no
 * such path (then the GEMM runs). */
int sgemm_small_m(struct cpu_state *s, const struct cpu_sgemm *g);

#endif
