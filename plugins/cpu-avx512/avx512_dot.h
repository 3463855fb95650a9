/* The integer-dot vocabulary of cpu-avx512's block-format dots, shared by
 * the files that define them (matmul_quant_avx512.c: q8_0, q4_0;
 * matmul_kquant_avx512.c: q2_K .. q6_K; one file per format family).
 * Every such file is built twice (meson.build): with -mavx512vnni the
 * u8×s8 dot is vpdpbusd and the kernels are avx512vnni_*; without,
 * vpmaddubsw + vpmaddwd and avx512_*: DOT_NAME(vnni name, name) picks
 * this build's name where a kernel is defined.
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
#include "dot_kernel.h"

#ifdef __AVX512VNNI__
#define DOT_NAME(vnni_name, name) vnni_name
/* acc + Σ u·s over each group of 4 bytes, u unsigned, s signed */
static inline __m512i dot_u8s8_acc(__m512i acc, __m512i u, __m512i s)
{
	return _mm512_dpbusd_epi32(acc, u, s);
}
#else
#define DOT_NAME(vnni_name, name) name
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
static inline __m512 pair_scalar_scale(const struct block_q8_0 *x, float wd0, float wd1, int both)
{
	const float sa = wd0 * f16_scalar(x[0].d);
	const float sb = both ? wd1 * f16_scalar(x[1].d) : 0.0f;

	return _mm512_insertf32x8(_mm512_set1_ps(sa), _mm256_set1_ps(sb), 1);
}

/* One pair (blocks i + 2p, i + 2p + 1) of a run of 8 in every row, against
 * the activation pair xpv, scaled by s[r] (the run's 8 combined scales):
 * a piece of the DEFINE_DOT_32 bodies (wv, stride, rows, acc theirs). */
#define DOT_32_PAIR_ROWS(wt, wblock, xpv, i, p, s)                                                  \
	FOR_ROWS(r) {                                                                               \
		const struct wblock *w = dot_row_at(wv, stride, r);                                     \
		const __m512i d = row_pair_##wt(w + (i) + 2 * (p), xpv, 1);                         \
                                                                                                    \
		acc[r][(p) & 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), pair_scale(s[r], p), acc[r][(p) & 1]); \
	}

/* Bytes ahead that DEFINE_DOT_32 prefetches in each row (across groups of
 * rows when rows are short). */
#ifndef DOT_32_PREFETCH_AHEAD
#define DOT_32_PREFETCH_AHEAD 4096
#endif

/* A block's scale (f32) and those of 8 consecutive blocks (__m256), of
 * the formats whose scale is the f16 d at byte 0. */
#define DOT_32_F16_SCALE(b) f16_scalar((b)->d)
#define DOT_32_F16_SCALES8(b) scales8((b), sizeof(*(b)))

/* Blocks i..nb − 1 of every row pair by pair, with scalar scales
 * (scale(block)), into acc[r][0]: the end of a DEFINE_DOT_32 body (x, nb,
 * i, wv, stride, rows, acc theirs). */
#define DOT_32_TAIL_ROWS(wt, wblock, scale)                                                         \
	for (; i < nb; i += 2) {                                                                    \
		const int both = i + 1 < nb;                                                        \
		const struct x_pair xp = x_pair_##wt(x + i, both);                                  \
                                                                                                    \
		FOR_ROWS(r) {                                                                       \
			const struct wblock *w = dot_row_at(wv, stride, r);                             \
			const __m512 sc = pair_scalar_scale(x + i, scale(&w[i]), both ? scale(&w[i + 1]) : 0, both); \
                                                                                                    \
			acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(row_pair_##wt(w + i, xp, both)), sc, \
						    acc[r][0]);                                         \
		}                                                                                   \
	}

/* The rows in runs of 8 blocks, whose 16 scales per row come in two
 * vector gathers (wscales8(first block) the weights', __m256); the last
 * < 8 blocks pair by pair with scalar scales (wscale(block)). Two
 * accumulators per row (even and odd pairs). DEFINE_DOT_32: the formats
 * with an f16 d at byte 0. */
#define DEFINE_DOT_32(body, wt, wblock) DEFINE_DOT_32_SCALED(body, wt, wblock, DOT_32_F16_SCALES8, DOT_32_F16_SCALE)
#define DEFINE_DOT_32_SCALED(body, wt, wblock, wscales8, wscale)                                    \
	static DOT_ALWAYS_INLINE void body(int64_t n, const void *wv, int64_t stride, const void *xv,       \
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
			dot_prefetch_rows_far(wv, stride, rows, nb * (int64_t)sizeof(struct wblock),    \
					      i * (int64_t)sizeof(struct wblock), 8 * sizeof(struct wblock), \
					      DOT_32_PREFETCH_AHEAD);                               \
			FOR_ROWS(r)                                                                 \
				s[r] = _mm256_mul_ps(wscales8((const struct wblock *)dot_row_at(wv, stride, r) + i), xs); \
			for (int p = 0; p < 4; p++) {                                               \
				const struct x_pair xp = x_pair_##wt(x + i + 2 * p, 1);             \
                                                                                                    \
				DOT_32_PAIR_ROWS(wt, wblock, xp, i, p, s)                           \
			}                                                                           \
		}                                                                                   \
		DOT_32_TAIL_ROWS(wt, wblock, wscale)                                                \
		FOR_ROWS(r)                                                                         \
			out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));         \
	}

/* Words 0 and 1 (the f16 d and, for q4_1/q5_1, m) of 8 consecutive blocks
 * of `stride` bytes, 18 ≤ stride ≤ 24, where scales8 reaches too far or
 * misses (7·stride/2 ≥ 64): lanes 0..7 word 0 of blocks 0..7, lanes 8..15
 * word 1. Reads exactly the 8 blocks: bytes 0..127 and the last 128. */
#define W16_OFF(st, k) (((k) & 7) * (st) + 2 * ((k) >> 3))
#define W16_LO(st, k) (W16_OFF(st, k) < 128 ? W16_OFF(st, k) / 2 : 0)
#define W16_HI(st, k) (W16_OFF(st, k) < 128 ? 0 : (W16_OFF(st, k) - (8 * (st) - 128)) / 2)
#define W16_IDX(f, st)                                                                              \
	_mm256_setr_epi16(f(st, 0), f(st, 1), f(st, 2), f(st, 3), f(st, 4), f(st, 5), f(st, 6), f(st, 7), \
			  f(st, 8), f(st, 9), f(st, 10), f(st, 11), f(st, 12), f(st, 13), f(st, 14), f(st, 15))
#define W16_TAIL(st, k) ((W16_OFF(st, k) >= 128) << (k))
#define W16_TAIL_MASK(st)                                                                           \
	(W16_TAIL(st, 0) | W16_TAIL(st, 1) | W16_TAIL(st, 2) | W16_TAIL(st, 3) | W16_TAIL(st, 4) |    \
	 W16_TAIL(st, 5) | W16_TAIL(st, 6) | W16_TAIL(st, 7) | W16_TAIL(st, 8) | W16_TAIL(st, 9) |    \
	 W16_TAIL(st, 10) | W16_TAIL(st, 11) | W16_TAIL(st, 12) | W16_TAIL(st, 13) | W16_TAIL(st, 14) | \
	 W16_TAIL(st, 15))

static DOT_ALWAYS_INLINE __m512 scales_mins8(const void *p, const int stride)
{
	const char *b = p, *t = b + 8 * stride - 128;
	const __m512i lo = _mm512_permutex2var_epi16(_mm512_loadu_si512(b), _mm512_castsi256_si512(W16_IDX(W16_LO, stride)),
						     _mm512_loadu_si512(b + 64));
	const __m512i hi = _mm512_permutex2var_epi16(_mm512_loadu_si512(t), _mm512_castsi256_si512(W16_IDX(W16_HI, stride)),
						     _mm512_loadu_si512(t + 64));

	return _mm512_cvtph_ps(_mm256_mask_blend_epi16((__mmask16)W16_TAIL_MASK(stride), _mm512_castsi512_si256(lo),
						       _mm512_castsi512_si256(hi)));
}

/* Σ x of each of 8 q8_0 blocks from the 4-byte sums of 4 pairs (v[p]:
 * lanes 0..7 block 2p, 8..15 block 2p + 1), in block order. */
static inline __m256i block_sums8(const __m512i v[4])
{
	const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
	const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
	/* 128-bit lane l: the sums of lane l of v[0], v[1], v[2], v[3] */
	const __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
	/* lane 0: blocks 0, 2, 4, 6; lane 2: blocks 1, 3, 5, 7 */
	const __m512i u = _mm512_add_epi32(t, _mm512_shuffle_i32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));

	return _mm512_castsi512_si256(
		_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 0, 0, 0, 0, 0, 0, 0, 0), u));
}

/* DEFINE_DOT_32 for the formats of 20-24 bytes a block (q4_1, q5_0, q5_1:
 * scales by scales_mins8) and, with with_min, a min m per block (word 1,
 * the format's min_<t>(block) as f16 bits): Σ (d·q + m)·dx·xq adds
 * m·dx·Σ xq, Σ xq per activation block computed once for all rows. */
#define DEFINE_DOT_32_MIN(body, wt, wblock, with_min)                                               \
	static DOT_ALWAYS_INLINE void body(int64_t n, const void *wv, int64_t stride, const void *xv,       \
					    float *out, const int rows)                                 \
	{                                                                                           \
		const struct block_q8_0 *x = xv;                                                    \
		const int64_t nb = n / QK8_0;                                                       \
		const __m512i ones = _mm512_set1_epi8(1);                                           \
		__m512 acc[DOT_ROWS][2], macc[DOT_ROWS];                                            \
		int64_t i = 0;                                                                      \
                                                                                                    \
		FOR_ROWS(r)                                                                         \
			acc[r][0] = acc[r][1] = macc[r] = _mm512_setzero_ps();                      \
		for (; i + 8 <= nb; i += 8) {                                                       \
			const __m256 xs = scales8(x + i, sizeof(*x));                               \
			struct x_pair xp[4];                                                        \
			__m512 xm = _mm512_setzero_ps(); /* lanes 8..15: dx·Σ xq per block */      \
			__m256 s[DOT_ROWS];                                                         \
                                                                                                    \
			for (int p = 0; p < 4; p++)                                                 \
				xp[p] = x_pair_##wt(x + i + 2 * p, 1);                              \
			if (with_min) {                                                             \
				__m512i v[4];                                                       \
                                                                                                    \
				for (int p = 0; p < 4; p++)                                         \
					v[p] = dot_u8s8(ones, xp[p].q);                             \
				xm = _mm512_insertf32x8(xm, _mm256_mul_ps(_mm256_cvtepi32_ps(block_sums8(v)), xs), 1); \
			}                                                                           \
			dot_prefetch_rows_far(wv, stride, rows, nb * (int64_t)sizeof(struct wblock),    \
					      i * (int64_t)sizeof(struct wblock), 8 * sizeof(struct wblock), \
					      DOT_32_PREFETCH_AHEAD);                               \
			FOR_ROWS(r) {                                                               \
				const __m512 dm = scales_mins8((const struct wblock *)dot_row_at(wv, stride, r) + i, \
							       sizeof(struct wblock));              \
                                                                                                    \
				s[r] = _mm256_mul_ps(_mm512_castps512_ps256(dm), xs);               \
				if (with_min)                                                       \
					macc[r] = _mm512_fmadd_ps(dm, xm, macc[r]);                 \
			}                                                                           \
			for (int p = 0; p < 4; p++) {                                               \
				DOT_32_PAIR_ROWS(wt, wblock, xp[p], i, p, s)                        \
			}                                                                           \
		}                                                                                   \
		for (; i < nb; i += 2) {                                                            \
			const int both = i + 1 < nb;                                                \
			const struct x_pair xp = x_pair_##wt(x + i, both);                          \
			const __m512 xsum = with_min ? _mm512_cvtepi32_ps(dot_u8s8(ones, xp.q)) : _mm512_setzero_ps(); \
                                                                                                    \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = dot_row_at(wv, stride, r);                     \
				const __m512 sc = pair_scalar_scale(x + i, f16_scalar(w[i].d),              \
								    both ? f16_scalar(w[i + 1].d) : 0, both); \
                                                                                                    \
				acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(row_pair_##wt(w + i, xp, both)), \
							    sc, acc[r][0]);                         \
				if (with_min)                                                       \
					macc[r] = _mm512_fmadd_ps(xsum,                             \
						pair_scalar_scale(x + i, f16_scalar(min_##wt(&w[i])),       \
								  both ? f16_scalar(min_##wt(&w[i + 1])) : 0, both), \
						macc[r]);                                           \
			}                                                                           \
		}                                                                                   \
		FOR_ROWS(r)                                                                         \
			out[r] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]), macc[r])); \
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
