/* The K-quants (q2_K, q3_K, q4_K, q5_K, q6_K), the ternary formats and the
 * i-quants below 4 bits against q8_K activations, in integer arithmetic,
 * one body for all (kq_formats.h) as cpu-avx512's matmul_kquant_avx512.c
 * (the formulas are its): a format decodes a block
 * into its 256 quants as unsigned bytes (8 ymm of 32 in element order),
 * the 16 scales of its groups of 16 (q4_K and q5_K: each of their 8
 * scales of 32 twice) and the coefficient of each group's Σ x, and
 *
 *   Σ y·x = d·dx·Σ_g sc_g·Σ_g u·x − dbias·dx·Σ_g bias_g·Σ_g x
 *
 * with Σ_g u·x by vpmaddubsw and sc_g on the vpmaddwd that follows (u ≤ 126:
 * every pair sum stays below 2^15), Σ_g x the activation's bsums:
 *
 *   q2_K  y = d·sc·u − dmin·m       u 0..3:  bias m,  dbias dmin
 *   q3_K  y = d·sc·(u − 4)          u 0..7 (the hmask bit as 4): bias sc, dbias 4·d
 *   q4_K  y = d·sc·u − dmin·m       u 0..15: bias m,  dbias dmin
 *   q5_K  y = d·sc·u − dmin·m       u 0..31 (the qh bit as 16)
 *   q6_K  y = d·sc·(u − 32)         u 0..63: bias sc, dbias 32·d
 *
 * and the others of matmul_kquant_avx512.c's list. (q3_K, q6_K, the ternary
 * and the i-quants subtract their bias in integers: dbias = 2^s·d, kq_fold;
 * the i-quants' own factor 1/8, 1/4 rides on d.)
 *
 * vpmaddubsw in both of the plugin's tables (avx2_dot.h): built once, as
 * avx2_*.
 */
#include <stddef.h>

#include "avx2_dot.h"
#include "kq_formats.h"

/* One block as the body meets it. */
struct kq_block {
	__m256i q[8];   /* the 256 quants, unsigned, 32 a ymm in element order */
	__m256i sc;     /* the 16 groups' scales, i16: even groups, then odd */
	__m256i bias;   /* the 16 groups' coefficients of Σ x, i16, in order */
	float d, dbias; /* the factors of the scales and of the bias (× dx later) */
};

/* 16 int8 group scales in group order to the i16 form of kq_block.sc:
 * lanes 0..7 groups 0, 2, .., 14, lanes 8..15 groups 1, 3, .., 15, so that
 * splat16(sc, c) is chunk c's: groups 2c (its elements 0..15) and 2c + 1. */
static inline __m256i kq_scales16(__m128i sc8)
{
	return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11,
									13, 15)));
}

/* q3_K's and q6_K's head: 16 signed group scales sc8, each its group's
 * bias too (dbias 2^s·d, kq_fold). */
static DOT_ALWAYS_INLINE struct kq_block kq_signed_scales(__m128i sc8, uint16_t d)
{
	return (struct kq_block){ .sc = kq_scales16(sc8), .bias = _mm256_cvtepi8_epi16(sc8), .d = f16(d) };
}

/* Bit c of every byte of hb moved to bit b (c, b < 8), the others 0. */
static DOT_ALWAYS_INLINE __m256i bit_to(__m256i hb, int c, int b)
{
	const __m256i v = c < b ? _mm256_slli_epi16(hb, b - c) : _mm256_srli_epi16(hb, c - b);

	return _mm256_and_si256(v, _mm256_set1_epi8((char)(1 << b)));
}

/* Adds 2^b to the quants of chunk c (elements 32c ..) whose bit c is set
 * in hb[l] (q3_K's hmask, q5_K's qh; l < 32). */
static DOT_ALWAYS_INLINE void add_high_bits(const uint8_t hb[32], __m256i q[8], int b)
{
	const __m256i h = _mm256_loadu_si256((const __m256i *)hb);

	for (int c = 0; c < 8; c++)
		q[c] = _mm256_or_si256(q[c], bit_to(h, c, b));
}

/* q2_K's and q3_K's 2-bit fields: element 128h + 32s + l is
 * (qs[32h + l] >> 2s) & 3, chunk 4h + s. */
static DOT_ALWAYS_INLINE void crumbs(const uint8_t qs[64], __m256i q[8])
{
	for (int h = 0; h < 2; h++) {
		const __m256i b = _mm256_loadu_si256((const __m256i *)(qs + 32 * h));

		for (int s = 0; s < 4; s++)
			q[4 * h + s] = _mm256_and_si256(_mm256_srli_epi16(b, 2 * s), _mm256_set1_epi8(3));
	}
}

/* q4_K's and q5_K's 4-bit fields: chunk 2j the low nibbles of
 * qs[32j ..], 2j + 1 the high ones. */
static DOT_ALWAYS_INLINE void nibble_chunks(const uint8_t qs[128], __m256i q[8])
{
	const __m256i low4 = _mm256_set1_epi8(0x0f);

	for (int j = 0; j < 4; j++) {
		const __m256i b = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));

		q[2 * j] = _mm256_and_si256(b, low4);
		q[2 * j + 1] = _mm256_and_si256(_mm256_srli_epi16(b, 4), low4);
	}
}

static DOT_ALWAYS_INLINE struct kq_block q2_K_block(const struct block_q2_K *b)
{
	const __m128i s = _mm_loadu_si128((const __m128i *)b->scales), m4 = _mm_set1_epi8(0x0f);
	struct kq_block k = {
		.sc = kq_scales16(_mm_and_si128(s, m4)),
		.bias = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4)),
		.d = f16(b->d),
		.dbias = f16(b->dmin),
	};

	crumbs(b->qs, k.q);
	return k;
}

/* q3_K's 16 6-bit scales (SPEC/QUANT.md), four a 32-bit word: the low
 * nibbles of bytes 0..7 then their high nibbles, with bits 2j, 2j + 1 of
 * bytes 8..11 as bits 4, 5 of scales 4j .. 4j + 3. */
static DOT_ALWAYS_INLINE __m128i q3_K_scales(const uint8_t s[12])
{
	const uint32_t low4 = 0x0f0f0f0f, low2 = 0x03030303;
	uint32_t u[3];

	memcpy(u, s, sizeof(u));
	return _mm_setr_epi32((int)((u[0] & low4) | (u[2] & low2) << 4),
			      (int)((u[1] & low4) | ((u[2] >> 2) & low2) << 4),
			      (int)(((u[0] >> 4) & low4) | ((u[2] >> 4) & low2) << 4),
			      (int)(((u[1] >> 4) & low4) | ((u[2] >> 6) & low2) << 4));
}

static DOT_ALWAYS_INLINE struct kq_block q3_K_block(const struct block_q3_K *b)
{
	struct kq_block k = kq_signed_scales(_mm_sub_epi8(q3_K_scales(b->scales), _mm_set1_epi8(32)), b->d);

	crumbs(b->qs, k.q);
	add_high_bits(b->hmask, k.q, 2);
	return k;
}

/* q4_K's and q5_K's scales (each scale of 32 is both groups', and chunk
 * c's is scale c: [s0 .. s7] in both halves) and mins (each twice). */
_Static_assert(offsetof(struct block_q5_K, scales) == offsetof(struct block_q4_K, scales) &&
	       offsetof(struct block_q5_K, dmin) == offsetof(struct block_q4_K, dmin), "q5_K head");

static DOT_ALWAYS_INLINE struct kq_block k4_block(const struct block_q4_K *b)
{
	uint32_t sm[4];

	k4_scales_mins(b->scales, sm);

	const __m128i s8 = _mm_set_epi32(0, 0, (int)sm[1], (int)sm[0]), m8 = _mm_set_epi32(0, 0, (int)sm[3], (int)sm[2]);

	return (struct kq_block){
		.sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(s8)),
		.bias = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8)),
		.d = f16(b->d),
		.dbias = f16(b->dmin),
	};
}

static DOT_ALWAYS_INLINE struct kq_block q4_K_block(const struct block_q4_K *b)
{
	struct kq_block k = k4_block(b);

	nibble_chunks(b->qs, k.q);
	return k;
}

static DOT_ALWAYS_INLINE struct kq_block q5_K_block(const struct block_q5_K *b)
{
	struct kq_block k = k4_block((const struct block_q4_K *)b);

	nibble_chunks(b->qs, k.q);
	add_high_bits(b->qh, k.q, 4);
	return k;
}

/* q6_K: half h's chunks 4h .. 4h + 3 are a nibble of ql[64h ..] (low of
 * the first 32 bytes, low of the next 32, high, high) and 2 bits of
 * qh[32h ..] (bits 0-1, 2-3, 4-5, 6-7) as bits 4-5. */
static DOT_ALWAYS_INLINE struct kq_block q6_K_block(const struct block_q6_K *b)
{
	const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
	struct kq_block k = kq_signed_scales(_mm_loadu_si128((const __m128i *)b->scales), b->d);

	for (int h = 0; h < 2; h++) {
		const uint8_t *ql = b->ql + 64 * h;
		const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
		const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
		const __m256i hb = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));

		k.q[4 * h] = _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45));
		k.q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(l1, low4),
						 _mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45));
		k.q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
						 _mm256_and_si256(hb, bits45));
		k.q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
						 _mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45));
	}
	return k;
}

/* The ternary formats, y = d·(u − 1) with u 0..2: every group's scale
 * and bias 1 (kq_fold 0). */
static DOT_ALWAYS_INLINE struct kq_block tq_head(uint16_t d)
{
	return (struct kq_block){ .sc = _mm256_set1_epi16(1), .bias = _mm256_set1_epi16(1), .d = f16(d) };
}

/* tq2_0's 2-bit fields are q2_K's. */
static DOT_ALWAYS_INLINE struct kq_block tq2_0_block(const struct block_tq2_0 *b)
{
	struct kq_block k = tq_head(b->d);

	crumbs(b->qs, k.q);
	return k;
}

/* tq1_0's trits of the bytes of b, pw the power of 3 of each 16-bit word:
 * cpu-avx512's trits (matmul_kquant_avx512.c gives the formula), its
 * unsigned compares by vpmaxub. */
static inline __m256i trits(__m256i b, __m256i pw)
{
	const __m256i lo = _mm256_mullo_epi16(b, pw);
	const __m256i hi = _mm256_mullo_epi16(_mm256_and_si256(b, _mm256_set1_epi16((short)0xff00)), pw);
	const __m256i q = _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi16(0xff)), hi);
	const __m256i gt85 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8(86)), q);
	const __m256i gt170 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8((char)171)), q);

	return _mm256_sub_epi8(_mm256_setzero_si256(), _mm256_add_epi8(gt85, gt170));
}

/* tq1_0 in element order: chunks 0..4 are trits 0..4 of qs[0..31],
 * elements 160..239 trits 0..4 of qs[32..47] (16 a trit), 240..255 trits
 * 0..3 of qh[0..3]; each 16 bytes of a chunk with its own power of 3. */
static DOT_ALWAYS_INLINE struct kq_block tq1_0_block(const struct block_tq1_0 *b)
{
	struct kq_block k = tq_head(b->d);
	const __m256i q0 = _mm256_loadu_si256((const __m256i *)b->qs);
	const __m128i q1 = _mm_loadu_si128((const __m128i *)(b->qs + 32));
	const __m256i q11 = _mm256_broadcastsi128_si256(q1);

	for (int c = 0, p = 1; c < 5; c++, p *= 3)
		k.q[c] = trits(q0, _mm256_set1_epi16((short)p));
	k.q[5] = trits(q11, _mm256_setr_m128i(_mm_set1_epi16(1), _mm_set1_epi16(3)));
	k.q[6] = trits(q11, _mm256_setr_m128i(_mm_set1_epi16(9), _mm_set1_epi16(27)));
	k.q[7] = trits(_mm256_setr_m128i(q1, _mm_set1_epi32((int)iq_u32(b->qh))),
		       _mm256_setr_epi16(81, 81, 81, 81, 81, 81, 81, 81, 1, 1, 3, 3, 9, 9, 27, 27));
	return k;
}

/* The i-quants (iq_subblocks.h), a sub-block of 32 a chunk: its grid
 * entries made unsigned for vpmaddubsw with an offset that the bias
 * takes out (kq_fold): iq2/iq3 64 ± grid (2..126), iq1
 * 8·(grid + 2) ± 1 (7..25, the delta times 8), − where the sign bit is. */
static DOT_ALWAYS_INLINE __m256i iq_chunk(struct iq_sub s, int entry_bytes, int iq1)
{
	const __m256i neg = bits_to_byte_mask(s.signs);
	__m128i h[2];

	/* the entries loaded straight into vector registers */
	for (int k = 0; k < 2; k++) {
		if (entry_bytes == 8) {
			h[k] = _mm_insert_epi64(_mm_loadl_epi64((const __m128i *)s.entry[2 * k]),
						(long long)iq_grid8(s.entry[2 * k + 1]), 1);
		} else {
			/* not _mm_insert_epi32 in a loop: its lane must be a constant */
			h[k] = _mm_setr_epi32((int)iq_u32(s.entry[4 * k]), (int)iq_u32(s.entry[4 * k + 1]),
					      (int)iq_u32(s.entry[4 * k + 2]), (int)iq_u32(s.entry[4 * k + 3]));
		}
	}

	const __m256i g = _mm256_setr_m128i(h[0], h[1]);
	const __m256i base = iq1 ? _mm256_slli_epi16(_mm256_add_epi8(g, _mm256_set1_epi8(2)), 3) /* 8..24: no carry */
				 : _mm256_set1_epi8(64);
	const __m256i mag = iq1 ? _mm256_set1_epi8(1) : g;

	return _mm256_blendv_epi8(_mm256_add_epi8(base, mag), _mm256_sub_epi8(base, mag), neg);
}

/* An i-quant block: each group's scale its bias too, d with the format's
 * power of two. */
static DOT_ALWAYS_INLINE struct kq_block iq_block(enum iq_format f, const void *b)
{
	uint64_t sc[2] = { 0, 0 };
	struct kq_block k;

	/* unrolled: sc in registers (a loop kept it in memory, and its
	 * 16-byte reload missed store forwarding) */
	_Pragma("GCC unroll 8") for (int c = 0; c < 8; c++) {
		const struct iq_sub s = iq_sub_of(f, b, c);

		k.q[c] = iq_chunk(s, iq_entry_bytes(f), iq_is_iq1(f));
		sc[c / 4] |= (uint64_t)(s.scale[0] | s.scale[1] << 8) << 16 * (c % 4);
	}

	const __m128i sc8 = _mm_set_epi64x((long long)sc[1], (long long)sc[0]);

	k.sc = kq_scales16(sc8);
	k.bias = _mm256_cvtepu8_epi16(sc8);
	k.d = f16(iq_d(f, b)) * iq_factor(f);
	k.dbias = 0.0f;
	return k;
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

/* The body of every format (f a constant once inlined): `rows` weight
 * rows against `xrows` activation rows (xstride bytes apart), out[t·rows
 * + r]; each block decoded once per row for all activation rows, the
 * activations' bsums once per block for all rows, their bytes read from L1
 * by each row. */
/* Bytes ahead that the K-quant bodies prefetch in each row, into L2 (as
 * cpu-avx512's, plugins/cpu-avx512/matmul_kquant_avx512.c: prefetcht0 at
 * 2 KiB could not keep a Zen 4 core's loads in flight from DRAM). */
#define KQ_PREFETCH_AHEAD 8192

static DOT_ALWAYS_INLINE void kq_tile(enum kq_format f, int64_t n, const void *wv, int64_t stride, const void *xv,
				      int64_t xstride, float *out, const int rows, const int xrows)
{
	const int64_t nb = n / QK_K, bytes = kq_block_bytes(f);
	const int shift = kq_fold(f);
	__m256 acc[AVX2_KQ_X_ROWS][DOT_ROWS], bacc[AVX2_KQ_X_ROWS][DOT_ROWS];

	FOR_X_ROWS(t) FOR_ROWS(r)
		acc[t][r] = bacc[t][r] = _mm256_setzero_ps();
	for (int64_t i = 0; i < nb; i++) {
		const struct block_q8_K *x[AVX2_KQ_X_ROWS];
		__m256i bs[AVX2_KQ_X_ROWS];

		FOR_X_ROWS(t) {
			x[t] = (const struct block_q8_K *)((const char *)xv + t * xstride) + i;
			bs[t] = _mm256_loadu_si256((const __m256i *)x[t]->bsums);
		}
		dot_prefetch_rows_far(wv, stride, rows, nb * bytes, i * bytes, (int)bytes, KQ_PREFETCH_AHEAD);
		FOR_ROWS(r) {
			const struct kq_block k = kq_decode(f, dot_row_at(wv, stride, r), i);

			FOR_X_ROWS(t) {
				const __m256i bias = _mm256_madd_epi16(k.bias, bs[t]); /* Σ bias·Σ x, pairs of groups */
				__m256i sum = _mm256_setzero_si256();

				for (int c = 0; c < 8; c++)
					sum = _mm256_add_epi32(sum, dot_u8s8_scaled(k.q[c],
						_mm256_loadu_si256((const __m256i *)(x[t]->qs + 32 * c)), splat16(k.sc, c)));
				if (shift >= 0)
					sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(bias, shift));
				else
					bacc[t][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bias), _mm256_set1_ps(k.dbias * x[t]->d),
								     bacc[t][r]);
				acc[t][r] = _mm256_fmadd_ps(_mm256_set1_ps(k.d * x[t]->d), _mm256_cvtepi32_ps(sum), acc[t][r]);
			}
		}
	}
	FOR_X_ROWS(t) FOR_ROWS(r)
		out[t * rows + r] = hsum_ps(_mm256_sub_ps(acc[t][r], bacc[t][r]));
}

static DOT_ALWAYS_INLINE void kq_rows(enum kq_format f, int64_t n, const void *wv, int64_t stride, const void *xv,
				      float *out, const int rows)
{
	kq_tile(f, n, wv, stride, xv, 0, out, rows, 1);
}

/* vec_dot `dot` and vec_dot_rows `dot_rows` of the format F. */
#define DEFINE_KQ(F, dot, dot_rows) \
	DEFINE_DOT_FAMILY_ENTRIES(dot, dot_rows, kq_rows, F, n / QK_K * kq_block_bytes(F), DOT_ROWS)

/* With a vec_dot_tile `dot_tile` of DOT_ROWS × AVX2_KQ_X_ROWS. */
#define DEFINE_KQ_TILE(F, dot, dot_rows, dot_tile) \
	DEFINE_KQ(F, dot, dot_rows) DEFINE_DOT_FAMILY_TILE(dot_tile, kq_tile, F, DOT_ROWS, AVX2_KQ_X_ROWS)

DEFINE_KQ(KQ_Q2_K, avx2_vec_dot_q2_K, avx2_vec_dot_rows_q2_K)
DEFINE_KQ(KQ_Q3_K, avx2_vec_dot_q3_K, avx2_vec_dot_rows_q3_K)
DEFINE_KQ(KQ_Q4_K, avx2_vec_dot_q4_K, avx2_vec_dot_rows_q4_K)
DEFINE_KQ(KQ_Q5_K, avx2_vec_dot_q5_K, avx2_vec_dot_rows_q5_K)
DEFINE_KQ(KQ_Q6_K, avx2_vec_dot_q6_K, avx2_vec_dot_rows_q6_K)
DEFINE_KQ_TILE(KQ_TQ1_0, avx2_vec_dot_tq1_0, avx2_vec_dot_rows_tq1_0, avx2_vec_dot_tile_tq1_0)
DEFINE_KQ(KQ_TQ2_0, avx2_vec_dot_tq2_0, avx2_vec_dot_rows_tq2_0) /* a tile gained nothing: its decode is cheap */
DEFINE_KQ_TILE(KQ_IQ2_XXS, avx2_vec_dot_iq2_xxs, avx2_vec_dot_rows_iq2_xxs, avx2_vec_dot_tile_iq2_xxs)
DEFINE_KQ_TILE(KQ_IQ2_XS, avx2_vec_dot_iq2_xs, avx2_vec_dot_rows_iq2_xs, avx2_vec_dot_tile_iq2_xs)
DEFINE_KQ_TILE(KQ_IQ2_S, avx2_vec_dot_iq2_s, avx2_vec_dot_rows_iq2_s, avx2_vec_dot_tile_iq2_s)
DEFINE_KQ_TILE(KQ_IQ3_XXS, avx2_vec_dot_iq3_xxs, avx2_vec_dot_rows_iq3_xxs, avx2_vec_dot_tile_iq3_xxs)
DEFINE_KQ_TILE(KQ_IQ3_S, avx2_vec_dot_iq3_s, avx2_vec_dot_rows_iq3_s, avx2_vec_dot_tile_iq3_s)
DEFINE_KQ_TILE(KQ_IQ1_S, avx2_vec_dot_iq1_s, avx2_vec_dot_rows_iq1_s, avx2_vec_dot_tile_iq1_s)
DEFINE_KQ_TILE(KQ_IQ1_M, avx2_vec_dot_iq1_m, avx2_vec_dot_rows_iq1_m, avx2_vec_dot_tile_iq1_m)
