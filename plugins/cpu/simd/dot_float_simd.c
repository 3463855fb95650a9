/* f32, f16 and bf16 weight rows dotted with f32 activation rows, written
 * once against simd.h's vf_* and compiled once per ISA (AVX2, AVX-512,
 * NEON; SIMD_NAME picks the name). The weights are widened exactly (vcvtph2ps or
 * fcvtl for f16, a 16-bit shift for bf16) and every product and sum is
 * f32: x is never rounded to 16 bits (SPEC/OPERATORS.md, matmul).
 *
 * Memory-bound at M = 1: DOT_FLOAT_ROWS weight rows a call, each
 * prefetched ahead, x's loads shared by them and two accumulators per row
 * to keep the FMA chains off the critical path. At small M > 1 (f32
 * weights up to M = 32) the same body takes DOT_FLOAT_X_ROWS activation
 * rows as well: a register block whose piece of K stays in L1.
 */
#include "simd.h"
#include "dot_float_simd.h"
#include "dot_kernel.h"

#if VEC_WIDTH == 16
#define X_ROWS DOT_FLOAT_X_ROWS_avx512
#elif defined(__aarch64__)
#define X_ROWS DOT_FLOAT_X_ROWS_neon
#else
#define X_ROWS DOT_FLOAT_X_ROWS_avx2
#endif

/* Full vectors of element i on, and the first n (< VEC_WIDTH) elements
 * of the row's tail, which are never read past. */
static DOT_ALWAYS_INLINE vf load_f32(const void *p, int64_t i)
{
	return vf_load((const float *)p + i);
}

static DOT_ALWAYS_INLINE vf load_f16(const void *p, int64_t i)
{
	return vf_load_f16((const uint16_t *)p + i);
}

static DOT_ALWAYS_INLINE vf load_bf16(const void *p, int64_t i)
{
	return vf_load_bf16((const uint16_t *)p + i);
}

static DOT_ALWAYS_INLINE vf tail_f32(const void *p, int64_t i, int64_t n)
{
	return vf_load_n((const float *)p + i, n);
}

static DOT_ALWAYS_INLINE vf tail_f16(const void *p, int64_t i, int64_t n)
{
	return vf_load_f16_n((const uint16_t *)p + i, n);
}

static DOT_ALWAYS_INLINE vf tail_bf16(const void *p, int64_t i, int64_t n)
{
	return vf_load_bf16_n((const uint16_t *)p + i, n);
}

/* Bytes ahead that each row prefetches (across groups of rows when rows
 * are short). */
#ifndef DOT_FLOAT_PREFETCH_AHEAD
#define DOT_FLOAT_PREFETCH_AHEAD 4096
#endif

#define FOR_X(c) _Pragma("GCC unroll 8") for (int c = 0; c < xrows; c++)

/* `rows` weight rows (stride bytes apart) against `xrows` activation rows
 * (xs bytes apart), VEC_WIDTH elements a step, each weight and x vector
 * loaded once for the whole block; one x row: two accumulators per row,
 * two steps a loop. The row's last n % VEC_WIDTH elements as one partial
 * step (zeros in the other lanes): `tile`, over it `rows` (one x row), and
 * the kernels vec_dot `dot`, vec_dot_rows `dot_rows` and vec_dot_tile
 * `dot_tile` of weight format t (esz bytes an element). */
#define DEFINE_FLOAT_DOT(tile, rows_body, t, esz, dot, dot_rows, dot_tile)                          \
	static DOT_ALWAYS_INLINE void tile(int64_t n, const void *w, int64_t stride, const void *x,   \
					       int64_t xs, float *out, const int rows, const int xrows) \
	{                                                                                           \
		const int u = xrows == 1 ? 2 : 1;                                                   \
		vf acc[DOT_FLOAT_ROWS][X_ROWS][2];                                                  \
		int64_t i = 0;                                                                      \
                                                                                                    \
		FOR_ROWS(r)                                                                         \
			FOR_X(c)                                                                    \
				acc[r][c][0] = acc[r][c][1] = vf_zero();                            \
		for (; i + u * VEC_WIDTH <= n; i += u * VEC_WIDTH) {                                \
			/* a tile's rows are in L1 after the first activation tile */               \
			if (xrows == 1)                                                             \
				dot_prefetch_rows_far(w, stride, rows, n * (esz), i * (esz), u * VEC_WIDTH * (esz), \
						      DOT_FLOAT_PREFETCH_AHEAD);                        \
			for (int k = 0; k < u; k++) {                                               \
				vf xv[X_ROWS];                                                      \
                                                                                                    \
				FOR_X(c)                                                            \
					xv[c] = load_f32(dot_row_at(x, xs, c), i + k * VEC_WIDTH);  \
				FOR_ROWS(r) {                                                       \
					const vf wv = load_##t(dot_row_at(w, stride, r), i + k * VEC_WIDTH); \
                                                                                                    \
					FOR_X(c)                                                    \
						acc[r][c][k] = vf_fma(wv, xv[c], acc[r][c][k]);     \
				}                                                                   \
			}                                                                           \
		}                                                                                   \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                                          \
			FOR_ROWS(r) {                                                               \
				const vf wv = load_##t(dot_row_at(w, stride, r), i);                \
                                                                                                    \
				FOR_X(c)                                                            \
					acc[r][c][1] = vf_fma(wv, load_f32(dot_row_at(x, xs, c), i), acc[r][c][1]); \
			}                                                                           \
		if (i < n)                                                                          \
			FOR_ROWS(r) {                                                               \
				const vf wv = tail_##t(dot_row_at(w, stride, r), i, n - i);         \
                                                                                                    \
				FOR_X(c)                                                            \
					acc[r][c][1] = vf_fma(wv, tail_f32(dot_row_at(x, xs, c), i, n - i), \
							      acc[r][c][1]);                        \
			}                                                                           \
		FOR_X(c)                                                                            \
			FOR_ROWS(r)                                                                 \
				out[c * rows + r] = vf_hsum(vf_add(acc[r][c][0], acc[r][c][1]));    \
	}                                                                                           \
	static DOT_ALWAYS_INLINE void rows_body(int64_t n, const void *w, int64_t stride, const void *x,   \
						float *out, const int rows)                             \
	{                                                                                           \
		tile(n, w, stride, x, 0, out, rows, 1);                                             \
	}                                                                                           \
	void dot_tile(int64_t n, const void *w, int64_t stride, const void *x, int64_t xs, float *out)  \
	{                                                                                           \
		tile(n, w, stride, x, xs, out, DOT_FLOAT_ROWS, X_ROWS);                             \
	}                                                                                           \
	DEFINE_DOT_ENTRIES(dot, dot_rows, rows_body, n * (esz), DOT_FLOAT_ROWS)

DEFINE_FLOAT_DOT(f32_tile, f32_rows, f32, 4,
		 SIMD_NAME(avx2_vec_dot_f32, avx512_vec_dot_f32, neon_vec_dot_f32),
		 SIMD_NAME(avx2_vec_dot_rows_f32, avx512_vec_dot_rows_f32, neon_vec_dot_rows_f32),
		 SIMD_NAME(avx2_vec_dot_tile_f32, avx512_vec_dot_tile_f32, neon_vec_dot_tile_f32))
DEFINE_FLOAT_DOT(f16_tile, f16_rows, f16, 2,
		 SIMD_NAME(avx2_vec_dot_f16, avx512_vec_dot_f16, neon_vec_dot_f16),
		 SIMD_NAME(avx2_vec_dot_rows_f16, avx512_vec_dot_rows_f16, neon_vec_dot_rows_f16),
		 SIMD_NAME(avx2_vec_dot_tile_f16, avx512_vec_dot_tile_f16, neon_vec_dot_tile_f16))
DEFINE_FLOAT_DOT(bf16_tile, bf16_rows, bf16, 2,
		 SIMD_NAME(avx2_vec_dot_bf16, avx512_vec_dot_bf16, neon_vec_dot_bf16),
		 SIMD_NAME(avx2_vec_dot_rows_bf16, avx512_vec_dot_rows_bf16, neon_vec_dot_rows_bf16),
		 SIMD_NAME(avx2_vec_dot_tile_bf16, avx512_vec_dot_tile_bf16, neon_vec_dot_tile_bf16))
