/* The q4_0x8 group kernel of prepared q4_0 weights (plugins/cpu/prepared.h)
 * for the x86 plugins, on 256-bit vectors: cpu-avx2 (vpmaddubsw, or
 * AVX-VNNI's vpdpbusd) and cpu-avx512 (AVX512-VNNI's vpdpbusd on ymm, or
 * vpmaddubsw), the instruction picked by the including build's flags.
 *
 * Per block of the 8 rows: 4 loads of 8 rows × 4 bytes, each split into
 * low and high nibbles (elements 4c.. and 16 + 4c.. of every row, u ≤ 15)
 * once for all the call's activation rows, each multiplied with an
 * activation's 4 matching bytes broadcast to all lanes. vpmaddubsw's i16
 * pairs are summed over the 8 products before one vpmaddwd
 * (8 · 2 · 15 · 127 < 2^15), so lane r ends with row r's Σ u·x; − 8·Σ x
 * (the offset of every quant, xsum) and the 8 scales (one vcvtph2ps)
 * finish the block for all rows at once.
 */
#ifndef GLLMK_X86_Q4_0X8_X86_H
#define GLLMK_X86_Q4_0X8_X86_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "prepared.h"
#include "quant_blocks.h"

#if defined(__AVXVNNI__) && !defined(__AVX512VNNI__)
#define Q4_0X8_DPBUSD(acc, u, s) _mm256_dpbusd_avx_epi32(acc, u, s)
#elif defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define Q4_0X8_DPBUSD(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)
#endif

/* Bytes 4c..4c+3 of an activation block's quants, in every i32 lane. */
static inline __m256i q4_0x8_x4(const int8_t *qs, int c)
{
	int32_t v;

	memcpy(&v, qs + 4 * c, 4);
	return _mm256_set1_epi32(v);
}

/* The 8 rows' quants of one block: low and high nibbles of each chunk. */
struct q4_0x8_u {
	__m256i lo[4], hi[4];
};

static inline struct q4_0x8_u q4_0x8_nibbles(const struct cpu_q4_0x8 *u)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f);
	struct q4_0x8_u n;

	for (int c = 0; c < 4; c++) {
		const __m256i w = _mm256_loadu_si256((const __m256i *)u->qs[c]);

		n.lo[c] = _mm256_and_si256(w, m4);
		n.hi[c] = _mm256_and_si256(_mm256_srli_epi16(w, 4), m4);
	}
	return n;
}

/* Row r's Σ u·x of one block against one activation block, in lane r. */
static inline __m256i q4_0x8_block_sums(const struct q4_0x8_u *n, const int8_t *xq)
{
#ifdef Q4_0X8_DPBUSD
	__m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();

	for (int c = 0; c < 4; c++) {
		s0 = Q4_0X8_DPBUSD(s0, n->lo[c], q4_0x8_x4(xq, c));
		s1 = Q4_0X8_DPBUSD(s1, n->hi[c], q4_0x8_x4(xq + 16, c));
	}
	return _mm256_add_epi32(s0, s1);
#else
	__m256i s = _mm256_setzero_si256();

	for (int c = 0; c < 4; c++) {
		s = _mm256_add_epi16(s, _mm256_maddubs_epi16(n->lo[c], q4_0x8_x4(xq, c)));
		s = _mm256_add_epi16(s, _mm256_maddubs_epi16(n->hi[c], q4_0x8_x4(xq + 16, c)));
	}
	return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
#endif
}

/* Bytes ahead of the block being read that the kernel prefetches: a
 * thread's groups are one run of memory (cpu_pool_run_streaming). */
#define Q4_0X8_PREFETCH_AHEAD 4096

/* cpu_dot_q4_0x8_fn's body for xrows activation rows (a constant where
 * inlined): each block's nibbles decoded once, then every row's sums. */
static inline __attribute__((always_inline)) void q4_0x8_dot_body(int64_t n, const void *w, const void *xq,
								  const int32_t *xsum, float *out, const int xrows)
{
	const struct cpu_q4_0x8 *u = w;
	const struct block_q8_0 *x = xq;
	const int64_t nb = n / QK4_0;
	__m256 acc[CPU_Q4_0X8_X_ROWS];

	for (int t = 0; t < xrows; t++)
		acc[t] = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const char *ahead = (const char *)&u[b] + Q4_0X8_PREFETCH_AHEAD;
		const struct q4_0x8_u nib = q4_0x8_nibbles(&u[b]);
		const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)u[b].d));

		_mm_prefetch(ahead, _MM_HINT_T0);
		_mm_prefetch(ahead + 64, _MM_HINT_T0);
		_mm_prefetch(ahead + 128, _MM_HINT_T0);
		for (int t = 0; t < xrows; t++) {
			const struct block_q8_0 *xb = &x[t * nb + b];
			const __m256i sum = _mm256_sub_epi32(q4_0x8_block_sums(&nib, xb->qs),
							     _mm256_set1_epi32(8 * xsum[t * nb + b]));

			acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(xb->d))),
						 acc[t]);
		}
	}
	for (int t = 0; t < xrows; t++)
		_mm256_storeu_ps(out + 8 * t, acc[t]);
}

#endif
