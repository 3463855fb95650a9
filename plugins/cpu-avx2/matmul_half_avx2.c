/* f16 and bf16 weight rows dotted with f32 activation rows. The weights are
 * widened exactly (vcvtph2ps; bf16 is a 16-bit shift) and every product and
 * sum is f32: x is never rounded to 16 bits (SPEC/TOLERANCES.md, matmul).
 * Memory-bound at M = 1: four accumulators of 8 lanes keep the FMA chain
 * off the critical path while 64 weight bytes per step stream in.
 */
#include <immintrin.h>

#include "avx2_kernels.h"
#include "fp16.h"

static inline __m256 load_f16(const uint16_t *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static inline __m256 load_bf16(const uint16_t *p)
{
	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

static inline float hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

#define DEFINE_VEC_DOT_HALF(t)                                                              \
	float avx2_vec_dot_##t(int64_t n, const void *vw, const void *vx)                   \
	{                                                                                   \
		const uint16_t *w = vw;                                                     \
		const float *x = vx;                                                        \
		__m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(),                 \
				  _mm256_setzero_ps(), _mm256_setzero_ps() };               \
		int64_t i = 0;                                                              \
		float tail = 0.0f;                                                          \
                                                                                            \
		for (; i + 32 <= n; i += 32)                                                \
			for (int u = 0; u < 4; u++)                                         \
				acc[u] = _mm256_fmadd_ps(load_##t(w + i + 8 * u),           \
							 _mm256_loadu_ps(x + i + 8 * u), acc[u]); \
		for (; i + 8 <= n; i += 8)                                                  \
			acc[0] = _mm256_fmadd_ps(load_##t(w + i), _mm256_loadu_ps(x + i), acc[0]); \
		for (; i < n; i++)                                                          \
			tail += t##_to_f32(w[i]) * x[i];                                    \
		return hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),                 \
					     _mm256_add_ps(acc[2], acc[3]))) + tail;        \
	}

DEFINE_VEC_DOT_HALF(f16)
DEFINE_VEC_DOT_HALF(bf16)
