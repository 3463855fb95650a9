/* The 256-element formats against q8_K activations: the K-quants (q2_K,
 * q3_K, q4_K, q5_K, q6_K), iq4_xs, the ternary tq1_0 and tq2_0 and the
 * grid i-quants (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m), in
 * integer arithmetic (the vocabulary of neon_dot.h, built twice the same
 * way). One body for all: a format decodes a block into its 256 quants as
 * signed bytes (16 vectors, one group of 16 elements each, in element
 * order), the 16 groups' scales and the coefficient of each group's Σ x,
 * and
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
 *   tq1_0   y = d·(t − 1)          t 0..2, a trit: sc 1, bias 1, dbias d
 *   tq2_0   y = d·(q − 1)          q 0..3: sc 1, bias 1, dbias d
 *   iq*     y = d·f·(2ls + 1)·c    c ±grid (iq2, iq3) or 8·grid ± 1 (iq1),
 *                                  f the format's power of two
 *                                  (iq_subblocks.h): sc 2ls + 1, no bias
 *
 * (q4_K, q5_K, iq4_xs, iq2_xxs, iq3_xxs, iq3_s and iq1_s have a scale per
 * 32 elements: each twice.) The int32 sum of a block stays below 2^28
 * (63·127·16 per group, |sc| < 128; iq3_xxs: 62·127·16·31).
 */
#include <stddef.h>
#include <string.h>

#include "iq_subblocks.h"
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
		const int ls = iq4_xs_ls(b, j);
		const uint8x16_t v = vld1q_u8(b->qs + 16 * j);

		k->sc[2 * j] = k->sc[2 * j + 1] = (int8_t)(ls - 32);
		k->bias[2 * j] = k->bias[2 * j + 1] = 0;
		k->q[2 * j] = iq4_lookup(nibbles_lo(v));
		k->q[2 * j + 1] = iq4_lookup(nibbles_hi(v));
	}
	k->d = f16_to_f32(b->d);
	k->dbias = 0.0f;
}

/* tq1_0's and tq2_0's one scale: every group's sc and bias 1, d both
 * factors (y = d·q − d). */
static DOT_ALWAYS_INLINE void ternary_head(uint16_t d, struct kq_block *k)
{
	for (int g = 0; g < 16; g++) {
		k->sc[g] = 1;
		k->bias[g] = 1;
	}
	k->d = k->dbias = f16_to_f32(d);
}

/* Trit n (0..2) of 16 tq1_0 bytes, pow3 holding 3^n: a byte is a
 * fixed-point fraction of 3^5 (ggml's packing), so the product by 3^n
 * (mod 256) has trit n on top, and (q·3) >> 8 reads it. In bytes that is
 * ((q + (q >> 1)) >> 1) >> 6: for odd q, 3q is one more than
 * 2·(q + (q >> 1)), an odd number, never a multiple of 256. */
static inline int8x16_t tq1_trits(uint8x16_t bytes, uint8x16_t pow3)
{
	const uint8x16_t q = vmulq_u8(bytes, pow3);

	return vreinterpretq_s8_u8(vshrq_n_u8(vhaddq_u8(q, vshrq_n_u8(q, 1)), 6));
}

/* tq1_0: trit n of qs[m] is element 32n + m (m < 32: groups 2n, 2n + 1),
 * of qs[32 + m] element 160 + 16n + m (group 10 + n), of qh[m] element
 * 240 + 4n + m (group 15: qh's 4 bytes four times over, by 3^(j / 4)). */
static DOT_ALWAYS_INLINE void tq1_0_block(const struct block_tq1_0 *b, struct kq_block *k)
{
	static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
	static const uint8_t qh_pow3[16] = { 1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27 };
	const uint8x16_t q0 = vld1q_u8(b->qs), q1 = vld1q_u8(b->qs + 16), q2 = vld1q_u8(b->qs + 32);
	uint32_t qh;

	ternary_head(b->d, k);
	for (int n = 0; n < 5; n++) {
		const uint8x16_t p = vdupq_n_u8(pow3[n]);

		k->q[2 * n] = tq1_trits(q0, p);
		k->q[2 * n + 1] = tq1_trits(q1, p);
		k->q[10 + n] = tq1_trits(q2, p);
	}
	memcpy(&qh, b->qh, 4);
	k->q[15] = tq1_trits(vreinterpretq_u8_u32(vdupq_n_u32(qh)), vld1q_u8(qh_pow3));
}

/* tq2_0: 2-bit codes in q2_K's order (bits 2s of byte 32h + l are element
 * 128h + 32s + l). */
static DOT_ALWAYS_INLINE void tq2_0_block(const struct block_tq2_0 *b, struct kq_block *k)
{
	ternary_head(b->d, k);
	crumbs(b->qs, k->q);
}

/* Group h (elements 16h .. 16h + 15) of an i-quant sub-block: its grid
 * entries' bytes, two entries of 8 (iq2, iq1) or four of 4 (iq3), each
 * loaded straight into its lanes. */
static DOT_ALWAYS_INLINE int8x16_t iq_entries(enum iq_format f, const struct iq_sub *s, int h)
{
	uint32x4_t v;

	if (iq_entry_bytes(f) == 8)
		return vreinterpretq_s8_u8(vcombine_u8(vld1_u8(s->entry[2 * h]), vld1_u8(s->entry[2 * h + 1])));
	v = vdupq_n_u32(iq_u32(s->entry[4 * h]));
	v = vsetq_lane_u32(iq_u32(s->entry[4 * h + 1]), v, 1);
	v = vsetq_lane_u32(iq_u32(s->entry[4 * h + 2]), v, 2);
	v = vsetq_lane_u32(iq_u32(s->entry[4 * h + 3]), v, 3);
	return vreinterpretq_s8_u32(v);
}

/* 16 quants from their grid values g and their 16 sign bits (bit j for
 * byte j), with m = 0 or −1 per bit: ±g for iq2 and iq3 ((g ^ m) − m),
 * 8·g ± 1 for iq1 (8g + (m | 1)). */
static inline int8x16_t iq_quants(int8x16_t g, uint32_t signs, int iq1)
{
	const int8x16_t m = vreinterpretq_s8_u8(bit_bytes(signs));

	if (iq1)
		return vaddq_s8(vshlq_n_s8(g, 3), vorrq_s8(m, vdupq_n_s8(1)));
	return vsubq_s8(veorq_s8(g, m), m);
}

/* The grid i-quants, sub-block by sub-block (iq_subblocks.h): two groups
 * of 16 each, the scales 2ls + 1, d the block's f16 times the format's
 * power of two. */
static DOT_ALWAYS_INLINE void iq_block(enum iq_format f, const void *b, struct kq_block *k)
{
	for (int ib = 0; ib < QK_K / 32; ib++) {
		const struct iq_sub s = iq_sub_of(f, b, ib);

		for (int h = 0; h < 2; h++) {
			k->q[2 * ib + h] = iq_quants(iq_entries(f, &s, h), s.signs >> 16 * h, iq_is_iq1(f));
			k->sc[2 * ib + h] = (int8_t)s.scale[h];
			k->bias[2 * ib + h] = 0;
		}
	}
	k->d = f16_to_f32(iq_d(f, b)) * iq_factor(f);
	k->dbias = 0.0f;
}

/* The i-quants last, in iq_format's order. */
enum kq_format {
	KQ_Q2_K, KQ_Q3_K, KQ_Q4_K, KQ_Q5_K, KQ_Q6_K, KQ_IQ4_XS, KQ_TQ1_0, KQ_TQ2_0,
	KQ_IQ2_XXS, KQ_IQ2_XS, KQ_IQ2_S, KQ_IQ3_XXS, KQ_IQ3_S, KQ_IQ1_S, KQ_IQ1_M,
};
_Static_assert(KQ_IQ1_M - KQ_IQ2_XXS == IQ_IQ1_M - IQ_IQ2_XXS, "i-quants in iq_format's order");

static DOT_ALWAYS_INLINE int kq_is_iq(enum kq_format f)
{
	return f >= KQ_IQ2_XXS;
}

static DOT_ALWAYS_INLINE enum iq_format kq_iq_format(enum kq_format f)
{
	return (enum iq_format)(IQ_IQ2_XXS + (f - KQ_IQ2_XXS));
}

/* iq4_xs and the grid i-quants have no Σ x term. */
static DOT_ALWAYS_INLINE int kq_has_bias(enum kq_format f)
{
	return f != KQ_IQ4_XS && !kq_is_iq(f);
}

static DOT_ALWAYS_INLINE int64_t kq_block_bytes(enum kq_format f)
{
	static const int64_t bytes[] = {
		sizeof(struct block_q2_K), sizeof(struct block_q3_K),  sizeof(struct block_q4_K),
		sizeof(struct block_q5_K), sizeof(struct block_q6_K),  sizeof(struct block_iq4_xs),
		sizeof(struct block_tq1_0), sizeof(struct block_tq2_0),
	};

	return kq_is_iq(f) ? iq_block_bytes(kq_iq_format(f)) : bytes[f];
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
	case KQ_IQ4_XS: iq4_xs_block((const struct block_iq4_xs *)b, k); break;
	case KQ_TQ1_0: tq1_0_block((const struct block_tq1_0 *)b, k); break;
	case KQ_TQ2_0: tq2_0_block((const struct block_tq2_0 *)b, k); break;
	default: iq_block(kq_iq_format(f), b, k); break;
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
			if (kq_has_bias(f))
				sum[r] -= x[i].d * k.dbias * (float)kq_bias(k.bias, bs0, bs1);
		}
	}
	FOR_ROWS(r)
		out[r] = sum[r];
}

/* vec_dot `dot` and vec_dot_rows `dot_rows` of the format F. */
#define DEFINE_KQ(F, dot, dot_rows) \
	DEFINE_DOT_FAMILY_ENTRIES(dot, dot_rows, kq_rows, F, n / QK_K * kq_block_bytes(F), NEON_DOT_ROWS)

DEFINE_KQ(KQ_Q2_K, DOT_NAME(neondot_vec_dot_q2_K, neon_vec_dot_q2_K),
          DOT_NAME(neondot_vec_dot_rows_q2_K, neon_vec_dot_rows_q2_K))
DEFINE_KQ(KQ_Q3_K, DOT_NAME(neondot_vec_dot_q3_K, neon_vec_dot_q3_K),
          DOT_NAME(neondot_vec_dot_rows_q3_K, neon_vec_dot_rows_q3_K))
DEFINE_KQ(KQ_Q4_K, DOT_NAME(neondot_vec_dot_q4_K, neon_vec_dot_q4_K),
          DOT_NAME(neondot_vec_dot_rows_q4_K, neon_vec_dot_rows_q4_K))
DEFINE_KQ(KQ_Q5_K, DOT_NAME(neondot_vec_dot_q5_K, neon_vec_dot_q5_K),
          DOT_NAME(neondot_vec_dot_rows_q5_K, neon_vec_dot_rows_q5_K))
DEFINE_KQ(KQ_Q6_K, DOT_NAME(neondot_vec_dot_q6_K, neon_vec_dot_q6_K),
          DOT_NAME(neondot_vec_dot_rows_q6_K, neon_vec_dot_rows_q6_K))
DEFINE_KQ(KQ_IQ4_XS, DOT_NAME(neondot_vec_dot_iq4_xs, neon_vec_dot_iq4_xs),
          DOT_NAME(neondot_vec_dot_rows_iq4_xs, neon_vec_dot_rows_iq4_xs))
DEFINE_KQ(KQ_TQ1_0, DOT_NAME(neondot_vec_dot_tq1_0, neon_vec_dot_tq1_0),
          DOT_NAME(neondot_vec_dot_rows_tq1_0, neon_vec_dot_rows_tq1_0))
DEFINE_KQ(KQ_TQ2_0, DOT_NAME(neondot_vec_dot_tq2_0, neon_vec_dot_tq2_0),
          DOT_NAME(neondot_vec_dot_rows_tq2_0, neon_vec_dot_rows_tq2_0))
DEFINE_KQ(KQ_IQ2_XXS, DOT_NAME(neondot_vec_dot_iq2_xxs, neon_vec_dot_iq2_xxs),
          DOT_NAME(neondot_vec_dot_rows_iq2_xxs, neon_vec_dot_rows_iq2_xxs))
DEFINE_KQ(KQ_IQ2_XS, DOT_NAME(neondot_vec_dot_iq2_xs, neon_vec_dot_iq2_xs),
          DOT_NAME(neondot_vec_dot_rows_iq2_xs, neon_vec_dot_rows_iq2_xs))
DEFINE_KQ(KQ_IQ2_S, DOT_NAME(neondot_vec_dot_iq2_s, neon_vec_dot_iq2_s),
          DOT_NAME(neondot_vec_dot_rows_iq2_s, neon_vec_dot_rows_iq2_s))
DEFINE_KQ(KQ_IQ3_XXS, DOT_NAME(neondot_vec_dot_iq3_xxs, neon_vec_dot_iq3_xxs),
          DOT_NAME(neondot_vec_dot_rows_iq3_xxs, neon_vec_dot_rows_iq3_xxs))
DEFINE_KQ(KQ_IQ3_S, DOT_NAME(neondot_vec_dot_iq3_s, neon_vec_dot_iq3_s),
          DOT_NAME(neondot_vec_dot_rows_iq3_s, neon_vec_dot_rows_iq3_s))
DEFINE_KQ(KQ_IQ1_S, DOT_NAME(neondot_vec_dot_iq1_s, neon_vec_dot_iq1_s),
          DOT_NAME(neondot_vec_dot_rows_iq1_s, neon_vec_dot_rows_iq1_s))
DEFINE_KQ(KQ_IQ1_M, DOT_NAME(neondot_vec_dot_iq1_m, neon_vec_dot_iq1_m),
          DOT_NAME(neondot_vec_dot_rows_iq1_m, neon_vec_dot_rows_iq1_m))
