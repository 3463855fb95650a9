/* The K-quants (q2_K, q3_K, q4_K, q5_K, q6_K) against q8_K activations,
 * in integer arithmetic as matmul_quant_avx512.c's (built twice the same
 * way, avx512_dot.h). One body for the five: a format decodes a block
 * into its 256 quants as unsigned bytes (4 zmm in element order), the 16
 * scales of its groups of 16 (q4_K and q5_K: each of their 8 scales of 32
 * twice) and the coefficient of each group's Σ x, and
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
 *
 * Every pair sum of vpmaddubsw stays below 2^15 (63·127·2 at most).
 */
#include <stddef.h>
#include <string.h>

#include "avx512_dot.h"

/* One block as the body meets it. */
struct kq_block {
	__m512i q[4];   /* the 256 quants, unsigned, 64 a zmm in element order */
	__m128i sc;     /* the 16 groups' scales, int8 */
	__m256i bias;   /* the 16 groups' coefficients of Σ x, int16 */
	float d, dbias; /* the factors of the scales and of the bias (× dx later) */
};

/* q2_K's and q3_K's 2-bit fields: element 128h + 32s + l (s < 4, l < 32)
 * is (qs[32h + l] >> 2s) & 3, so zmm 2h + t (elements 128h + 64t ..) is
 * [qs | qs >> 2] of the half's 32 bytes, shifted by 4t. */
static inline void crumb_quarters(const uint8_t qs[64], __m512i q[4])
{
	const __m512i m3 = _mm512_set1_epi8(3);

	for (int h = 0; h < 2; h++) {
		const __m512i b = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(qs + 32 * h)));
		const __m512i v = _mm512_mask_srli_epi16(b, 0xffff0000u, b, 2);

		q[2 * h] = _mm512_and_si512(v, m3);
		q[2 * h + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m3);
	}
}

/* Adds `value` to the quants of zmm c (elements 64c ..) whose high bit is
 * set in the 32 bytes hb (q3_K's hmask, q5_K's qh): bit 2c of hb[l] for
 * element 64c + l, bit 2c + 1 for element 64c + 32 + l (l < 32). */
static inline void add_high_bits(const uint8_t hb[32], __m512i q[4], int value)
{
	const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)hb));

	for (int c = 0; c < 4; c++) {
		const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << 2 * c)),
						       _mm256_set1_epi8((char)(2 << 2 * c)), 1);

		q[c] = _mm512_mask_add_epi8(q[c], _mm512_test_epi8_mask(h, bit), q[c], _mm512_set1_epi8((char)value));
	}
}

static DOT_ALWAYS_INLINE struct kq_block q2_K_block(const struct block_q2_K *b)
{
	const __m128i s = _mm_loadu_si128((const __m128i *)b->scales), m4 = _mm_set1_epi8(0x0f);
	struct kq_block k = {
		.sc = _mm_and_si128(s, m4),
		.bias = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4)),
		.d = f16_scalar(b->d),
		.dbias = f16_scalar(b->dmin),
	};

	crumb_quarters(b->qs, k.q);
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

	k.sc = _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
	k.bias = _mm256_cvtepi8_epi16(k.sc);
	k.d = f16_scalar(b->d);
	k.dbias = 4.0f * k.d;
	crumb_quarters(b->qs, k.q);
	add_high_bits(b->hmask, k.q, 4);
	return k;
}

/* q4_K's and q5_K's scales and mins (q5_K's head is q4_K's), each twice. */
_Static_assert(offsetof(struct block_q5_K, scales) == offsetof(struct block_q4_K, scales) &&
	       offsetof(struct block_q5_K, dmin) == offsetof(struct block_q4_K, dmin), "q5_K head");

static DOT_ALWAYS_INLINE struct kq_block k4_block(const struct block_q4_K *b)
{
	uint8_t sc[8], m[8];

	q4_K_scales(b, sc, m);

	const __m128i s8 = _mm_loadl_epi64((const __m128i *)sc), m8 = _mm_loadl_epi64((const __m128i *)m);

	return (struct kq_block){
		.sc = _mm_unpacklo_epi8(s8, s8),
		.bias = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8)),
		.d = f16_scalar(b->d),
		.dbias = f16_scalar(b->dmin),
	};
}

static DOT_ALWAYS_INLINE struct kq_block q4_K_block(const struct block_q4_K *b)
{
	struct kq_block k = k4_block(b);

	for (int j = 0; j < 4; j++)
		k.q[j] = q4_K_quarter(b, j);
	return k;
}

/* As q4_K (low nibbles of qs[32j ..], then high ones) plus the qh bits. */
static DOT_ALWAYS_INLINE struct kq_block q5_K_block(const struct block_q5_K *b)
{
	struct kq_block k = k4_block((const struct block_q4_K *)b);

	for (int j = 0; j < 4; j++) {
		const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b->qs + 32 * j)));

		k.q[j] = _mm512_and_si512(_mm512_mask_srli_epi16(q, 0xffff0000u, q, 4), _mm512_set1_epi8(0x0f));
	}
	add_high_bits(b->qh, k.q, 16);
	return k;
}

static DOT_ALWAYS_INLINE struct kq_block q6_K_block(const struct block_q6_K *b)
{
	struct kq_block k;

	k.sc = _mm_loadu_si128((const __m128i *)b->scales);
	k.bias = _mm256_cvtepi8_epi16(k.sc);
	k.d = f16_scalar(b->d);
	k.dbias = 32.0f * k.d;
	q6_K_half(b, 0, &k.q[0], &k.q[1]);
	q6_K_half(b, 1, &k.q[2], &k.q[3]);
	return k;
}

enum kq_format { KQ_Q2_K, KQ_Q3_K, KQ_Q4_K, KQ_Q5_K, KQ_Q6_K };

static DOT_ALWAYS_INLINE int64_t kq_block_bytes(enum kq_format f)
{
	static const int64_t bytes[] = {
		sizeof(struct block_q2_K), sizeof(struct block_q3_K), sizeof(struct block_q4_K),
		sizeof(struct block_q5_K), sizeof(struct block_q6_K),
	};

	return bytes[f];
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
	default: return q6_K_block((const struct block_q6_K *)b);
	}
}

/* The body of every format (f a constant once inlined): the activation's
 * bytes and bsums once per block for all rows; per row the scales in f32
 * per group of 16 (spread_scales), the bias in integers per block. */
static DOT_ALWAYS_INLINE void kq_rows(enum kq_format f, int64_t n, const void *wv, int64_t stride, const void *xv,
				  float *out, const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K, bytes = kq_block_bytes(f);
	__m512 acc[DOT_ROWS][2];
	__m256 bacc[DOT_ROWS];

	FOR_ROWS(r) {
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
		bacc[r] = _mm256_setzero_ps();
	}
	for (int64_t i = 0; i < nb; i++) {
		const __m256i bs = _mm256_loadu_si256((const __m256i *)x[i].bsums);
		__m512i xq[4];

		load_q8_K(&x[i], xq);
		dot_prefetch_rows(wv, stride, rows, nb * bytes, i * bytes, (int)bytes);
		FOR_ROWS(r) {
			const struct kq_block k = kq_decode(f, dot_row_at(wv, stride, r), i);
			const __m256i bias = _mm256_madd_epi16(k.bias, bs); /* Σ bias·Σ x, pairs of groups */
			const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(k.d * x[i].d),
							    _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(k.sc)));

			bacc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bias), _mm256_set1_ps(k.dbias * x[i].d), bacc[r]);
			for (int c = 0; c < 4; c++)
				acc[r][c & 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(k.q[c], xq[c])),
								spread_scales(scales, 4 * c, 4), acc[r][c & 1]);
		}
	}
	FOR_ROWS(r)
		out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1])) - hsum256(bacc[r]);
}

#define DEFINE_KQ(t, F)                                                                              \
	static DOT_ALWAYS_INLINE void t##_rows(int64_t n, const void *wv, int64_t stride, const void *xv, \
					   float *out, const int rows)                                  \
	{                                                                                           \
		kq_rows(F, n, wv, stride, xv, out, rows);                                           \
	}                                                                                           \
	DEFINE_DOT_ENTRIES(ISA, t, n / QK_K * kq_block_bytes(F), DOT_ROWS)

DEFINE_KQ(q2_K, KQ_Q2_K)
DEFINE_KQ(q3_K, KQ_Q3_K)
DEFINE_KQ(q4_K, KQ_Q4_K)
DEFINE_KQ(q5_K, KQ_Q5_K)
DEFINE_KQ(q6_K, KQ_Q6_K)
