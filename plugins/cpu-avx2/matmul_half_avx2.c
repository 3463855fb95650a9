/* f32, f16 and bf16 weight rows dotted with f32 activation rows. The weights are
 * widened exactly (vcvtph2ps; bf16 is a 16-bit shift) and every product and
 * sum is f32: x is never rounded to 16 bits (SPEC/TOLERANCES.md, matmul).
 * Memory-bound at M = 1: AVX2_FLOAT_ROWS rows a call, two accumulators
 * each, keep the FMA chains off the critical path and x's loads shared; at
 * small M > 1 (f32 weights up to M = 32), AVX2_FLOAT_X_ROWS activation rows
 * a call as well.
 */
#include <immintrin.h>

#include "avx2_kernels.h"
#include "dot_rows.h"
#include "fp16.h"

static inline __m256 load_f32(const void *w, int64_t i)
{
	return _mm256_loadu_ps((const float *)w + i);
}

static inline __m256 load_f16(const void *w, int64_t i)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)w + i)));
}

static inline __m256 load_bf16(const void *w, int64_t i)
{
	const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)w + i));

	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline float hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline float f32_to_f32(float v)
{
	return v;
}

#define FOR_X(c) _Pragma("GCC unroll 8") for (int c = 0; c < xrows; c++)

/* `rows` weight rows (stride bytes apart) against `xrows` activation rows
 * (xs bytes apart), 8 elements a step, each weight and x vector loaded once
 * for the whole block; one x row: two accumulators per row, two steps a
 * loop. The last n % 8 elements in scalar f32. */
#define DEFINE_VEC_DOT_ROWS(t, wtype)                                                               \
	static DOT_ALWAYS_INLINE void t##_tile(int64_t n, const void *w, int64_t stride, const void *x,   \
					       int64_t xs, float *out, const int rows, const int xrows) \
	{                                                                                           \
		const int u = xrows == 1 ? 2 : 1;                                                   \
		__m256 acc[AVX2_FLOAT_ROWS][AVX2_FLOAT_X_ROWS][2];                                  \
		int64_t i = 0;                                                                      \
                                                                                                    \
		FOR_ROWS(r)                                                                         \
			FOR_X(c)                                                                    \
				acc[r][c][0] = acc[r][c][1] = _mm256_setzero_ps();                  \
		for (; i + 8 * u <= n; i += 8 * u) {                                                \
			dot_prefetch_rows(w, stride, rows, n * (int64_t)sizeof(wtype), i * (int64_t)sizeof(wtype), \
					  8 * u * sizeof(wtype));                                   \
			for (int k = 0; k < u; k++) {                                               \
				__m256 xv[AVX2_FLOAT_X_ROWS];                                       \
                                                                                                    \
				FOR_X(c)                                                            \
					xv[c] = load_f32(dot_row_at(x, xs, c), i + 8 * k);          \
				FOR_ROWS(r) {                                                       \
					const __m256 wv = load_##t(dot_row_at(w, stride, r), i + 8 * k); \
                                                                                                    \
					FOR_X(c)                                                    \
						acc[r][c][k] = _mm256_fmadd_ps(wv, xv[c], acc[r][c][k]); \
				}                                                                   \
			}                                                                           \
		}                                                                                   \
		for (; i + 8 <= n; i += 8)                                                          \
			FOR_ROWS(r) {                                                               \
				const __m256 wv = load_##t(dot_row_at(w, stride, r), i);            \
                                                                                                    \
				FOR_X(c)                                                            \
					acc[r][c][1] = _mm256_fmadd_ps(wv, load_f32(dot_row_at(x, xs, c), i), \
								       acc[r][c][1]);               \
			}                                                                           \
		FOR_X(c)                                                                            \
			FOR_ROWS(r) {                                                               \
				const wtype *wr = dot_row_at(w, stride, r);                         \
				const float *xr = dot_row_at(x, xs, c);                             \
				float tail = 0.0f;                                                  \
                                                                                                    \
				for (int64_t k = i; k < n; k++)                                     \
					tail += t##_to_f32(wr[k]) * xr[k];                          \
				out[c * rows + r] = hsum_ps(_mm256_add_ps(acc[r][c][0], acc[r][c][1])) + tail; \
			}                                                                           \
	}                                                                                           \
	static DOT_ALWAYS_INLINE void t##_rows(int64_t n, const void *w, int64_t stride, const void *x,   \
					       float *out, const int rows)                              \
	{                                                                                           \
		t##_tile(n, w, stride, x, 0, out, rows, 1);                                         \
	}                                                                                           \
	void avx2_vec_dot_tile_##t(int64_t n, const void *w, int64_t stride, const void *x, int64_t xs, \
				   float *out)                                                      \
	{                                                                                           \
		t##_tile(n, w, stride, x, xs, out, AVX2_FLOAT_ROWS, AVX2_FLOAT_X_ROWS);             \
	}

#define AVX2_NAME(name) avx2_##name
DEFINE_VEC_DOT_ROWS(f32, float)
DEFINE_VEC_DOT_ROWS(f16, uint16_t)
DEFINE_VEC_DOT_ROWS(bf16, uint16_t)
DEFINE_DOT_ENTRIES(AVX2_NAME, f32, n * 4, AVX2_FLOAT_ROWS)
DEFINE_DOT_ENTRIES(AVX2_NAME, f16, n * 2, AVX2_FLOAT_ROWS)
DEFINE_DOT_ENTRIES(AVX2_NAME, bf16, n * 2, AVX2_FLOAT_ROWS)
