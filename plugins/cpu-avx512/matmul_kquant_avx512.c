/* The K-quants (q2_K, q3_K, q4_K, q5_K, q6_K), the ternary formats (tq1_0,
 * tq2_0) and the i-quants below 4 bits (iq2_xxs, iq2_xs, iq2_s, iq3_xxs,
 * iq3_s, iq1_s, iq1_m) against q8_K activations, in integer arithmetic
 * as matmul_quant_avx512.c's (built twice the same way, avx512_dot.h).
 * One body for all (kq_formats.h): a format decodes a block
 * into its 256 quants as unsigned bytes (4 zmm: q6_K in element order,
 * the others in crumbs' or nibble_pairs' order, the activation reordered
 * to match), the
 * int16 scales of its groups of 16 (q4_K and q5_K: their 8 of 32) and the
 * coefficient of each group's Σ x, and
 *
 *   Σ y·x = d·dx·Σ_g sc_g·Σ_g u·x − dbias·dx·Σ_g bias_g·Σ_g x
 *
 * with u·x the u8×s8 dots, Σ_g x the activation's bsums (loaded once for
 * all rows), and per format (u unsigned, y the decoded weight):
 *
 *   q2_K  y = d·sc·u − dmin·m       u 0..3:  bias m,  dbias dmin
 *   q3_K  y = d·sc·(u − 4)          u 0..7 (the hmask bit as 4): bias sc, dbias 4·d
 *   q4_K  y = d·sc·u − dmin·m       u 0..15: bias m,  dbias dmin
 *   q5_K  y = d·sc·u − dmin·m       u 0..31 (the qh bit as 16)
 *   q6_K  y = d·sc·(u − 32)         u 0..63: bias sc, dbias 32·d
 *   tq*   y = d·(u − 1)             u 0..2 (sc 1): bias 1, dbias d
 *   iq2*, y = f·d·sc·(u − 64)       u = 64 ± grid value (2..126): bias sc,
 *   iq3*                            dbias 64·f·d (f: 1/8, 1/4 or 1)
 *   iq1*  y = d/8·sc·(u − 16)       u = 8·(grid + 2) ± 1 (7..25, grid in
 *                                   −1..1, ± the delta): bias sc, dbias 2·d
 *
 * (sc of the i-quants: 2·ls + 1.) Every pair sum of vpmaddubsw stays below
 * 2^15 (126·127·2 at most), and
 * a block's Σ_g sc_g·Σ_g u·x in int32 (vpmaddwd by the scales, one float
 * conversion and FMA a block and row: 2× the f32-per-64-bytes body on Zen
 * 4 in L1/L2, q4_K 10.5 -> 5.2 ns a block and row, q6_K 18.5 -> 6.2).
 */
#include <stddef.h>
#include <string.h>

#include "avx512_dot.h"
#include "kq_formats.h"

/* One block as the body meets it. */
struct kq_block {
	__m512i q[4];   /* the 256 quants, unsigned, 64 a zmm (order: see the top) */
	__m256i sc;     /* the 16 groups' scales, int16 (q4_K, q5_K: the 8 of 32, words 0..7) */
	__m256i bias;   /* the 16 groups' coefficients of Σ x, int16 (q4_K, q5_K: the 8 of 32, words 8..15) */
	__m128i dh;     /* f16 bits: word 0 the scales' factor d, word 1 the bias's dmin
			 * (q2_K, q4_K, q5_K; q3_K and q6_K fold theirs, 4d and 32d) */
};

/* q2_K's and q3_K's 2-bit fields, one load: element 128h + 32s + l
 * (l < 32) is (qs[32h + l] >> 2s) & 3, so zmm s, the 64 bytes shifted by
 * 2s, holds elements 32s .. (bytes 0..31) and 128 + 32s .. (32..63), i.e.
 * groups of 16 number 2s, 2s + 1, 8 + 2s, 9 + 2s; kq_rows puts the
 * activation's bytes in that order. */
static inline void crumbs(const uint8_t qs[64], __m512i q[4])
{
	const __m512i v = _mm512_loadu_si512(qs), m3 = _mm512_set1_epi8(3);

	q[0] = _mm512_and_si512(v, m3);
	for (int s = 1; s < 4; s++)
		q[s] = _mm512_and_si512(_mm512_srli_epi16(v, 2 * s), m3);
}

/* Adds `value` to the quants of zmm c whose high bit is set in the 32
 * bytes hb (q3_K's hmask, q5_K's qh: bit t of hb[l] for element 32t + l):
 * bits lo and hi for the zmm's two halves, c and c + 4 in crumbs' order,
 * 4(c / 2) + c % 2 and that + 2 in nibble_pairs'. */
static inline void add_high_bits(const uint8_t hb[32], __m512i q[4], int value, int pairs)
{
	const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)hb));

	for (int c = 0; c < 4; c++) {
		const int lo = pairs ? 4 * (c / 2) + c % 2 : c, hi = pairs ? lo + 2 : c + 4;
		const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << lo)), _mm256_set1_epi8((char)(1 << hi)), 1);

		q[c] = _mm512_mask_add_epi8(q[c], _mm512_test_epi8_mask(h, bit), q[c], _mm512_set1_epi8((char)value));
	}
}

/* The f16 d and dmin that follow each other in q2_K, q4_K and q5_K. */
static inline __m128i d_dmin(const uint16_t *d)
{
	uint32_t v;

	memcpy(&v, d, 4);
	return _mm_cvtsi32_si128((int)v);
}

static DOT_ALWAYS_INLINE struct kq_block q2_K_block(const struct block_q2_K *b)
{
	const __m128i s = _mm_loadu_si128((const __m128i *)b->scales), m4 = _mm_set1_epi8(0x0f);
	struct kq_block k = {
		.sc = _mm256_cvtepu8_epi16(_mm_and_si128(s, m4)),
		.bias = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4)),
		.dh = d_dmin(&b->d),
	};

	crumbs(b->qs, k.q);
	return k;
}

/* q3_K's 16 scales (SPEC/QUANT.md) in an xmm, no store: the low nibbles of
 * bytes 0..7 then their high nibbles, or'ed with bits 2j, 2j + 1 of bytes
 * 8..11 for scales 4j .. 4j + 3 (a shift per 32-bit lane). */
static DOT_ALWAYS_INLINE struct kq_block q3_K_block(const struct block_q3_K *b)
{
	const __m128i lo = _mm_loadl_epi64((const __m128i *)b->scales), m4 = _mm_set1_epi8(0x0f);
	uint32_t h;
	struct kq_block k;

	memcpy(&h, b->scales + 8, 4);

	const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(lo, m4), _mm_and_si128(_mm_srli_epi16(lo, 4), m4));
	const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32((int)h), _mm_setr_epi32(0, 2, 4, 6)),
					   _mm_set1_epi8(3));

	k.sc = _mm256_cvtepi8_epi16(_mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32)));
	k.bias = k.sc;
	k.dh = _mm_cvtsi32_si128(b->d);
	crumbs(b->qs, k.q);
	add_high_bits(b->hmask, k.q, 4, 0);
	return k;
}

/* q4_K's and q5_K's scales and mins (q5_K's head is q4_K's), each twice. */
_Static_assert(offsetof(struct block_q5_K, scales) == offsetof(struct block_q4_K, scales) &&
	       offsetof(struct block_q5_K, dmin) == offsetof(struct block_q4_K, dmin), "q5_K head");

static DOT_ALWAYS_INLINE struct kq_block k4_block(const struct block_q4_K *b)
{
	/* dwords u0, u1, u2 of the 12 bytes (the 4 after them unused):
	 * sc 0..3 = u0 & 63, sc 4..7 = u2 & 15 | (u0 >> 6) << 4, m 0..3 =
	 * u1 & 63, m 4..7 = u2 >> 4 | (u1 >> 6) << 4, bytewise */
	const __m128i v = _mm_loadu_si128((const __m128i *)b->scales);
	const __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)); /* u0 u2 u1 u2 */
	const __m128i h = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)); /* u0 u0 u1 u1 */
	const __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
					 _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
	const __m128i hi = _mm_and_si128(_mm_srli_epi32(h, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
	const __m256i scm = _mm256_cvtepu8_epi16(_mm_or_si128(lo, hi)); /* words 0..7 sc, 8..15 m */

	return (struct kq_block){
		.sc = scm,
		.bias = scm,
		.dh = d_dmin(&b->d),
	};
}

/* q4_K's and q5_K's nibbles in pairs of quarters, for fewer instructions
 * a byte: zmm 2p + h is the low (h = 0) or high nibbles of qs[64p ..],
 * i.e. groups of 32 number 4p + h (bytes 0..31) and 4p + 2 + h (32..63);
 * kq_rows puts the activation's bytes in that order. */
static inline void nibble_pairs(const uint8_t qs[128], __m512i q[4])
{
	const __m512i m4 = _mm512_set1_epi8(0x0f);

	for (int p = 0; p < 2; p++) {
		const __m512i v = _mm512_loadu_si512(qs + 64 * p);

		q[2 * p] = _mm512_and_si512(v, m4);
		q[2 * p + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
	}
}

static DOT_ALWAYS_INLINE struct kq_block q4_K_block(const struct block_q4_K *b)
{
	struct kq_block k = k4_block(b);

	nibble_pairs(b->qs, k.q);
	return k;
}

/* As q4_K plus the qh bits. */
static DOT_ALWAYS_INLINE struct kq_block q5_K_block(const struct block_q5_K *b)
{
	struct kq_block k = k4_block((const struct block_q4_K *)b);

	nibble_pairs(b->qs, k.q);
	add_high_bits(b->qh, k.q, 16, 1);
	return k;
}

static DOT_ALWAYS_INLINE struct kq_block q6_K_block(const struct block_q6_K *b)
{
	struct kq_block k;

	k.sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->scales));
	k.bias = k.sc;
	k.dh = _mm_cvtsi32_si128(b->d);
	q6_K_half(b, 0, &k.q[0], &k.q[1]);
	q6_K_half(b, 1, &k.q[2], &k.q[3]);
	return k;
}

/* The ternary formats, y = d·(u − 1) with u 0..2: every group's scale
 * and bias 1, the − 1 folded (kq_fold 0). */
static DOT_ALWAYS_INLINE struct kq_block tq_head(uint16_t d)
{
	return (struct kq_block){
		.sc = _mm256_set1_epi16(1),
		.bias = _mm256_set1_epi16(1),
		.dh = _mm_cvtsi32_si128(d),
	};
}

/* tq2_0's 2-bit fields are q2_K's (crumbs' order). */
static DOT_ALWAYS_INLINE struct kq_block tq2_0_block(const struct block_tq2_0 *b)
{
	struct kq_block k = tq_head(b->d);

	crumbs(b->qs, k.q);
	return k;
}

/* Trit j of byte b (its j-th base-3 digit from the top) is
 * ((b·3^j mod 256)·3) >> 8, i.e. (q > 85) + (q > 170) for q = b·3^j mod
 * 256. pw: the power for each 16-bit word (both of its bytes). vpmullw of
 * the words gives the low bytes' q, of the words with their low byte
 * cleared the high bytes'. */
static inline __m512i trits(__m512i b, __m512i pw)
{
	const __m512i lo = _mm512_mullo_epi16(b, pw);
	const __m512i hi = _mm512_mullo_epi16(_mm512_and_si512(b, _mm512_set1_epi16((short)0xff00)), pw);
	const __m512i q = _mm512_mask_blend_epi8(0xaaaaaaaaaaaaaaaaull, lo, hi);
	const __m512i one = _mm512_set1_epi8(1);
	const __m512i t = _mm512_maskz_mov_epi8(_mm512_cmpgt_epu8_mask(q, _mm512_set1_epi8(85)), one);

	return _mm512_mask_add_epi8(t, _mm512_cmpgt_epu8_mask(q, _mm512_set1_epi8((char)170)), t, one);
}

/* A power of 3 in both words of a dword. */
#define P3(p) ((p) * 0x10001)

/* tq1_0 in element order: elements 0..159 are trits 0..4 of qs[0..31]
 * (32 a trit), 160..239 trits 0..4 of qs[32..47], 240..255 trits 0..3 of
 * qh[0..3]: zmm c holds those bytes, each 16 with its own power of 3. */
static DOT_ALWAYS_INLINE struct kq_block tq1_0_block(const struct block_tq1_0 *b)
{
	struct kq_block k = tq_head(b->d);
	const __m256i q0 = _mm256_loadu_si256((const __m256i *)b->qs);
	const __m512i b01 = _mm512_broadcast_i64x4(q0);
	const __m512i q1 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(b->qs + 32)));

	k.q[0] = trits(b01, _mm512_setr_epi32(P3(1), P3(1), P3(1), P3(1), P3(1), P3(1), P3(1), P3(1), P3(3), P3(3),
					      P3(3), P3(3), P3(3), P3(3), P3(3), P3(3)));
	k.q[1] = trits(b01, _mm512_setr_epi32(P3(9), P3(9), P3(9), P3(9), P3(9), P3(9), P3(9), P3(9), P3(27), P3(27),
					      P3(27), P3(27), P3(27), P3(27), P3(27), P3(27)));
	k.q[2] = trits(_mm512_inserti64x4(q1, q0, 0),
		       _mm512_setr_epi32(P3(81), P3(81), P3(81), P3(81), P3(81), P3(81), P3(81), P3(81), P3(1), P3(1),
					 P3(1), P3(1), P3(3), P3(3), P3(3), P3(3)));
	k.q[3] = trits(_mm512_mask_set1_epi32(q1, 0xf000, (int)iq_u32(b->qh)),
		       _mm512_setr_epi32(P3(9), P3(9), P3(9), P3(9), P3(27), P3(27), P3(27), P3(27), P3(81), P3(81),
					 P3(81), P3(81), P3(1), P3(3), P3(9), P3(27)));
	return k;
}

#undef P3

/* The i-quants, decoded in vectors: zmm c holds sub-blocks 2c, 2c + 1
 * (64 elements in element order), their grid entries (ref/codebooks.h,
 * in L1/L2) fetched by grid8 / grid4, made unsigned for
 * vpdpbusd / vpmaddubsw with an offset folded out by the bias (kq_fold):
 * iq2/iq3 64 ± grid (2..126), iq1 8·(grid + 2) ± 1 (7..25, the delta
 * times 8), − where the sign (iq1: delta) bit is set. Building them
 * from iq_subblocks.h's scalar sub-blocks (the int8 GEMM's packing) took
 * 30-60 ns a block and row on Zen 4, this 17-30 (q4_K: 5). */
static DOT_ALWAYS_INLINE __m512i iq_quants(__m512i g, __mmask64 neg, int iq1)
{
	if (iq1) {
		const __m512i one = _mm512_set1_epi8(1);
		/* grid + 2 is 1..3: the 16-bit shift keeps it in its byte */
		const __m512i t = _mm512_slli_epi16(_mm512_add_epi8(g, _mm512_set1_epi8(2)), 3);

		return _mm512_mask_sub_epi8(_mm512_add_epi8(t, one), neg, t, one);
	}
	const __m512i base = _mm512_set1_epi8(64);

	return _mm512_mask_sub_epi8(_mm512_add_epi8(base, g), neg, base, g);
}

/* 8 grid entries of 8 bytes, entry k by index i[k]: scalar loads with
 * the indices in registers (vpgatherqq, or the indices computed in a
 * vector and stored for the loads, took 10-30 % longer on Zen 4). */
static DOT_ALWAYS_INLINE __m512i grid8(const uint8_t (*grid)[8], const uint32_t i[8])
{
	__m128i q[4];

	for (int k = 0; k < 4; k++)
		q[k] = _mm_insert_epi64(_mm_loadl_epi64((const __m128i *)grid[i[2 * k]]), (long long)iq_grid8(grid[i[2 * k + 1]]),
					1);
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_m128i(q[0], q[1])), _mm256_setr_m128i(q[2], q[3]), 1);
}

/* 16 grid entries of 4 bytes by their indices (dwords of idx): one
 * vpgatherdd. */
static inline __m512i grid4(__m512i idx, const uint8_t (*grid)[4])
{
	return _mm512_i32gather_epi32(idx, (const void *)grid, 4);
}

/* The same by 16 index bytes in memory (iq3_xxs): scalar loads, −25 %
 * a block (iq3_s's 9-bit indices lost 5 % so). */
static inline __m512i grid4_bytes(const uint8_t (*grid)[4], const uint8_t *i)
{
	__m128i q[4];

	/* _mm_setr_epi32, not _mm_insert_epi32 in a loop: the insert's lane
	 * must be a constant, which only an unrolled loop (-O3) makes it */
	for (int k = 0; k < 4; k++, i += 4)
		q[k] = _mm_setr_epi32((int)iq_u32(grid[i[0]]), (int)iq_u32(grid[i[1]]), (int)iq_u32(grid[i[2]]),
				      (int)iq_u32(grid[i[3]]));
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_m128i(q[0], q[1])), _mm256_setr_m128i(q[2], q[3]), 1);
}

/* The signs of 64 elements from 8 7-bit sign indices, one a qword (bits
 * 0..6): ksigns' byte is the index and its parity as bit 7, computed
 * here (xor folds), spread over the qword's 8 bytes and tested bit by bit. */
static inline __mmask64 ksigns_mask(__m512i s7)
{
	__m512i p = _mm512_xor_si512(s7, _mm512_srli_epi64(s7, 4));

	p = _mm512_xor_si512(p, _mm512_srli_epi64(p, 2));
	p = _mm512_xor_si512(p, _mm512_srli_epi64(p, 1));

	const __m512i sb = _mm512_or_si512(s7, _mm512_slli_epi64(_mm512_and_si512(p, _mm512_set1_epi64(1)), 7));
	const __m512i byte0 = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8));

	return _mm512_test_epi8_mask(_mm512_shuffle_epi8(sb, byte0), _mm512_set1_epi64(0x8040201008040201ll));
}

/* Qword l of the result: the 32-bit word at dword w0 (l < 4) or w1 of v,
 * shifted right by shift[l]. */
static inline __m512i words_shifted(__m128i v, int w0, int w1, __m512i shift)
{
	const __m512i w = _mm512_permutexvar_epi32(_mm512_setr_epi32(w0, w0, w0, w0, w0, w0, w0, w0, w1, w1, w1, w1,
								     w1, w1, w1, w1),
						   _mm512_castsi128_si512(v));

	return _mm512_srlv_epi64(w, shift);
}

/* The head of an i-quant block: group g's scale 2·ls_g + 1 from ls
 * (16 words, group order), also its bias (the offset is 2^kq_fold times
 * it); d the f16 bits. */
static DOT_ALWAYS_INLINE struct kq_block iq_head(__m256i w, uint16_t d)
{
	struct kq_block k;

	k.sc = _mm256_add_epi16(_mm256_add_epi16(w, w), _mm256_set1_epi16(1));
	k.bias = k.sc;
	k.dh = _mm_cvtsi32_si128(d);
	return k;
}

/* The nibbles of bytes 0..7 of v as 16 words: low of byte j at 2j, high
 * at 2j + 1. */
static inline __m256i nibble_words(__m128i v)
{
	const __m128i m4 = _mm_set1_epi8(0x0f);

	return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4)));
}

/* Bytes 0..7 of v (ls_j in byte j, per 32) as 16 words, each twice. */
static inline __m256i twice8(__m128i v)
{
	return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));
}

/* The 4-bit ls in the top of 8 aux words (iq2_xxs's, iq3_xxs's), dwords
 * first, first + step, .. of v, each twice, as words. */
static inline __m256i aux_ls(__m512i v, int first, int step)
{
	const __m512i j = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
	const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(first), _mm512_mullo_epi32(j, _mm512_set1_epi32(step)));

	return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_permutexvar_epi32(idx, v), 28));
}

/* iq2_xxs: per sub-block 4 index bytes and an aux word (4×7 sign bits,
 * ls in the top 4). */
static DOT_ALWAYS_INLINE struct kq_block iq2_xxs_block(const struct block_iq2_xxs *b)
{
	struct kq_block k = iq_head(aux_ls(_mm512_loadu_si512(b->qs), 1, 2), b->d);
	const __m512i shift = _mm512_setr_epi64(0, 7, 14, 21, 0, 7, 14, 21);

	for (int c = 0; c < 4; c++) {
		const __m128i v = _mm_loadu_si128((const __m128i *)(b->qs + 8 * c));
		const __m512i s7 = _mm512_and_si512(words_shifted(v, 1, 3, shift), _mm512_set1_epi64(127));
		const uint8_t *q = (const uint8_t *)(b->qs + 8 * c);
		const uint32_t i[8] = { q[0], q[1], q[2], q[3], q[8], q[9], q[10], q[11] };
		const __m512i g = grid8(ref_iq2xxs_grid, i);

		k.q[c] = iq_quants(g, ksigns_mask(s7), 0);
	}
	return k;
}

/* iq2_xs: per 8 elements a word, 9-bit index and 7-bit sign index; ls
 * per 16 in nibbles. */
static DOT_ALWAYS_INLINE struct kq_block iq2_xs_block(const struct block_iq2_xs *b)
{
	struct kq_block k = iq_head(nibble_words(_mm_loadl_epi64((const __m128i *)b->scales)), b->d);

	for (int c = 0; c < 4; c++) {
		const uint16_t *w = b->qs + 8 * c;
		const uint32_t i[8] = { w[0] & 511u, w[1] & 511u, w[2] & 511u, w[3] & 511u,
					w[4] & 511u, w[5] & 511u, w[6] & 511u, w[7] & 511u };
		const __m512i q = _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)w));

		k.q[c] = iq_quants(grid8(ref_iq2xs_grid, i), ksigns_mask(_mm512_srli_epi64(q, 9)), 0);
	}
	return k;
}

/* iq2_s: 10-bit indices, 8 bits in qs and 2 in qh (bits 2l, 2l + 1 of
 * the sub-block's byte for its l-th 8), plain sign bytes. */
static DOT_ALWAYS_INLINE struct kq_block iq2_s_block(const struct block_iq2_s *b)
{
	struct kq_block k = iq_head(nibble_words(_mm_loadl_epi64((const __m128i *)b->scales)), b->d);
	for (int c = 0; c < 4; c++) {
		const uint8_t *q = b->qs + 8 * c;
		const uint32_t h = b->qh[2 * c] | (uint32_t)b->qh[2 * c + 1] << 8, i[8] = {
			q[0] | (h << 8 & 0x300), q[1] | (h << 6 & 0x300), q[2] | (h << 4 & 0x300), q[3] | (h << 2 & 0x300),
			q[4] | (h & 0x300), q[5] | (h >> 2 & 0x300), q[6] | (h >> 4 & 0x300), q[7] | (h >> 6 & 0x300),
		};
		uint64_t signs;

		memcpy(&signs, b->qs + QK_K / 8 + 8 * c, 8);
		k.q[c] = iq_quants(grid8(ref_iq2s_grid, i), _cvtu64_mask64(signs), 0);
	}
	return k;
}

/* iq3_xxs: 64 index bytes of 4 elements, then an aux word per 32 (as
 * iq2_xxs's). */
static DOT_ALWAYS_INLINE struct kq_block iq3_xxs_block(const struct block_iq3_xxs *b)
{
	const uint8_t *aux = b->qs + QK_K / 4;
	struct kq_block k = iq_head(aux_ls(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)aux)), 0, 1), b->d);
	const __m512i shift = _mm512_setr_epi64(0, 7, 14, 21, 0, 7, 14, 21);

	for (int c = 0; c < 4; c++) {
		const __m128i v = _mm_loadl_epi64((const __m128i *)(aux + 8 * c));
		const __m512i s7 = _mm512_and_si512(words_shifted(v, 0, 1, shift), _mm512_set1_epi64(127));

		k.q[c] = iq_quants(grid4_bytes(ref_iq3xxs_grid, b->qs + 16 * c), ksigns_mask(s7), 0);
	}
	return k;
}

/* iq3_s: 9-bit indices of 4 elements (bit k of the sub-block's qh byte
 * for its k-th), plain sign bytes, ls per 32 in nibbles. */
static DOT_ALWAYS_INLINE struct kq_block iq3_s_block(const struct block_iq3_s *b)
{
	const __m128i ls = _mm_cvtsi32_si128((int)iq_u32(b->scales)), m4 = _mm_set1_epi8(0x0f);
	struct kq_block k = iq_head(twice8(_mm_unpacklo_epi8(_mm_and_si128(ls, m4), _mm_and_si128(_mm_srli_epi16(ls, 4), m4))),
				    b->d);
	const __m512i bit = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

	for (int c = 0; c < 4; c++) {
		const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(b->qs + 16 * c)));
		const int h = b->qh[2 * c] | b->qh[2 * c + 1] << 8;
		const __m512i hi = _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(h), bit), _mm512_set1_epi32(1));
		uint64_t signs;

		memcpy(&signs, b->signs + 8 * c, 8);
		k.q[c] = iq_quants(grid4(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 8)), ref_iq3s_grid), _cvtu64_mask64(signs),
				   0);
	}
	return k;
}

/* iq1_s: 11-bit indices (3 high bits per 8 in the sub-block's qh word),
 * its ls in bits 12..14 and the delta's sign in bit 15. */
static DOT_ALWAYS_INLINE struct kq_block iq1_s_block(const struct block_iq1_s *b)
{
	const __m128i qh = _mm_loadu_si128((const __m128i *)b->qh);
	const __m128i ls = _mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7));
	struct kq_block k = iq_head(twice8(_mm_packus_epi16(ls, ls)), b->d);
	for (int c = 0; c < 4; c++) {
		const uint8_t *q = b->qs + 8 * c;
		const uint32_t h0 = b->qh[2 * c], h1 = b->qh[2 * c + 1], i[8] = {
			q[0] | (h0 << 8 & 0x700), q[1] | (h0 << 5 & 0x700), q[2] | (h0 << 2 & 0x700), q[3] | (h0 >> 1 & 0x700),
			q[4] | (h1 << 8 & 0x700), q[5] | (h1 << 5 & 0x700), q[6] | (h1 << 2 & 0x700), q[7] | (h1 >> 1 & 0x700),
		};
		const uint64_t neg = (h0 & 0x8000 ? 0xffffffffull : 0) | (h1 & 0x8000 ? 0xffffffff00000000ull : 0);

		k.q[c] = iq_quants(grid8((const uint8_t (*)[8])ref_iq1s_grid, i), _cvtu64_mask64(neg), 1);
	}
	return k;
}

/* iq1_m: 11-bit indices, 3 high bits and the delta's sign (bit 3) in a
 * nibble of qh per 8; a 3-bit ls per 16, four a scale word. */
static DOT_ALWAYS_INLINE struct kq_block iq1_m_block(const struct block_iq1_m *b)
{
	const __m256i sw = _mm256_permutexvar_epi16(_mm256_setr_epi16(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
						    _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)b->scales)));
	const __m256i ls = _mm256_and_si256(_mm256_srlv_epi16(sw, _mm256_setr_epi16(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0,
										   3, 6, 9)),
					    _mm256_set1_epi16(7));
	struct kq_block k = iq_head(ls, iq1_m_d(b));
	const __m512i shift = _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28);

	for (int c = 0; c < 4; c++) {
		const uint8_t *q = b->qs + 8 * c;
		const uint32_t h = iq_u32(b->qh + 4 * c), i[8] = {
			q[0] | (h << 8 & 0x700), q[1] | (h << 4 & 0x700), q[2] | (h & 0x700), q[3] | (h >> 4 & 0x700),
			q[4] | (h >> 8 & 0x700), q[5] | (h >> 12 & 0x700), q[6] | (h >> 16 & 0x700), q[7] | (h >> 20 & 0x700),
		};
		const __m512i nib = _mm512_srlv_epi64(_mm512_set1_epi64(h), shift);
		const __mmask8 neg8 = _mm512_test_epi64_mask(nib, _mm512_set1_epi64(8));

		k.q[c] = iq_quants(grid8((const uint8_t (*)[8])ref_iq1s_grid, i), _mm512_movepi8_mask(_mm512_movm_epi64(neg8)),
				   1);
	}
	return k;
}

/* The i-quant block of format f. */
static DOT_ALWAYS_INLINE struct kq_block iq_block(enum iq_format f, const void *b)
{
	switch (f) {
	case IQ_IQ2_XXS: return iq2_xxs_block(b);
	case IQ_IQ2_XS: return iq2_xs_block(b);
	case IQ_IQ2_S: return iq2_s_block(b);
	case IQ_IQ3_XXS: return iq3_xxs_block(b);
	case IQ_IQ3_S: return iq3_s_block(b);
	case IQ_IQ1_S: return iq1_s_block(b);
	default: return iq1_m_block(b);
	}
}

#define KQ_ROWS AVX512_KQ_DOT_ROWS

/* How the decoders lay out a block's quants in the 4 zmm (the top). */
enum kq_order { KQ_ELEMENTS, KQ_CRUMBS, KQ_NIBBLE_PAIRS };

static DOT_ALWAYS_INLINE enum kq_order kq_order(enum kq_format f)
{
	if (f == KQ_Q2_K || f == KQ_Q3_K || f == KQ_TQ2_0)
		return KQ_CRUMBS;
	return f == KQ_Q4_K || f == KQ_Q5_K ? KQ_NIBBLE_PAIRS : KQ_ELEMENTS;
}

/* The power of two the i-quants' integers leave out of d (iq_factor). */
static DOT_ALWAYS_INLINE float kq_factor(enum kq_format f)
{
	return kq_is_iq(f) ? iq_factor(kq_iq(f)) : 1.0f;
}

/* Block i of a row of format f. */
static DOT_ALWAYS_INLINE struct kq_block kq_decode(enum kq_format f, const void *row, int64_t i)
{
	const char *b = (const char *)row + i * kq_block_bytes(f);

	switch (f) {
	case KQ_Q2_K: return q2_K_block((const struct block_q2_K *)b);
	case KQ_Q3_K: return q3_K_block((const struct block_q3_K *)b);
	case KQ_Q4_K: return q4_K_block((const struct block_q4_K *)b);
	case KQ_Q5_K: return q5_K_block((const struct block_q5_K *)b);
	case KQ_Q6_K: return q6_K_block((const struct block_q6_K *)b);
	case KQ_TQ1_0: return tq1_0_block((const struct block_tq1_0 *)b);
	case KQ_TQ2_0: return tq2_0_block((const struct block_tq2_0 *)b);
	default: return iq_block(kq_iq(f), b);
	}
}

/* The scales of zmm c's groups as vpmaddwd meets its vpmaddubsw pair
 * sums, from scw (int16, group g's scale in word g): word w of zmm c is
 * scale 4c + w / 8 (groups of 16 in element order: q6_K), 2c + (w / 8) % 2
 * + 8(w / 16) (crumbs' order) or 4(c / 2) + c % 2 + 2(w / 16) (groups of
 * 32 in nibble_pairs' order). */
static DOT_ALWAYS_INLINE __m512i group_scales(enum kq_format f, __m512i scw, int c)
{
	const __m512i w = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,
					   13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	__m512i idx;

	if (kq_order(f) == KQ_NIBBLE_PAIRS)
		idx = _mm512_add_epi16(_mm512_slli_epi16(_mm512_srli_epi16(w, 4), 1),
				       _mm512_set1_epi16((short)(4 * (c / 2) + c % 2)));
	else if (kq_order(f) == KQ_CRUMBS) /* 2c + (w / 8) % 2 + 8(w / 16) */
		idx = _mm512_add_epi16(_mm512_add_epi16(_mm512_and_si512(_mm512_srli_epi16(w, 3), _mm512_set1_epi16(1)),
							_mm512_slli_epi16(_mm512_srli_epi16(w, 4), 3)),
				       _mm512_set1_epi16((short)(2 * c)));
	else
		idx = _mm512_add_epi16(_mm512_srli_epi16(w, 3), _mm512_set1_epi16((short)(4 * c)));
	return _mm512_permutexvar_epi16(idx, scw);
}

/* The bsums of groups of 32 in words 8..15 (int16: |Σ| < 32·128), zero
 * in 0..7: what q4_K's and q5_K's mins (words 8..15 of their bias) meet. */
static inline __m256i bsums32_high(__m256i bs)
{
	const __m256i p = _mm256_madd_epi16(bs, _mm256_set1_epi16(1)); /* 8 int32 */
	const __m256i w = _mm256_packs_epi32(p, p);                     /* qwords: p0-3 p0-3 p4-7 p4-7 */

	return _mm256_blend_epi32(_mm256_permute4x64_epi64(w, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_setzero_si256(), 0x0f);
}

/* acc + Σ sc·(u·x) over pairs of words, the pair sums of u·x in int16. */
static inline __m512i dot_scaled_acc(__m512i acc, __m512i u, __m512i x, __m512i sc)
{
#ifdef __AVX512VNNI__
	return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u, x), sc);
#else
	return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, x), sc));
#endif
}

/* Bytes ahead that kq_rows prefetches in each row, into L2
 * (dot_prefetch_rows_far, plugins/cpu/dot_kernel.h): measured on Zen 4 at
 * M = 1, K = 2048 (a q4_K row is 1152 bytes), prefetcht0 at 2048 bytes
 * left q4_K at 8-10 GB/s on one thread from DRAM, T1 at 8192 bytes 21-25
 * (q6_K 25-27); prefetching into L1 too evicts what the dots are reading. */
#define KQ_PREFETCH_AHEAD 8192

/* An activation block as every row meets it: its bytes in the decoders'
 * order, its bsums as the format's bias needs them, dx with the format's
 * factor. */
struct kq_x {
	__m512i q[4];
	__m256i bs;
	__m128 d;
};

static DOT_ALWAYS_INLINE struct kq_x kq_x_block(enum kq_format f, const struct block_q8_K *x)
{
	const __m256i bs16 = _mm256_loadu_si256((const __m256i *)x->bsums);
	struct kq_x v = {
		.bs = f == KQ_Q4_K || f == KQ_Q5_K ? bsums32_high(bs16) : bs16,
		.d = _mm_set1_ps(x->d * kq_factor(f)),
	};

	load_q8_K(x, v.q);
	if (kq_order(f) != KQ_ELEMENTS) { /* the decoders' orders, 32 elements at a time */
		const __m512i x0 = v.q[0], x1 = v.q[1], x2 = v.q[2], x3 = v.q[3];
		const int q2 = kq_order(f) == KQ_CRUMBS;
		/* crumbs': 0..31, 128..159 | 32..63, 160.. | 64.., 192.. | 96.., 224..;
		 * nibble_pairs': 0..31, 64..95 | 32..63, 96..127 | 128.., 192.. | 160.., 224.. */
		v.q[0] = _mm512_shuffle_i64x2(x0, q2 ? x2 : x1, _MM_SHUFFLE(1, 0, 1, 0));
		v.q[1] = _mm512_shuffle_i64x2(x0, q2 ? x2 : x1, _MM_SHUFFLE(3, 2, 3, 2));
		v.q[2] = _mm512_shuffle_i64x2(q2 ? x1 : x2, x3, _MM_SHUFFLE(1, 0, 1, 0));
		v.q[3] = _mm512_shuffle_i64x2(q2 ? x1 : x2, x3, _MM_SHUFFLE(3, 2, 3, 2));
	}
	return v;
}

/* One block of one row against one activation block into acc (and bacc,
 * the bias kept apart): the dot in int32 (vpmaddubsw, then vpmaddwd by
 * the int16 group scales), converted and scaled once. q3_K, q6_K, the
 * ternary and the i-quants (bias = sc, dbias = 2^k·d) fold the bias into
 * that integer sum; the others keep it apart (dmin). */
static DOT_ALWAYS_INLINE void kq_block_dot(enum kq_format f, const struct kq_block *k, const struct kq_x *x,
					   __m512 *acc, __m256 *bacc)
{
	const int fold = kq_fold(f);
	const __m128 dm = _mm_mul_ps(_mm_cvtph_ps(k->dh), x->d); /* d·dx, dmin·dx */
	const __m256i bias = _mm256_madd_epi16(k->bias, x->bs); /* Σ bias·Σ x, pairs of groups */
	const __m512i scw = _mm512_castsi256_si512(k->sc);
	__m512i isum = _mm512_madd_epi16(_mm512_maddubs_epi16(k->q[0], x->q[0]), group_scales(f, scw, 0));

	for (int c = 1; c < 4; c++)
		isum = dot_scaled_acc(isum, k->q[c], x->q[c], group_scales(f, scw, c));
	if (fold >= 0)
		isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(_mm256_slli_epi32(bias, fold)));
	else
		*bacc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bias), _mm256_broadcastss_ps(_mm_movehdup_ps(dm)), *bacc);
	*acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_broadcastss_ps(dm), *acc);
}

/* Activation rows a vec_dot_tile call takes (the formats whose decode
 * costs most: the ternary and the i-quants; M = 2..15 decoded each block
 * once per activation row without it). */
#define KQ_X_ROWS AVX512_KQ_X_ROWS

/* The body of every format (f a constant once inlined): `rows` weight
 * rows against `xrows` activation rows (xstride bytes apart), out[t·rows
 * + r]; each block decoded once per row for all activation rows, each
 * activation block read once for all rows. */
static DOT_ALWAYS_INLINE void kq_tile(enum kq_format f, int64_t n, const void *wv, int64_t stride, const void *xv,
				      int64_t xstride, float *out, const int rows, const int xrows)
{
	const int64_t nb = n / QK_K, bytes = kq_block_bytes(f);
	__m512 acc[KQ_X_ROWS][KQ_ROWS];
	__m256 bacc[KQ_X_ROWS][KQ_ROWS];

	FOR_X_ROWS(t) FOR_ROWS(r) {
		acc[t][r] = _mm512_setzero_ps();
		bacc[t][r] = _mm256_setzero_ps();
	}
	for (int64_t i = 0; i < nb; i++) {
		struct kq_x x[KQ_X_ROWS];

		FOR_X_ROWS(t)
			x[t] = kq_x_block(f, (const struct block_q8_K *)((const char *)xv + t * xstride) + i);
		dot_prefetch_rows_far(wv, stride, rows, nb * bytes, i * bytes, (int)bytes, KQ_PREFETCH_AHEAD);
		FOR_ROWS(r) {
			const struct kq_block k = kq_decode(f, dot_row_at(wv, stride, r), i);

			FOR_X_ROWS(t)
				kq_block_dot(f, &k, &x[t], &acc[t][r], &bacc[t][r]);
		}
	}
	FOR_X_ROWS(t) FOR_ROWS(r)
		out[t * rows + r] = _mm512_reduce_add_ps(acc[t][r]) - (kq_fold(f) >= 0 ? 0.0f : hsum256(bacc[t][r]));
}

static DOT_ALWAYS_INLINE void kq_rows(enum kq_format f, int64_t n, const void *wv, int64_t stride, const void *xv,
				      float *out, const int rows)
{
	kq_tile(f, n, wv, stride, xv, 0, out, rows, 1);
}

/* vec_dot `dot` and vec_dot_rows `dot_rows` of the format F. */
#define DEFINE_KQ(F, dot, dot_rows) \
	DEFINE_DOT_FAMILY_ENTRIES(dot, dot_rows, kq_rows, F, n / QK_K * kq_block_bytes(F), KQ_ROWS)

/* With a vec_dot_tile `dot_tile` of KQ_ROWS × KQ_X_ROWS. */
#define DEFINE_KQ_TILE(F, dot, dot_rows, dot_tile) \
	DEFINE_KQ(F, dot, dot_rows) DEFINE_DOT_FAMILY_TILE(dot_tile, kq_tile, F, KQ_ROWS, KQ_X_ROWS)

DEFINE_KQ(KQ_Q2_K, DOT_NAME(avx512vnni_vec_dot_q2_K, avx512_vec_dot_q2_K),
          DOT_NAME(avx512vnni_vec_dot_rows_q2_K, avx512_vec_dot_rows_q2_K))
DEFINE_KQ(KQ_Q3_K, DOT_NAME(avx512vnni_vec_dot_q3_K, avx512_vec_dot_q3_K),
          DOT_NAME(avx512vnni_vec_dot_rows_q3_K, avx512_vec_dot_rows_q3_K))
DEFINE_KQ(KQ_Q4_K, DOT_NAME(avx512vnni_vec_dot_q4_K, avx512_vec_dot_q4_K),
          DOT_NAME(avx512vnni_vec_dot_rows_q4_K, avx512_vec_dot_rows_q4_K))
DEFINE_KQ(KQ_Q5_K, DOT_NAME(avx512vnni_vec_dot_q5_K, avx512_vec_dot_q5_K),
          DOT_NAME(avx512vnni_vec_dot_rows_q5_K, avx512_vec_dot_rows_q5_K))
DEFINE_KQ(KQ_Q6_K, DOT_NAME(avx512vnni_vec_dot_q6_K, avx512_vec_dot_q6_K),
          DOT_NAME(avx512vnni_vec_dot_rows_q6_K, avx512_vec_dot_rows_q6_K))
DEFINE_KQ_TILE(KQ_TQ1_0, DOT_NAME(avx512vnni_vec_dot_tq1_0, avx512_vec_dot_tq1_0),
               DOT_NAME(avx512vnni_vec_dot_rows_tq1_0, avx512_vec_dot_rows_tq1_0),
               DOT_NAME(avx512vnni_vec_dot_tile_tq1_0, avx512_vec_dot_tile_tq1_0))
DEFINE_KQ_TILE(KQ_TQ2_0, DOT_NAME(avx512vnni_vec_dot_tq2_0, avx512_vec_dot_tq2_0),
               DOT_NAME(avx512vnni_vec_dot_rows_tq2_0, avx512_vec_dot_rows_tq2_0),
               DOT_NAME(avx512vnni_vec_dot_tile_tq2_0, avx512_vec_dot_tile_tq2_0))
DEFINE_KQ_TILE(KQ_IQ2_XXS, DOT_NAME(avx512vnni_vec_dot_iq2_xxs, avx512_vec_dot_iq2_xxs),
               DOT_NAME(avx512vnni_vec_dot_rows_iq2_xxs, avx512_vec_dot_rows_iq2_xxs),
               DOT_NAME(avx512vnni_vec_dot_tile_iq2_xxs, avx512_vec_dot_tile_iq2_xxs))
DEFINE_KQ_TILE(KQ_IQ2_XS, DOT_NAME(avx512vnni_vec_dot_iq2_xs, avx512_vec_dot_iq2_xs),
               DOT_NAME(avx512vnni_vec_dot_rows_iq2_xs, avx512_vec_dot_rows_iq2_xs),
               DOT_NAME(avx512vnni_vec_dot_tile_iq2_xs, avx512_vec_dot_tile_iq2_xs))
DEFINE_KQ_TILE(KQ_IQ2_S, DOT_NAME(avx512vnni_vec_dot_iq2_s, avx512_vec_dot_iq2_s),
               DOT_NAME(avx512vnni_vec_dot_rows_iq2_s, avx512_vec_dot_rows_iq2_s),
               DOT_NAME(avx512vnni_vec_dot_tile_iq2_s, avx512_vec_dot_tile_iq2_s))
DEFINE_KQ_TILE(KQ_IQ3_XXS, DOT_NAME(avx512vnni_vec_dot_iq3_xxs, avx512_vec_dot_iq3_xxs),
               DOT_NAME(avx512vnni_vec_dot_rows_iq3_xxs, avx512_vec_dot_rows_iq3_xxs),
               DOT_NAME(avx512vnni_vec_dot_tile_iq3_xxs, avx512_vec_dot_tile_iq3_xxs))
DEFINE_KQ_TILE(KQ_IQ3_S, DOT_NAME(avx512vnni_vec_dot_iq3_s, avx512_vec_dot_iq3_s),
               DOT_NAME(avx512vnni_vec_dot_rows_iq3_s, avx512_vec_dot_rows_iq3_s),
               DOT_NAME(avx512vnni_vec_dot_tile_iq3_s, avx512_vec_dot_tile_iq3_s))
DEFINE_KQ_TILE(KQ_IQ1_S, DOT_NAME(avx512vnni_vec_dot_iq1_s, avx512_vec_dot_iq1_s),
               DOT_NAME(avx512vnni_vec_dot_rows_iq1_s, avx512_vec_dot_rows_iq1_s),
               DOT_NAME(avx512vnni_vec_dot_tile_iq1_s, avx512_vec_dot_tile_iq1_s))
DEFINE_KQ_TILE(KQ_IQ1_M, DOT_NAME(avx512vnni_vec_dot_iq1_m, avx512_vec_dot_iq1_m),
               DOT_NAME(avx512vnni_vec_dot_rows_iq1_m, avx512_vec_dot_rows_iq1_m),
               DOT_NAME(avx512vnni_vec_dot_tile_iq1_m, avx512_vec_dot_tile_iq1_m))
