/* The int8 GEMM microkernel (AVX512-VNNI; layouts: plugins/cpu/gemm/qgemm.h):
 * AVX512_QGEMM_MR activation rows × 16 weight rows. Per 4 bytes of K, one
 * zmm load of the weights' u (16 rows × 4 bytes) and one vpdpbusd per
 * activation row with its 4 bytes broadcast from memory. The int32 sums
 * become f32 per sub-block:
 *   qgemm_body        (x as q8_0): acc += cvt(sum)·xs·scale (+ offset·xs·Σxq)
 *   qgemm_body_xs256  (x as q8_K, 256-element weight blocks):
 *                     part += cvt(sum)·scale (+ offset·Σxq) per sub-block,
 *                     acc += part·xs per 256: one multiply fewer per
 *                     sub-block and row, on the pipes vpdpbusd uses.
 * Everything stays in registers: MR int32 sums, MR f32 accumulators (and
 * MR partial sums in the xs256 mode).
 */
#include <immintrin.h>
#include <string.h>

#include "avx512_kernels.h"
#include "cpu_cntx.h"
#include "gemm/qgemm.h"

#define MR AVX512_QGEMM_MR
#define NR CPU_QGEMM_NR
#define XS_BLOCK 256            /* the xs256 mode's elements per activation scale (QK_K) */

typedef int32_t i32_alias __attribute__((may_alias));
typedef float f32_alias __attribute__((may_alias));

/* Bytes of one packed sub-block: A (mr rows) and B (16 rows). */
#define A_SB_BYTES(sb) CPU_QGEMM_A_SB_BYTES(sb, MR)
#define B_SB_BYTES CPU_QGEMM_B_SB_BYTES

/* The int32 sums of one sub-block, dot[r] = xo[r] (the folded offset
 * −c·Σxq) or 0 (with a min) plus Σ u·xq. */
static inline __attribute__((always_inline)) void sub_block_dots(const uint8_t *a, const uint8_t *b, const int sb,
								 const int has_min, __m512i dot[MR])
{
	const i32_alias *xo = (const i32_alias *)(a + sb * MR + 4 * MR);

	for (int r = 0; r < MR; r++)
		dot[r] = has_min ? _mm512_setzero_si512() : _mm512_set1_epi32(xo[r]);
	for (int g = 0; g < sb / 4; g++) {
		const __m512i bv = _mm512_loadu_si512(b + 4 * NR * g);
		const i32_alias *ag = (const i32_alias *)(a + 4 * MR * g);

		for (int r = 0; r < MR; r++)
			dot[r] = _mm512_dpbusd_epi32(dot[r], bv, _mm512_set1_epi32(ag[r]));
	}
}

/* Weights with a min: acc[r] += offset·xo[r], xo the f32 xs·Σxq (q8_0
 * activations) or Σxq (xs256). */
static inline __attribute__((always_inline)) void add_min_term(const uint8_t *a, const uint8_t *b, const int sb,
							       __m512 acc[MR])
{
	const __m512 off = _mm512_loadu_ps((const float *)(b + NR * sb + 4 * NR));
	const f32_alias *xo = (const f32_alias *)(a + sb * MR + 4 * MR);

	for (int r = 0; r < MR; r++)
		acc[r] = _mm512_fmadd_ps(off, _mm512_set1_ps(xo[r]), acc[r]);
}

static inline __attribute__((always_inline)) void zero_tile(__m512 acc[MR])
{
	for (int r = 0; r < MR; r++)
		acc[r] = _mm512_setzero_ps();
}

static inline __attribute__((always_inline)) void store_tile(const __m512 acc[MR], float *c, int64_t ldc,
							     int accumulate)
{
	for (int r = 0; r < MR; r++) {
		float *cr = c + r * ldc;

		_mm512_storeu_ps(cr, accumulate ? _mm512_add_ps(acc[r], _mm512_loadu_ps(cr)) : acc[r]);
	}
}

static inline __attribute__((always_inline)) void qgemm_body(int64_t nsb, const uint8_t *a, const uint8_t *b,
							     float *c, int64_t ldc, int accumulate, const int sb,
							     const int has_min)
{
	__m512 acc[MR];

	zero_tile(acc);
	for (int64_t s = 0; s < nsb; s++, a += A_SB_BYTES(sb), b += B_SB_BYTES(sb, has_min)) {
		const f32_alias *xs = (const f32_alias *)(a + sb * MR);
		const __m512 scale = _mm512_loadu_ps((const float *)(b + NR * sb));
		__m512i dot[MR];

		sub_block_dots(a, b, sb, has_min, dot);
		for (int r = 0; r < MR; r++)
			acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[r]), _mm512_set1_ps(xs[r])), scale,
						 acc[r]);
		if (has_min)
			add_min_term(a, b, sb, acc);
	}
	store_tile(acc, c, ldc, accumulate);
}

/* nsb is whole 256s (the framework's depth blocks are), xs the same in
 * every sub-block of a 256: read from its first. */
static inline __attribute__((always_inline)) void qgemm_body_xs256(int64_t nsb, const uint8_t *a, const uint8_t *b,
								   float *c, int64_t ldc, int accumulate, const int sb,
								   const int has_min)
{
	__m512 acc[MR];

	zero_tile(acc);
	for (int64_t s0 = 0; s0 < nsb; s0 += XS_BLOCK / sb) {
		const f32_alias *xs = (const f32_alias *)(a + sb * MR);
		__m512 part[MR];

		zero_tile(part);
		for (int s = 0; s < XS_BLOCK / sb; s++, a += A_SB_BYTES(sb), b += B_SB_BYTES(sb, has_min)) {
			const __m512 scale = _mm512_loadu_ps((const float *)(b + NR * sb));
			__m512i dot[MR];

			sub_block_dots(a, b, sb, has_min, dot);
			for (int r = 0; r < MR; r++)
				part[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r]), scale, part[r]);
			if (has_min)
				add_min_term(a, b, sb, part);
		}
		for (int r = 0; r < MR; r++)
			acc[r] = _mm512_fmadd_ps(part[r], _mm512_set1_ps(xs[r]), acc[r]);
	}
	store_tile(acc, c, ldc, accumulate);
}

CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb32, qgemm_body, 32, 0)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb32_min, qgemm_body, 32, 1)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb16, qgemm_body, 16, 0)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb16_min, qgemm_body, 16, 1)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb32_xs256, qgemm_body_xs256, 32, 0)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb32_min_xs256, qgemm_body_xs256, 32, 1)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb16_xs256, qgemm_body_xs256, 16, 0)
CPU_QGEMM_UKERNEL(avx512vnni_qgemm_ukernel_sb16_min_xs256, qgemm_body_xs256, 16, 1)
