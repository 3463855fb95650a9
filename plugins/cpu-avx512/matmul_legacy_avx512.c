/* The other 32-element formats against q8_0 activations (q4_1, q5_0, q5_1,
 * iq4_nl, mxfp4) and iq4_xs against q8_K, in integer arithmetic as
 * matmul_quant_avx512.c's (built twice the same way, avx512_dot.h):
 *
 *   q4_1, q5_1  Σ (d·q + m)·dx·xq = d·dx·Σ q·xq + m·dx·Σ xq, q unsigned
 *               (0..15, 0..31), Σ xq per block once for all rows;
 *   q5_0        Σ (q − 16)·xq = Σ q·xq − Σ 16·xq, as q4_0;
 *   iq4_nl,     the 4-bit indices through the code book by vpshufb: with
 *   iq4_xs      vpdpbusd T[i] + 128 (unsigned) against xq, − 128·Σ xq once
 *               for all rows; without, |T[i]| against xq with T[i]'s sign
 *               (T[i] < 0 exactly for i < 8), as q8_0 does;
 *   mxfp4       its code book (x86/mxfp4_x86.h) + 12 by vpshufb, unsigned,
 *               − 12·Σ xq as q5_0's − 16; E8M0 block scales.
 *
 * The fifth bits of q5_0/q5_1 (qh, bit j for element j) are already in
 * the order of a pair's bytes: qh(a) | qh(b) << 32 is a byte mask.
 */
#include <string.h>

#include "avx512_dot.h"
#include "x86/mxfp4_x86.h"

/* Two blocks' 16 bytes of nibbles a, b: [a lo | a hi | b lo | b hi], as
 * q4_0_pair_bytes. */
static inline __m512i nibble_pair(const uint8_t *a, const uint8_t *b)
{
	const __m512i aa = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)a));
	const __m512i aabb = _mm512_mask_broadcast_i32x4(aa, 0xff00, _mm_loadu_si128((const __m128i *)b));

	return _mm512_and_si512(_mm512_mask_srli_epi16(aabb, 0xff00ff00u, aabb, 4), _mm512_set1_epi8(0x0f));
}

/* Nibbles plus 16 where the pair's qh bits are set. */
static inline __m512i q5_pair_bytes(const uint8_t *qs_a, const uint8_t *qh_a, const uint8_t *qs_b,
				    const uint8_t *qh_b)
{
	uint32_t ha, hb;

	memcpy(&ha, qh_a, 4);
	memcpy(&hb, qh_b, 4);
	const __m512i q = nibble_pair(qs_a, qs_b);

	return _mm512_mask_add_epi8(q, _cvtu64_mask64(ha | (uint64_t)hb << 32), q, _mm512_set1_epi8(16));
}

/* Σ T[idx]·x of 64 index bytes against 64 activation bytes, from start:
 * with vpdpbusd (no saturation) T + 128 (1..241) against x, start being
 * −128·Σ x (iq4_start, once for all rows); with vpmaddubsw, whose pair sums
 * would saturate so, |T| against x with T's sign and a zero start. */
#ifdef __AVX512VNNI__
static inline __m512i iq4_start(__m512i xq)
{
	return _mm512_sub_epi32(_mm512_setzero_si512(), dot_u8s8(_mm512_set1_epi8((char)0x80), xq));
}

static inline __m512i iq4_dot(__m512i start, __m512i idx, __m512i xq)
{
	const __m512i t = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, (char)129, (char)141,
							       (char)153, (char)166, (char)181, (char)197, (char)217,
							       (char)241));

	return dot_u8s8_acc(start, _mm512_shuffle_epi8(t, idx), xq);
}
#else
static inline __m512i iq4_start(__m512i xq)
{
	(void)xq;
	return _mm512_setzero_si512();
}

static inline __m512i iq4_dot(__m512i start, __m512i idx, __m512i xq)
{
	const __m512i mag = _mm512_broadcast_i32x4(_mm_setr_epi8(127, 104, 83, 65, 49, 35, 22, 10, 1, 13, 25, 38, 53, 69, 89, 113));
	const __mmask64 neg = _mm512_testn_epi8_mask(idx, _mm512_set1_epi8(8));

	(void)start;
	return dot_u8s8(_mm512_shuffle_epi8(mag, idx), _mm512_mask_sub_epi8(xq, neg, _mm512_setzero_si512(), xq));
}
#endif

static inline struct x_pair x_pair_plain(const struct block_q8_0 *x, int both)
{
	return (struct x_pair){ load_pair(x[0].qs, both ? x[1].qs : NULL), _mm512_setzero_si512() };
}

#define x_pair_q4_1 x_pair_plain
#define x_pair_q5_1 x_pair_plain

static inline struct x_pair x_pair_iq4_nl(const struct block_q8_0 *x, int both)
{
	const __m512i q = load_pair(x[0].qs, both ? x[1].qs : NULL);

	return (struct x_pair){ q, iq4_start(q) };
}

/* For weights u − k (u unsigned): the start − Σ k·x. */
static inline struct x_pair x_pair_offset(const struct block_q8_0 *x, int both, char k)
{
	const __m512i q = load_pair(x[0].qs, both ? x[1].qs : NULL);

	return (struct x_pair){ q, _mm512_sub_epi32(_mm512_setzero_si512(), dot_u8s8(_mm512_set1_epi8(k), q)) };
}

static inline struct x_pair x_pair_q5_0(const struct block_q8_0 *x, int both)
{
	return x_pair_offset(x, both, 16);
}

static inline struct x_pair x_pair_mxfp4(const struct block_q8_0 *x, int both)
{
	return x_pair_offset(x, both, MXFP4_OFFSET);
}

/* A pair's integer dot; a missing second block (both = 0) reads the first
 * again, against zero activations. */
static inline __m512i row_pair_q4_1(const struct block_q4_1 *w, struct x_pair x, int both)
{
	return dot_u8s8(nibble_pair(w[0].qs, w[both].qs), x.q);
}

static inline __m512i row_pair_q5_0(const struct block_q5_0 *w, struct x_pair x, int both)
{
	return dot_u8s8_acc(x.start, q5_pair_bytes(w[0].qs, w[0].qh, w[both].qs, w[both].qh), x.q);
}

static inline __m512i row_pair_q5_1(const struct block_q5_1 *w, struct x_pair x, int both)
{
	return dot_u8s8(q5_pair_bytes(w[0].qs, w[0].qh, w[both].qs, w[both].qh), x.q);
}

static inline __m512i row_pair_iq4_nl(const struct block_iq4_nl *w, struct x_pair x, int both)
{
	return iq4_dot(x.start, nibble_pair(w[0].qs, w[both].qs), x.q);
}

/* mxfp4: the code book + 12 (0..24, vpshufb) against x, from the start
 * − 12·Σ x. */
static inline __m512i row_pair_mxfp4(const struct block_mxfp4 *w, struct x_pair x, int both)
{
	const __m512i t = _mm512_broadcast_i32x4(_mm_setr_epi8(MXFP4_VALUES_U8));

	return dot_u8s8_acc(x.start, _mm512_shuffle_epi8(t, nibble_pair(w[0].qs, w[both].qs)), x.q);
}

static inline uint16_t min_q4_1(const struct block_q4_1 *b)
{
	return b->m;
}

static inline uint16_t min_q5_1(const struct block_q5_1 *b)
{
	return b->m;
}

static inline uint16_t min_q5_0(const struct block_q5_0 *b)
{
	(void)b;
	return 0;
}

DEFINE_DOT_32_MIN(q4_1_rows, q4_1, block_q4_1, 1)
DEFINE_DOT_32_MIN(q5_0_rows, q5_0, block_q5_0, 0)
DEFINE_DOT_32_MIN(q5_1_rows, q5_1, block_q5_1, 1)
DEFINE_DOT_32(iq4_nl_rows, iq4_nl, block_iq4_nl)
DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_q4_1, avx512_vec_dot_q4_1),
		   DOT_NAME(avx512vnni_vec_dot_rows_q4_1, avx512_vec_dot_rows_q4_1),
		   q4_1_rows, n / QK4_1 * (int64_t)sizeof(struct block_q4_1), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_q5_0, avx512_vec_dot_q5_0),
		   DOT_NAME(avx512vnni_vec_dot_rows_q5_0, avx512_vec_dot_rows_q5_0),
		   q5_0_rows, n / QK5_0 * (int64_t)sizeof(struct block_q5_0), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_q5_1, avx512_vec_dot_q5_1),
		   DOT_NAME(avx512vnni_vec_dot_rows_q5_1, avx512_vec_dot_rows_q5_1),
		   q5_1_rows, n / QK5_1 * (int64_t)sizeof(struct block_q5_1), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_iq4_nl, avx512_vec_dot_iq4_nl),
		   DOT_NAME(avx512vnni_vec_dot_rows_iq4_nl, avx512_vec_dot_rows_iq4_nl),
		   iq4_nl_rows, n / QK4_NL * (int64_t)sizeof(struct block_iq4_nl), DOT_ROWS)
DEFINE_DOT_32_SCALED(mxfp4_rows, mxfp4, block_mxfp4, mxfp4_scales8, MXFP4_SCALE)
DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_mxfp4, avx512_vec_dot_mxfp4),
		   DOT_NAME(avx512vnni_vec_dot_rows_mxfp4, avx512_vec_dot_rows_mxfp4),
		   mxfp4_rows, n / QK_MXFP4 * (int64_t)sizeof(struct block_mxfp4), DOT_ROWS)

/* The 8 sub-block scales of an iq4_xs block, ls − 32: 4-bit fields of
 * scales_l and 2-bit fields of scales_h spread to one byte each. */
static inline __m256 iq4_xs_scales(const struct block_iq4_xs *b)
{
	const __m256i ls = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)dot_iq4_xs_ls(b->scales_h, b->scales_l)));

	return _mm256_cvtepi32_ps(_mm256_sub_epi32(ls, _mm256_set1_epi32(32)));
}

/* iq4_xs × q8_K: Σ_b d·(ls_b − 32)·dx·Σ T[q]·xq over the 8 sub-blocks of
 * 32; 64 elements (sub-blocks 2c, 2c + 1) are bytes qs[32c..32c+31]. */
static DOT_ALWAYS_INLINE void iq4_xs_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
				      const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K;
	__m512 acc[DOT_ROWS][2];

	FOR_ROWS(r)
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
	for (int64_t i = 0; i < nb; i++) {
		__m512i xq[4], start[4];

		load_q8_K(&x[i], xq);
		for (int c = 0; c < 4; c++)
			start[c] = iq4_start(xq[c]);
		dot_prefetch_rows_far(wv, stride, rows, nb * (int64_t)sizeof(struct block_iq4_xs),
				      i * (int64_t)sizeof(struct block_iq4_xs), sizeof(struct block_iq4_xs),
				      DOT_32_PREFETCH_AHEAD);
		FOR_ROWS(r) {
			const struct block_iq4_xs *w = (const struct block_iq4_xs *)dot_row_at(wv, stride, r) + i;
			const __m512 scales = _mm512_castps256_ps512(
				_mm256_mul_ps(_mm256_set1_ps(f16_scalar(w->d) * x[i].d), iq4_xs_scales(w)));

			for (int c = 0; c < 4; c++) {
				const __m512i p = iq4_dot(start[c], nibble_pair(w->qs + 32 * c, w->qs + 32 * c + 16), xq[c]);

				acc[r][c & 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread_scales(scales, 2 * c, 8),
								acc[r][c & 1]);
			}
		}
	}
	FOR_ROWS(r)
		out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
}

DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_iq4_xs, avx512_vec_dot_iq4_xs),
		   DOT_NAME(avx512vnni_vec_dot_rows_iq4_xs, avx512_vec_dot_rows_iq4_xs),
		   iq4_xs_rows, n / QK_K * (int64_t)sizeof(struct block_iq4_xs), DOT_ROWS)
