/* The attention kernels of attn_simd.c, one set per ISA it is compiled
 * for (avx2_, avx512_, neon_), declared here; each is defined under its
 * three names (SIMD_NAME) and named in each plugin's context table
 * (cntx_<isa>.c).
 */
#ifndef GLLMK_SIMD_ATTN_H
#define GLLMK_SIMD_ATTN_H

#include <stdint.h>

#define SIMD_ATTN_CHUNK_DECLARE(isa, dt)                                                                \
	void isa##_attn_scores_##dt(float *s, int64_t ss, const float *q, int64_t qs, int64_t nh,      \
				    const void *const *k, int64_t n, int64_t d, const void *const *pf, \
				    int64_t npf);                                                      \
	void isa##_attn_accum_##dt(float *acc, int64_t as, const float *p, int64_t ps, int64_t nh,     \
				   const void *const *v, int64_t n, int64_t dv, const void *const *pf, \
				   int64_t npf);                                                      \
	void isa##_attn_scores_t_##dt(float *const *s, int64_t rows, const float *qt, int64_t rp,    \
				      const void *const *k, int64_t n, int64_t d, float *kbuf,       \
				      const void *const *pf, int64_t pf_bytes);

#define SIMD_ATTN_DECLARE(isa)                                                          \
	void isa##_axpy_f32(float *y, float a, const float *x, int64_t n);             \
	void isa##_axpy_f16(float *y, float a, const uint16_t *x, int64_t n);          \
	float isa##_dot_f32_f16(int64_t n, const float *a, const uint16_t *b);         \
	SIMD_ATTN_CHUNK_DECLARE(isa, f32)                                               \
	SIMD_ATTN_CHUNK_DECLARE(isa, f16)                                               \
	SIMD_ATTN_CHUNK_DECLARE(isa, bf16)                                              \
	SIMD_ATTN_CHUNK_DECLARE(isa, q8_0)                                              \
	SIMD_ATTN_CHUNK_DECLARE(isa, q4_0)

/* A context table's attn[dt] entry (cpu_cntx.h, struct cpu_attn_kernel). */
#define SIMD_ATTN_KERNELS(isa, dt) \
	{ .scores = isa##_attn_scores_##dt, .accum = isa##_attn_accum_##dt, .scores_t = isa##_attn_scores_t_##dt }

SIMD_ATTN_DECLARE(avx2)
SIMD_ATTN_DECLARE(avx512)
SIMD_ATTN_DECLARE(neon)

#endif
