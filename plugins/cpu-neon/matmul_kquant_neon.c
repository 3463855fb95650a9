/* The 256-element formats against q8_K activations: the K-quants (q2_K,
 * q3_K, q4_K, q5_K, q6_K) and iq4_xs, in integer arithmetic (the
 * vocabulary of neon_dot.h, built twice the same way). One body for the
 * six: a format decodes a block into its 256 quants as signed bytes (16
 * vectors, one group of 16 elements each, in element order), the 16
 * groups' scales and the coefficient of each group's Σ x, and
 *
 *   Σ y·x = d·dx·Σ_g sc_g·Σ_g q·x − dbias·dx·Σ_g bias_g·Σ_g x
 *
 * with q·x the s8×s8 dots, the scaled sum kept in int32 per block, Σ_g x
 * the activation's bsums; per format (y the decoded weight):
 *
 *   q2_K    y = d·sc·q − dmin·m    q 0..3:  bias m,  dbias dmin
 *   q3_K    y = d·sc·(q − 4)       q 0..7 (the hmask bit as 4): bias sc, dbias 4·d
 *   q4_K    y = d·sc·q − dmin·m    q 0..15: bias m,  dbias dmin
 *   q5_K    y = d·sc·q − dmin·m    q 0..31 (the qh bit as 16)
 *   q6_K    y = d·sc·(q − 32)      q 0..63: bias sc, dbias 32·d
 *   iq4_xs  y = d·(ls − 32)·T[q]   T[q] −127..113: no bias
 *
 * (q4_K, q5_K and iq4_xs have a scale per 32 elements: each twice.) The
 * int32 sum of a block stays below 2^28 (63·127·16 per group, |sc| < 128).
 */
#include <stddef.h>
#include <string.h>

#include "neon_dot.h"

/* One block as the body meets it. */
struct kq_block {
	int8x16_t q[16];  /* the 256 quants, group g (elements 16g ..) in q[g] */
	int8_t sc[16];    /* the groups' scales */
	int16_t bias[16]; /* the groups' coefficients of Σ x */
	float d, dbias;   /* the factors of the scales and of the bias (× dx later) */
};

/* The 16 bytes at p shifted right by s (a variable count: vshl by −s). */
static inline uint8x16_t shr_bytes(const uint8_t *p, int s)
{
	return vshlq_u8(vld1q_u8(p), vdupq_n_s8((int8_t)-s));
}

/* q2_K's and q3_K's 2-bit fields: element 128h + 32s + l (s < 4, l < 32)
 * is (qs[32h + l] >> 2s) & 3, in group 8h + 2s + l / 16. */
static DOT_ALWAYS_INLINE void crumbs(const uint8_t qs[64], int8x16_t q[16])
{
	for (int h = 0; h < 2; h++)
		for (int s = 0; s < 4; s++)
			for (int t = 0; t < 2; t++)
				q[8 * h + 2 * s + t] = vreinterpretq_s8_u8(
					vandq_u8(shr_bytes(qs + 32 * h + 16 * t, 2 * s), vdupq_n_u8(3)));
}

/* Adds `value` to the quants whose high bit is set in the 32 bytes hb
 * (q3_K's hmask, q5_K's qh): bit k of hb[l] (l < 32) for element 32k + l,
 * in group 2k + l / 16. */
static DOT_ALWAYS_INLINE void add_high_bits(const uint8_t hb[32], int8x16_t q[16], uint8_t value)
{
	for (int t = 0; t < 2; t++) {
		const uint8x16_t h = vld1q_u8(hb + 16 * t);

		for (int k = 0; k < 8; k++) {
			const uint8x16_t set = vtstq_u8(h, vdupq_n_u8((uint8_t)(1 << k)));

			q[2 * k + t] = vaddq_s8(q[2 * k + t], vreinterpretq_s8_u8(vandq_u8(set, vdupq_n_u8(value))));
		}
	}
}

static DOT_ALWAYS_INLINE void q2_K_block(const struct block_q2_K *b, struct kq_block *k)
{
	for (int g = 0; g < 16; g++) {
		k->sc[g] = (int8_t)(b->scales[g] & 15);
		k->bias[g] = b->scales[g] >> 4;
	}
	k->d = f16_to_f32(b->d);
	k->dbias = f16_to_f32(b->dmin);
	crumbs(b->qs, k->q);
}

/* q3_K: scale g is lo(scales[g]) (g < 8) or hi(scales[g − 8]), with bits
 * 2(g/4), 2(g/4) + 1 of scales[8 + g%4] on top, minus 32; quant 128h + 32s
 * + l (= 32k + l, k = 4h + s) gets 4 where bit k of hmask[l] is set. */
static DOT_ALWAYS_INLINE void q3_K_block(const struct block_q3_K *b, struct kq_block *k)
{
	for (int g = 0; g < 16; g++) {
		const int low = g < 8 ? b->scales[g] & 15 : b->scales[g - 8] >> 4;
		const int high = (b->scales[8 + g % 4] >> 2 * (g / 4)) & 3;

		k->sc[g] = (int8_t)((low | high << 4) - 32);
		k->bias[g] = k->sc[g];
	}
	k->d = f16_to_f32(b->d);
	k->dbias = 4.0f * k->d;
	crumbs(b->qs, k->q);
	add_high_bits(b->hmask, k->q, 4);
}

/* q4_K's and q5_K's eight 6-bit scales and mins (ggml's get_scale_min_k4),
 * each for the two groups of its 32 elements. */
_Static_assert(offsetof(struct block_q5_K, scales) == offsetof(struct block_q4_K, scales) &&
	       offsetof(struct block_q5_K, dmin) == offsetof(struct block_q4_K, dmin), "q5_K head");

static DOT_ALWAYS_INLINE void k4_head(const struct block_q4_K *b, struct kq_block *k)
{
	const uint8_t *q = b->scales;

	for (int j = 0; j < 4; j++) {
		const int sc[2] = { q[j] & 63, (q[j + 8] & 0x0f) | ((q[j] >> 6) << 4) };
		const int mn[2] = { q[j + 4] & 63, (q[j + 8] >> 4) | ((q[j + 4] >> 6) << 4) };

		for (int u = 0; u < 2; u++) {
			k->sc[2 * (j + 4 * u)] = k->sc[2 * (j + 4 * u) + 1] = (int8_t)sc[u];
			k->bias[2 * (j + 4 * u)] = k->bias[2 * (j + 4 * u) + 1] = (int16_t)mn[u];
		}
	}
	k->d = f16_to_f32(b->d);
	k->dbias = f16_to_f32(b->dmin);
}

/* 64 elements (chunk c) from the 32 bytes qs[32c ..]: low nibbles are
 * groups 4c, 4c + 1, high nibbles 4c + 2, 4c + 3. */
static DOT_ALWAYS_INLINE void nibble_chunks(const uint8_t qs[128], int8x16_t q[16])
{
	for (int c = 0; c < 4; c++)
		for (int t = 0; t < 2; t++) {
			const uint8x16_t v = vld1q_u8(qs + 32 * c + 16 * t);

			q[4 * c + t] = nibbles_lo(v);
			q[4 * c + 2 + t] = nibbles_hi(v);
		}
}

static DOT_ALWAYS_INLINE void q4_K_block(const struct block_q4_K *b, struct kq_block *k)
{
	k4_head(b, k);
	nibble_chunks(b->qs, k->q);
}

/* As q4_K plus 16 where qh says: bit 2c of qh[l] for element 64c + l,
 * bit 2c + 1 for element 64c + 32 + l (l < 32): bit k for 32k + l. */
static DOT_ALWAYS_INLINE void q5_K_block(const struct block_q5_K *b, struct kq_block *k)
{
	k4_head((const struct block_q4_K *)b, k);
	nibble_chunks(b->qs, k->q);
	add_high_bits(b->qh, k->q, 16);
}

/* q6_K: per half c (128 elements), 64 bytes of low nibbles (ql) and 32 of
 * high pairs (qh); group 8c + g has scale g of the half. */
static DOT_ALWAYS_INLINE void q6_K_block(const struct block_q6_K *b, struct kq_block *k)
{
	const uint8x16_t low4 = vdupq_n_u8(0x0f), bits45 = vdupq_n_u8(0x30), three = vdupq_n_u8(3);

	for (int g = 0; g < 16; g++) {
		k->sc[g] = b->scales[g];
		k->bias[g] = b->scales[g];
	}
	k->d = f16_to_f32(b->d);
	k->dbias = 32.0f * k->d;
	for (int c = 0; c < 2; c++) {
		const uint8_t *ql = b->ql + 64 * c, *qh = b->qh + 32 * c;
		const uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16);
		const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16);
		const uint8x16_t l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
		const uint8x16_t q[8] = {
			vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(h0, three), 4)),
			vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(h1, three), 4)),
			vorrq_u8(vandq_u8(l2, low4), vandq_u8(vshlq_n_u8(h0, 2), bits45)),
			vorrq_u8(vandq_u8(l3, low4), vandq_u8(vshlq_n_u8(h1, 2), bits45)),
			vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(h0, bits45)),
			vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(h1, bits45)),
			vorrq_u8(vshrq_n_u8(l2, 4), vandq_u8(vshrq_n_u8(h0, 2), bits45)),
			vorrq_u8(vshrq_n_u8(l3, 4), vandq_u8(vshrq_n_u8(h1, 2), bits45)),
		};

		for (int g = 0; g < 8; g++)
			k->q[8 * c + g] = vreinterpretq_s8_u8(q[g]);
	}
}

/* iq4_xs: sub-block j (32 elements, bytes qs[16j ..]) has scale
 * ls_j − 32 (4 bits of scales_l, 2 of scales_h), low nibbles group 2j,
 * high nibbles 2j + 1, through the code book. */
static DOT_ALWAYS_INLINE void iq4_xs_block(const struct block_iq4_xs *b, struct kq_block *k)
{
	for (int j = 0; j < 8; j++) {
		const int ls = ((b->scales_l[j / 2] >> 4 * (j % 2)) & 15) | ((b->scales_h >> 2 * j) & 3) << 4;
		const uint8x16_t v = vld1q_u8(b->qs + 16 * j);

		k->sc[2 * j] = k->sc[2 * j + 1] = (int8_t)(ls - 32);
		k->bias[2 * j] = k->bias[2 * j + 1] = 0;
		k->q[2 * j] = iq4_lookup(nibbles_lo(v));
		k->q[2 * j + 1] = iq4_lookup(nibbles_hi(v));
	}
	k->d = f16_to_f32(b->d);
	k->dbias = 0.0f;
}

enum kq_format { KQ_Q2_K, KQ_Q3_K, KQ_Q4_K, KQ_Q5_K, KQ_Q6_K, KQ_IQ4_XS };

static DOT_ALWAYS_INLINE int64_t kq_block_bytes(enum kq_format f)
{
	static const int64_t bytes[] = {
		sizeof(struct block_q2_K), sizeof(struct block_q3_K), sizeof(struct block_q4_K),
		sizeof(struct block_q5_K), sizeof(struct block_q6_K), sizeof(struct block_iq4_xs),
	};

	return bytes[f];
}

/* Block i of a row of format f. */
static DOT_ALWAYS_INLINE void kq_decode(enum kq_format f, const void *row, int64_t i, struct kq_block *k)
{
	const char *b = (const char *)row + i * kq_block_bytes(f);

	switch (f) {
	case KQ_Q2_K: q2_K_block((const struct block_q2_K *)b, k); break;
	case KQ_Q3_K: q3_K_block((const struct block_q3_K *)b, k); break;
	case KQ_Q4_K: q4_K_block((const struct block_q4_K *)b, k); break;
	case KQ_Q5_K: q5_K_block((const struct block_q5_K *)b, k); break;
	case KQ_Q6_K: q6_K_block((const struct block_q6_K *)b, k); break;
	default: iq4_xs_block((const struct block_iq4_xs *)b, k); break;
	}
}

/* Σ_g bias_g·bsums_g over the 16 groups. */
static inline int32_t kq_bias(const int16_t bias[16], int16x8_t bs0, int16x8_t bs1)
{
	const int16x8_t b0 = vld1q_s16(bias), b1 = vld1q_s16(bias + 8);
	int32x4_t s = vmull_s16(vget_low_s16(b0), vget_low_s16(bs0));

	s = vmlal_high_s16(s, b0, bs0);
	s = vmlal_s16(s, vget_low_s16(b1), vget_low_s16(bs1));
	return vaddvq_s32(vmlal_high_s16(s, b1, bs1));
}

/* The body of every format (f a constant once inlined): the activation's
 * 256 bytes and bsums once per block for all rows; per row the block's
 * Σ sc_g·Σ_g q·x in int32, then its two f32 terms. */
static DOT_ALWAYS_INLINE void kq_rows(enum kq_format f, int64_t n, const void *wv, int64_t stride, const void *xv,
				      float *out, const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K, bytes = kq_block_bytes(f);
	float sum[NEON_DOT_ROWS];

	FOR_ROWS(r)
		sum[r] = 0.0f;
	for (int64_t i = 0; i < nb; i++) {
		const int16x8_t bs0 = vld1q_s16(x[i].bsums), bs1 = vld1q_s16(x[i].bsums + 8);
		int8x16_t xq[16];

		for (int g = 0; g < 16; g++)
			xq[g] = vld1q_s8(x[i].qs + 16 * g);
		dot_prefetch_rows(wv, stride, rows, nb * bytes, i * bytes, (int)bytes);
		FOR_ROWS(r) {
			struct kq_block k;
			int32x4_t isum = vdupq_n_s32(0);

			kq_decode(f, dot_row_at(wv, stride, r), i, &k);
			for (int g = 0; g < 16; g++)
				isum = vmlaq_n_s32(isum, dot16(vdupq_n_s32(0), k.q[g], xq[g]), k.sc[g]);
			sum[r] += x[i].d * k.d * (float)vaddvq_s32(isum);
			if (f != KQ_IQ4_XS)
				sum[r] -= x[i].d * k.dbias * (float)kq_bias(k.bias, bs0, bs1);
		}
	}
	FOR_ROWS(r)
		out[r] = sum[r];
}

#define DEFINE_KQ(t, F) DEFINE_DOT_FAMILY_ENTRIES(ISA, kq_rows, t, F, n / QK_K * kq_block_bytes(F), NEON_DOT_ROWS)

DEFINE_KQ(q2_K, KQ_Q2_K)
DEFINE_KQ(q3_K, KQ_Q3_K)
DEFINE_KQ(q4_K, KQ_Q4_K)
DEFINE_KQ(q5_K, KQ_Q5_K)
DEFINE_KQ(q6_K, KQ_Q6_K)
DEFINE_KQ(iq4_xs, KQ_IQ4_XS)
