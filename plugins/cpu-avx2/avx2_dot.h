/* The integer-dot vocabulary of cpu-avx2's block-format dots, shared by
 * the files that define them (matmul_quant_avx2.c: q8_0, q4_0;
 * matmul_legacy_avx2.c: q4_1, q5_0, q5_1, iq4_nl, iq4_xs;
 * matmul_kquant_avx2.c: q2_K .. q6_K), as avx512_dot.h is cpu-avx512's.
 *
 * The files of 32-element formats are built twice (meson.build): with
 * -mavxvnni -DAVX2_VNNI the u8×s8 dot is vpdpbusd and the kernels are
 * avx2vnni_*; without, vpmaddubsw + vpmaddwd and avx2_*: DOT_NAME(vnni
 * name, name) picks this build's name where a kernel is defined. The
 * K-quants (and iq4_xs) use vpmaddubsw in both: their sub-block scale
 * rides on the vpmaddwd that follows it for free, which vpdpbusd would
 * pay for with a vpmulld; matmul_kquant_avx2.c is built once.
 *
 * vpmaddubsw saturates its i16 pair sums: every use keeps the unsigned
 * operand u small enough that 2·u·127 < 2^15 (u ≤ 127).
 *
 * DEFINE_DOT_32 is the multi-row body of a 32-element format against
 * q8_0 activations: a format gives x_block_<t> (what every row meets of an
 * activation block) and row_block_<t> (one row's dot of a block, f32).
 */
#ifndef GLLMK_AVX2_DOT_H
#define GLLMK_AVX2_DOT_H

#include <immintrin.h>
#include <string.h>

#include "avx2_kernels.h"
#include "dot_kernel.h"
#include "quant_blocks.h"

#ifdef AVX2_VNNI
#define DOT_NAME(vnni_name, name) vnni_name
#else
#define DOT_NAME(vnni_name, name) name
#endif

#define DOT_ROWS AVX2_DOT_ROWS

/* Bytes ahead that the 32-element block bodies prefetch in each row, into
 * L2, across groups of rows when rows are short (dot_prefetch_rows_far;
 * cpu-avx512's distance). */
#define DOT_32_PREFETCH_AHEAD 4096

/* ------------------------------------------------------------ helpers */

static inline float hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline float f16(uint16_t h)
{
	return _cvtsh_ss(h);
}

/* acc + Σ u·s over each group of 4 bytes, u unsigned, s signed: 8 i32
 * lanes (without VNNI: u ≤ 127, or |s| small enough, see above). */
static inline __m256i dot_u8s8_acc(__m256i acc, __m256i u, __m256i s)
{
#ifdef AVX2_VNNI
	return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
	return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

static inline __m256i dot_u8s8(__m256i u, __m256i s)
{
#ifdef AVX2_VNNI
	return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/* Σ w·x per 4 bytes of signed w (|w| ≤ 127) and x: |w| against x with
 * w's sign moved onto x (q8_0, the iq4 code book). */
static inline __m256i dot_s8s8(__m256i w, __m256i x)
{
	return dot_u8s8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

/* The 32 unsigned nibbles of 16 bytes in element order (the layout of
 * q4_0, q4_1, q5_*, iq4_*): low nibbles are elements 0..15, high ones
 * 16..31. Both halves get the 16 bytes, the upper one shifted down a
 * nibble: no cross-lane shuffle (port 5). */
static inline __m256i nibbles32(const uint8_t *qs)
{
	const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));

	return _mm256_and_si256(_mm256_srlv_epi32(q, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
				_mm256_set1_epi8(0x0f));
}

/* Byte j of the result: 0xff where bit j of h is set, else 0. */
static inline __m256i bits_to_byte_mask(uint32_t h)
{
	/* byte j gets byte j / 8 of h, or'ed with all bits but bit j % 8 */
	const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)h),
						   _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
								      0x0303030303030303));

	return _mm256_cmpeq_epi8(_mm256_or_si256(spread, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe)), _mm256_set1_epi8(-1));
}

/* Byte j of the result: `value` where bit j of the 32 bits at p is set,
 * else 0 (q5_0's and q5_1's fifth bits). */
static inline __m256i bits32_to_bytes(const uint8_t *p, char value)
{
	uint32_t h;

	memcpy(&h, p, 4);
	return _mm256_and_si256(bits_to_byte_mask(h), _mm256_set1_epi8(value));
}

/* vpshufb patterns broadcasting 16-bit lane j of each 128-bit half to all
 * 8 lanes of that half. */
#define SPLAT_W16(j) 2 * (j), 2 * (j) + 1
#define SPLAT_W16_X8(j) SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j), \
			SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j)
static const uint8_t splat_w16[8][32] __attribute__((aligned(32))) = {
#define SPLAT_ROW(j) { SPLAT_W16_X8(j), SPLAT_W16_X8(j) }
	SPLAT_ROW(0), SPLAT_ROW(1), SPLAT_ROW(2), SPLAT_ROW(3),
	SPLAT_ROW(4), SPLAT_ROW(5), SPLAT_ROW(6), SPLAT_ROW(7),
#undef SPLAT_ROW
};

/* 16-bit lane j of each half of v, in all 8 lanes of that half. */
static inline __m256i splat16(__m256i v, int j)
{
	return _mm256_shuffle_epi8(v, _mm256_load_si256((const __m256i *)splat_w16[j]));
}

/* Σ u·s of 32 bytes with each group of 16 scaled (vpmaddwd by sc, i16:
 * lanes 0..7 the scale of elements 0..15, 8..15 of 16..31): u ≤ 127. */
static inline __m256i dot_u8s8_scaled(__m256i u, __m256i s, __m256i sc)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), sc);
}

/* -------------------------------------------------- 32-element blocks */

/* The f16 scales of 8 consecutive blocks (stride bytes apart) as f32:
 * eight 16-bit inserts and one vcvtph2ps. Scalar conversions cost a
 * quarter of a block's work at memory speed; this costs a few uops. Not
 * vpgatherdd: microcoded and slow where the Downfall (GDS) mitigation is
 * on, and qemu 7.2's TCG computes it wrong in the multi-row loops (the
 * CI's Haswell run). */
static inline __m256 f16_scales8(const uint16_t *d0, int stride)
{
	const char *p = (const char *)d0;
	__m128i h = _mm_cvtsi32_si128(*d0);

	h = _mm_insert_epi16(h, *(const uint16_t *)(p + stride), 1);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 2 * stride), 2);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 3 * stride), 3);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 4 * stride), 4);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 5 * stride), 5);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 6 * stride), 6);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 7 * stride), 7);
	return _mm256_cvtph_ps(h);
}

/* An activation block as every row meets it: its bytes and what each
 * row's dot starts from (q4_0: Σ 8·x, the − 8 of every weight quant, once
 * for all rows; zero where a format needs none). */
struct x_block {
	__m256i q, start;
};

static inline struct x_block x_block_plain(const struct block_q8_0 *x)
{
	return (struct x_block){ _mm256_loadu_si256((const __m256i *)x->qs), _mm256_setzero_si256() };
}

/* For weights u − k (u unsigned): the start − Σ k·x, as vpdpbusd's i32
 * groups, or without VNNI as vpmaddubsw's i16 pairs k·x (the caller
 * subtracts them from its own pairs, row_block_offset). */
static inline struct x_block x_block_offset(const struct block_q8_0 *x, char k)
{
	const __m256i q = _mm256_loadu_si256((const __m256i *)x->qs);

#ifdef AVX2_VNNI
	return (struct x_block){ q, _mm256_sub_epi32(_mm256_setzero_si256(), dot_u8s8(_mm256_set1_epi8(k), q)) };
#else
	return (struct x_block){ q, _mm256_maddubs_epi16(_mm256_set1_epi8(k), q) };
#endif
}

/* Σ (u − k)·x of one block, u the 32 unsigned quants (k·x and u·x pairs
 * fit i16 for u, k ≤ 31, and so does their difference). */
static inline __m256 row_block_offset(__m256i u, struct x_block x)
{
#ifdef AVX2_VNNI
	return _mm256_cvtepi32_ps(_mm256_dpbusd_avx_epi32(x.start, u, x.q));
#else
	const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(u, x.q), x.start);

	return _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
#endif
}

/* Σ x of each of 8 q8_0 blocks, in block order (the 8 i32 lanes of
 * v[b] = Σ x per 4 bytes of block b summed). */
static inline __m256i block_sums8(const __m256i v[8])
{
	const __m256i s03 = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
	const __m256i s47 = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));

	/* half h of s03: blocks 0..3's sums over half h of their bytes */
	return _mm256_add_epi32(_mm256_permute2x128_si256(s03, s47, 0x20), _mm256_permute2x128_si256(s03, s47, 0x31));
}

/* Σ of the 8 i32 lanes. */
static inline int hsum_epi32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
	return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 1)));
}

/* The rows in runs of 8 blocks: their 8 scale products per row computed
 * at once, then each block's integer dot scaled into its row's
 * accumulators (two per row, even and odd blocks; the rows are the
 * independent chains); the last < 8 blocks one by one with scalar scales.
 * With with_min, a min m per block (q4_1, q5_1: the f16 after d, DOT_MIN):
 * Σ (d·q + m)·dx·xq adds m·dx·Σ xq, the Σ xq per activation block
 * computed once for all rows. */
#define DOT_MIN(block) (&(block)->d + 1)
/* The weights' scales: wscales8(first block) those of a run of 8
 * (__m256), wscale(block) one (f32); DEFINE_DOT_32's, the f16 d of each
 * block. DEFINE_DOT_32_SCALED: a format without a min, with its own
 * scales (wmin = DOT_NO_MIN, in code that with_min = 0 removes). */
#define DOT_F16_SCALES8(b) f16_scales8(&(b)->d, sizeof(*(b)))
#define DOT_F16_SCALE(b) f16((b)->d)
#define DOT_NO_MIN(block) ((const uint16_t *)(const void *)(block))
#define DEFINE_DOT_32(body, t, wblock, with_min)                                                    \
	DEFINE_DOT_32_BODY(body, t, wblock, with_min, DOT_MIN, DOT_F16_SCALES8, DOT_F16_SCALE)
#define DEFINE_DOT_32_SCALED(body, t, wblock, wscales8, wscale)                                     \
	DEFINE_DOT_32_BODY(body, t, wblock, 0, DOT_NO_MIN, wscales8, wscale)
#define DEFINE_DOT_32_BODY(body, t, wblock, with_min, wmin, wscales8, wscale)                       \
	static DOT_ALWAYS_INLINE void body(int64_t n, const void *wv, int64_t stride, const void *xv, \
					       float *out, const int rows)                              \
	{                                                                                           \
		const struct block_q8_0 *x = xv;                                                    \
		const int64_t nb = n / QK8_0;                                                       \
		const __m256i ones = _mm256_set1_epi8(1);                                           \
		__m256 acc[DOT_ROWS][2], macc[DOT_ROWS];                                            \
		float tail_min[DOT_ROWS];                                                           \
		_Alignas(32) float d[DOT_ROWS][8];                                                  \
		int64_t i = 0;                                                                      \
                                                                                                    \
		FOR_ROWS(r) {                                                                       \
			acc[r][0] = acc[r][1] = macc[r] = _mm256_setzero_ps();                      \
			tail_min[r] = 0.0f;                                                         \
		}                                                                                   \
		for (; i + 8 <= nb; i += 8) {                                                       \
			const __m256 xs = f16_scales8(&x[i].d, sizeof(*x));                         \
			__m256 xm = _mm256_setzero_ps(); /* dx·Σ xq per block */                    \
                                                                                                    \
			if (with_min) {                                                             \
				__m256i v[8];                                                       \
                                                                                                    \
				for (int u = 0; u < 8; u++)                                         \
					v[u] = dot_u8s8(ones, _mm256_loadu_si256((const __m256i *)x[i + u].qs)); \
				xm = _mm256_mul_ps(_mm256_cvtepi32_ps(block_sums8(v)), xs);         \
			}                                                                           \
			dot_prefetch_rows_far(wv, stride, rows, nb * (int64_t)sizeof(struct wblock), \
					      i * (int64_t)sizeof(struct wblock), 8 * sizeof(struct wblock), \
					      DOT_32_PREFETCH_AHEAD);                               \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = dot_row_at(wv, stride, r);                 \
                                                                                                    \
				_mm256_store_ps(d[r], _mm256_mul_ps(wscales8(&w[i]), xs));          \
				if (with_min)                                                       \
					macc[r] = _mm256_fmadd_ps(f16_scales8(wmin(&w[i]), sizeof(*w)), xm, macc[r]); \
			}                                                                           \
			for (int u = 0; u < 8; u++) {                                               \
				const struct x_block xb = x_block_##t(&x[i + u]);                   \
                                                                                                    \
				FOR_ROWS(r) {                                                       \
					const struct wblock *w = dot_row_at(wv, stride, r);         \
                                                                                                    \
					acc[r][u & 1] = _mm256_fmadd_ps(_mm256_broadcast_ss(&d[r][u]), \
						row_block_##t(&w[i + u], xb), acc[r][u & 1]);       \
				}                                                                   \
			}                                                                           \
		}                                                                                   \
		for (; i < nb; i++) {                                                               \
			const struct x_block xb = x_block_##t(&x[i]);                               \
			const float xsum = with_min ? f16(x[i].d) * (float)hsum_epi32(dot_u8s8(ones, xb.q)) : 0.0f; \
                                                                                                    \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = dot_row_at(wv, stride, r);                 \
                                                                                                    \
				acc[r][0] = _mm256_fmadd_ps(_mm256_set1_ps(wscale(&w[i]) * f16(x[i].d)), \
							    row_block_##t(&w[i], xb), acc[r][0]);   \
				if (with_min)                                                       \
					tail_min[r] += f16(*wmin(&w[i])) * xsum;                    \
			}                                                                           \
		}                                                                                   \
		FOR_ROWS(r)                                                                         \
			out[r] = hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[r][0], acc[r][1]), macc[r])) + tail_min[r]; \
	}

#endif
