/* Float weights against f32 activations (matmul's vec_dtype F32): f16
 * widened with vcvtph2ps, bf16 by a 16-bit shift, both exact, then f32
 * FMAs; x is never rounded to a 16-bit type (SPEC/OPERATORS.md). At M = 1
 * these stream the weights from DRAM, AVX512_FLOAT_ROWS rows a call (x loaded
 * once for all, two accumulators per row hide the FMA latency, each row
 * prefetched ahead). At small M > 1 (f32 weights up to M = 32) the same
 * body takes AVX512_FLOAT_X_ROWS activation rows as well: a 4×4 register
 * block, a group's piece of K in L1 and x in L2.
 */
#include <immintrin.h>

#include "avx512_kernels.h"
#include "dot_rows.h"

/* Elements of x and w in one zmm. */
#define STEP 16

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

#define FOR_X(c) _Pragma("GCC unroll 8") for (int c = 0; c < xrows; c++)

/* `rows` weight rows (stride bytes apart) against `xrows` activation rows
 * (xs bytes apart), 16 elements a step, each weight and x vector loaded
 * once for the whole block; one x row: two accumulators per row, two
 * steps a loop. */
#define DEFINE_VEC_DOT(t, esz)                                                                  \
	static DOT_ALWAYS_INLINE void t##_tile(int64_t n, const void *w, int64_t stride, const void *x, \
					       int64_t xs, float *out, const int rows, const int xrows) \
	{                                                                                       \
		const int u = xrows == 1 ? 2 : 1;                                               \
		__m512 acc[AVX512_FLOAT_ROWS][AVX512_FLOAT_X_ROWS][2];                              \
		int64_t i = 0;                                                                  \
                                                                                                \
		FOR_ROWS(r)                                                                     \
			FOR_X(c)                                                                \
				acc[r][c][0] = acc[r][c][1] = _mm512_setzero_ps();              \
		for (; i + u * STEP <= n; i += u * STEP) {                                      \
			dot_prefetch_rows(w, stride, rows, n * (esz), i * (esz), u * STEP * (esz)); \
			for (int k = 0; k < u; k++) {                                           \
				__m512 xv[AVX512_FLOAT_X_ROWS];                                   \
                                                                                                \
				FOR_X(c)                                                        \
					xv[c] = load_f32(dot_row_at(x, xs, c), i + k * STEP);   \
				FOR_ROWS(r) {                                                   \
					const __m512 wv = load_##t(dot_row_at(w, stride, r), i + k * STEP); \
                                                                                                \
					FOR_X(c)                                                \
						acc[r][c][k] = _mm512_fmadd_ps(wv, xv[c], acc[r][c][k]); \
				}                                                               \
			}                                                                       \
		}                                                                               \
		for (; i < n; i += STEP) {                                                      \
			const __mmask16 m = n - i >= STEP ? 0xffff : (__mmask16)((1u << (n - i)) - 1); \
                                                                                                \
			FOR_ROWS(r) {                                                           \
				const __m512 wv = tail_##t(dot_row_at(w, stride, r), i, m);     \
                                                                                                \
				FOR_X(c)                                                        \
					acc[r][c][1] = _mm512_fmadd_ps(wv, tail_f32(dot_row_at(x, xs, c), i, m), \
								       acc[r][c][1]);           \
			}                                                                       \
		}                                                                               \
		FOR_X(c)                                                                        \
			FOR_ROWS(r)                                                             \
				out[c * rows + r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][c][0], acc[r][c][1])); \
	}                                                                                       \
	static DOT_ALWAYS_INLINE void t##_rows(int64_t n, const void *w, int64_t stride, const void *x, \
					       float *out, const int rows)                              \
	{                                                                                       \
		t##_tile(n, w, stride, x, 0, out, rows, 1);                                     \
	}                                                                                       \
	void avx512_vec_dot_tile_##t(int64_t n, const void *w, int64_t stride, const void *x, int64_t xs, \
				     float *out)                                                \
	{                                                                                       \
		t##_tile(n, w, stride, x, xs, out, AVX512_FLOAT_ROWS, AVX512_FLOAT_X_ROWS);         \
	}

#define AVX512_NAME(name) avx512_##name
DEFINE_VEC_DOT(f32, 4)
DEFINE_VEC_DOT(f16, 2)
DEFINE_VEC_DOT(bf16, 2)
DEFINE_DOT_ENTRIES(AVX512_NAME, f32, n * 4, AVX512_FLOAT_ROWS)
DEFINE_DOT_ENTRIES(AVX512_NAME, f16, n * 2, AVX512_FLOAT_ROWS)
DEFINE_DOT_ENTRIES(AVX512_NAME, bf16, n * 2, AVX512_FLOAT_ROWS)
