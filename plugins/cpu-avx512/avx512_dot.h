/* The integer-dot vocabulary of cpu-avx512's block-format dots, shared by
 * the files that define them (matmul_quant_avx512.c: q8_0, q4_0, q4_K, q6_K;
 * one file per further format family). Every such file is built twice
 * (meson.build): with -mavx512vnni the u8×s8 dot is vpdpbusd and ISA(name)
 * is avx512vnni_name; without, vpmaddubsw + vpmaddwd and avx512_name.
 *
 * DEFINE_DOT_32 is the multi-row body of a 32-element format paired with
 * q8_0 activations: a format gives x_pair_<t> (what every row meets of a
 * pair of activation blocks) and row_pair_<t> (one row's integer dot of a
 * pair), and the macro does the rest.
 */
#ifndef GLLMK_AVX512_DOT_H
#define GLLMK_AVX512_DOT_H

#include "avx512_blocks.h"
#include "avx512_kernels.h"
#include "dot_rows.h"

#ifdef __AVX512VNNI__
#define ISA(name) avx512vnni_##name
/* acc + Σ u·s over each group of 4 bytes, u unsigned, s signed */
static inline __m512i dot_u8s8_acc(__m512i acc, __m512i u, __m512i s)
{
	return _mm512_dpbusd_epi32(acc, u, s);
}
#else
#define ISA(name) avx512_##name
static inline __m512i dot_u8s8_acc(__m512i acc, __m512i u, __m512i s)
{
	return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
}
#endif

static inline __m512i dot_u8s8(__m512i u, __m512i s)
{
	return dot_u8s8_acc(_mm512_setzero_si512(), u, s);
}

#define DOT_ROWS AVX512_DOT_ROWS

/* Two 32-byte halves, the second possibly absent (an odd block count). */
static inline __m512i load_pair(const int8_t *a, const int8_t *b)
{
	const __m256i hi = b ? _mm256_loadu_si256((const __m256i *)b) : _mm256_setzero_si256();

	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)), hi, 1);
}

/* -------------------------------------------------- 32-element blocks */

/* The f16 scales of 8 consecutive blocks of `stride` bytes (even, the
 * scale at byte 0 of each): words 0, s, .., 7s (s = stride / 2) picked out
 * by word permutes, then widened. Reads no byte past the 8 blocks: 128
 * bytes when 7s < 64 (q4_0), else 256 (q8_0: 272 bytes of blocks). */
static inline __m256 scales8(const void *p, int stride)
{
	const int s = stride / 2;
	const char *b = p;
	const __m512i z0 = _mm512_loadu_si512(b), z1 = _mm512_loadu_si512(b + 64);
	__m128i h;

	if (7 * s < 64) {
		const __m128i idx = _mm_setr_epi16(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s);

		h = _mm512_castsi512_si128(_mm512_permutex2var_epi16(z0, _mm512_castsi128_si512(idx), z1));
	} else {
		/* words 4s.. sit in the 128 bytes at 128, as 4s − 64.. */
		const __m128i idx = _mm_setr_epi16(0, s, 2 * s, 3 * s, 4 * s - 64, 5 * s - 64, 6 * s - 64, 7 * s - 64);
		const __m512i z2 = _mm512_loadu_si512(b + 128), z3 = _mm512_loadu_si512(b + 192);
		const __m512i lo = _mm512_permutex2var_epi16(z0, _mm512_castsi128_si512(idx), z1);
		const __m512i hi = _mm512_permutex2var_epi16(z2, _mm512_castsi128_si512(idx), z3);

		h = _mm_mask_blend_epi16(0xf0, _mm512_castsi512_si128(lo), _mm512_castsi512_si128(hi));
	}
	return _mm256_cvtph_ps(h);
}

/* Lanes 0..7 s[2p], 8..15 s[2p+1]: the scales of pair p of 8 blocks. */
static inline __m512 pair_scale(__m256 s, int p)
{
	const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);

	return _mm512_permutexvar_ps(_mm512_add_epi32(idx, _mm512_set1_epi32(2 * p)), _mm512_castps256_ps512(s));
}

/* A pair of activation blocks as every row meets it: its bytes and the
 * integer sum each row's dot starts from (q4_0: −Σ 8·x per 4 bytes, the
 * − 8 of every weight quant, computed once for all rows). */
struct x_pair {
	__m512i q, start;
};

/* The scales of one pair (or a last single block) at the row's end. */
static inline __m512 pair_scalar_scale(const struct block_q8_0 *x, uint16_t wd0, uint16_t wd1, int both)
{
	const float sa = f16_scalar(wd0) * f16_scalar(x[0].d);
	const float sb = both ? f16_scalar(wd1) * f16_scalar(x[1].d) : 0.0f;

	return _mm512_insertf32x8(_mm512_set1_ps(sa), _mm256_set1_ps(sb), 1);
}

/* The rows in runs of 8 blocks, whose 16 scales per row come in two
 * vector gathers; the last < 8 blocks pair by pair with scalar scales.
 * Two accumulators per row (even and odd pairs). */
#define DEFINE_DOT_32(wt, wblock)                                                                   \
	static DOT_ALWAYS_INLINE void wt##_rows(int64_t n, const void *wv, int64_t stride, const void *xv,  \
					    float *out, const int rows)                                 \
	{                                                                                           \
		const struct block_q8_0 *x = xv;                                                    \
		const int64_t nb = n / QK8_0;                                                       \
		__m512 acc[DOT_ROWS][2];                                                            \
		int64_t i = 0;                                                                      \
                                                                                                    \
		FOR_ROWS(r)                                                                         \
			acc[r][0] = acc[r][1] = _mm512_setzero_ps();                                \
		for (; i + 8 <= nb; i += 8) {                                                       \
			const __m256 xs = scales8(x + i, sizeof(*x));                               \
			__m256 s[DOT_ROWS];                                                         \
                                                                                                    \
			dot_prefetch_rows(wv, stride, rows, nb * (int64_t)sizeof(struct wblock),        \
				      i * (int64_t)sizeof(struct wblock), 8 * sizeof(struct wblock)); \
			FOR_ROWS(r)                                                                 \
				s[r] = _mm256_mul_ps(scales8((const struct wblock *)dot_row_at(wv, stride, r) + i, \
							     sizeof(struct wblock)), xs);           \
			for (int p = 0; p < 4; p++) {                                               \
				const struct x_pair xp = x_pair_##wt(x + i + 2 * p, 1);             \
                                                                                                    \
				FOR_ROWS(r) {                                                       \
					const struct wblock *w = dot_row_at(wv, stride, r);             \
					const __m512i d = row_pair_##wt(w + i + 2 * p, xp, 1);      \
                                                                                                    \
					acc[r][p & 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), pair_scale(s[r], p), \
									acc[r][p & 1]);             \
				}                                                                   \
			}                                                                           \
		}                                                                                   \
		for (; i < nb; i += 2) {                                                            \
			const int both = i + 1 < nb;                                                \
			const struct x_pair xp = x_pair_##wt(x + i, both);                          \
                                                                                                    \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = dot_row_at(wv, stride, r);                     \
				const __m512 sc = pair_scalar_scale(x + i, w[i].d, both ? w[i + 1].d : 0, both); \
                                                                                                    \
				acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(row_pair_##wt(w + i, xp, both)), \
							    sc, acc[r][0]);                         \
			}                                                                           \
		}                                                                                   \
		FOR_ROWS(r)                                                                         \
			out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));         \
	}

/* ----------------------------------------------------------- K-quants */

static inline float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* Lane l of the result: s[base + l / per], the scale of the group that
 * i32 lane l of a 64-byte dot belongs to. */
static inline __m512 spread_scales(__m512 s, int base, int per)
{
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(base),
					     _mm512_srlv_epi32(lane, _mm512_set1_epi32(__builtin_ctz(per))));

	return _mm512_permutexvar_ps(idx, s);
}

/* The 256 bytes of a q8_K block, shared by every row. */
static DOT_ALWAYS_INLINE void load_q8_K(const struct block_q8_K *x, __m512i q[4])
{
	for (int j = 0; j < 4; j++)
		q[j] = _mm512_loadu_si512(x->qs + 64 * j);
}

#endif
