/* Float weights against f32 activations (matmul's vec_dtype F32): f16
 * widened with vcvtph2ps, bf16 by a 16-bit shift, both exact, then f32
 * FMAs; x is never rounded to a 16-bit type (SPEC/OPERATORS.md). At M = 1
 * these stream the weights from DRAM: four independent accumulators hide
 * the FMA latency, and the next rows arrive through the hardware prefetcher
 * since the framework hands each thread a contiguous range of rows.
 */
#include <immintrin.h>

#include "avx512_kernels.h"

/* Elements of x and w loaded at a time by every row loop: 4 × 16. */
#define STEP 64

static inline __m512 load_f32(const void *w, int64_t i)
{
	return _mm512_loadu_ps((const float *)w + i);
}

static inline __m512 load_f16(const void *w, int64_t i)
{
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)w + i)));
}

static inline __m512 load_bf16(const void *w, int64_t i)
{
	const __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)w + i));

	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The tail (n % 16 elements) as one masked step: masked loads do not fault
 * past the row's end. */
static inline __m512 tail_f32(const void *w, int64_t i, __mmask16 m)
{
	return _mm512_maskz_loadu_ps(m, (const float *)w + i);
}

static inline __m512 tail_f16(const void *w, int64_t i, __mmask16 m)
{
	return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)w + i));
}

static inline __m512 tail_bf16(const void *w, int64_t i, __mmask16 m)
{
	const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)w + i);

	return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

#define DEFINE_VEC_DOT(t)                                                                       \
	float avx512_vec_dot_##t(int64_t n, const void *w, const void *xv)                      \
	{                                                                                       \
		const float *x = xv;                                                            \
		__m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                     \
		int64_t i = 0;                                                                  \
                                                                                                \
		for (; i + STEP <= n; i += STEP) {                                              \
			s0 = _mm512_fmadd_ps(load_##t(w, i), _mm512_loadu_ps(x + i), s0);       \
			s1 = _mm512_fmadd_ps(load_##t(w, i + 16), _mm512_loadu_ps(x + i + 16), s1); \
			s2 = _mm512_fmadd_ps(load_##t(w, i + 32), _mm512_loadu_ps(x + i + 32), s2); \
			s3 = _mm512_fmadd_ps(load_##t(w, i + 48), _mm512_loadu_ps(x + i + 48), s3); \
		}                                                                               \
		for (; i + 16 <= n; i += 16)                                                    \
			s0 = _mm512_fmadd_ps(load_##t(w, i), _mm512_loadu_ps(x + i), s0);       \
		if (i < n) {                                                                    \
			const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                   \
                                                                                                \
			s1 = _mm512_fmadd_ps(tail_##t(w, i, m), _mm512_maskz_loadu_ps(m, x + i), s1); \
		}                                                                               \
		return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))); \
	}

DEFINE_VEC_DOT(f32)
DEFINE_VEC_DOT(f16)
DEFINE_VEC_DOT(bf16)
