/* Reference row codecs: each decoder does ggml's arithmetic in ggml's order,
 * so the f32 it produces is bit for bit ggml's to_float (checked against
 * ../shared/vectors/ggml). Layouts and formulas: SPEC/QUANT.md.
 */
#include <math.h>
#include <string.h>

#include "quant_ref.h"
#include "codebooks.h"
#include "../fp16.h"
#include "../quant_blocks.h"

/* --------------------------------------------------------- float types */

void ref_dequant_row_f32(const void *src, float *dst, int64_t n)
{
	memmove(dst, src, (size_t)n * sizeof(float));
}

void ref_dequant_row_f16(const void *src, float *dst, int64_t n)
{
	const uint16_t *h = src;

	for (int64_t i = 0; i < n; i++)
		dst[i] = f16_to_f32(h[i]);
}

void ref_dequant_row_bf16(const void *src, float *dst, int64_t n)
{
	const uint16_t *h = src;

	for (int64_t i = 0; i < n; i++)
		dst[i] = bf16_to_f32(h[i]);
}

void ref_quant_row_f32(const float *src, void *dst, int64_t n)
{
	memmove(dst, src, (size_t)n * sizeof(float));
}

void ref_quant_row_f16(const float *src, void *dst, int64_t n)
{
	uint16_t *h = dst;

	for (int64_t i = 0; i < n; i++)
		h[i] = f32_to_f16(src[i]);
}

void ref_quant_row_bf16(const float *src, void *dst, int64_t n)
{
	uint16_t *h = dst;

	for (int64_t i = 0; i < n; i++)
		h[i] = f32_to_bf16(src[i]);
}

/* ------------------------------------------------ 32-element blocks */

void ref_dequant_row_q4_0(const void *src, float *y, int64_t n)
{
	const struct block_q4_0 *x = src;

	for (int64_t i = 0; i < n / QK4_0; i++, y += QK4_0) {
		const float d = f16_to_f32(x[i].d);

		for (int j = 0; j < QK4_0 / 2; j++) {
			y[j] = ((x[i].qs[j] & 0x0f) - 8) * d;
			y[j + QK4_0 / 2] = ((x[i].qs[j] >> 4) - 8) * d;
		}
	}
}

void ref_dequant_row_q4_1(const void *src, float *y, int64_t n)
{
	const struct block_q4_1 *x = src;

	for (int64_t i = 0; i < n / QK4_1; i++, y += QK4_1) {
		const float d = f16_to_f32(x[i].d);
		const float m = f16_to_f32(x[i].m);

		for (int j = 0; j < QK4_1 / 2; j++) {
			y[j] = (x[i].qs[j] & 0x0f) * d + m;
			y[j + QK4_1 / 2] = (x[i].qs[j] >> 4) * d + m;
		}
	}
}

/* The 32 fifth bits of a q5 block, bit j for element j. */
static uint32_t q5_high_bits(const uint8_t qh[4])
{
	return qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
}

void ref_dequant_row_q5_0(const void *src, float *y, int64_t n)
{
	const struct block_q5_0 *x = src;

	for (int64_t i = 0; i < n / QK5_0; i++, y += QK5_0) {
		const float d = f16_to_f32(x[i].d);
		const uint32_t qh = q5_high_bits(x[i].qh);

		for (int j = 0; j < QK5_0 / 2; j++) {
			const int h0 = ((qh >> j) << 4) & 0x10;
			const int h1 = (qh >> (j + 12)) & 0x10;

			y[j] = (((x[i].qs[j] & 0x0f) | h0) - 16) * d;
			y[j + QK5_0 / 2] = (((x[i].qs[j] >> 4) | h1) - 16) * d;
		}
	}
}

void ref_dequant_row_q5_1(const void *src, float *y, int64_t n)
{
	const struct block_q5_1 *x = src;

	for (int64_t i = 0; i < n / QK5_1; i++, y += QK5_1) {
		const float d = f16_to_f32(x[i].d);
		const float m = f16_to_f32(x[i].m);
		const uint32_t qh = q5_high_bits(x[i].qh);

		for (int j = 0; j < QK5_1 / 2; j++) {
			const int h0 = ((qh >> j) << 4) & 0x10;
			const int h1 = (qh >> (j + 12)) & 0x10;

			y[j] = ((x[i].qs[j] & 0x0f) | h0) * d + m;
			y[j + QK5_1 / 2] = ((x[i].qs[j] >> 4) | h1) * d + m;
		}
	}
}

void ref_dequant_row_q8_0(const void *src, float *y, int64_t n)
{
	const struct block_q8_0 *x = src;

	for (int64_t i = 0; i < n / QK8_0; i++, y += QK8_0) {
		const float d = f16_to_f32(x[i].d);

		for (int j = 0; j < QK8_0; j++)
			y[j] = x[i].qs[j] * d;
	}
}

void ref_dequant_row_iq4_nl(const void *src, float *y, int64_t n)
{
	const struct block_iq4_nl *x = src;

	for (int64_t i = 0; i < n / QK4_NL; i++, y += QK4_NL) {
		const float d = f16_to_f32(x[i].d);

		for (int j = 0; j < QK4_NL / 2; j++) {
			y[j] = d * iq4nl_values[x[i].qs[j] & 0x0f];
			y[j + QK4_NL / 2] = d * iq4nl_values[x[i].qs[j] >> 4];
		}
	}
}

/* ---------------------------------------------------------- K-quants */

void ref_dequant_row_q2_K(const void *src, float *y, int64_t n)
{
	const struct block_q2_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_to_f32(x[i].d);
		const float dmin = f16_to_f32(x[i].dmin);
		const uint8_t *q = x[i].qs;
		int is = 0;

		/* two halves of 128; in each, 4 shifts × 2 groups of 16 */
		for (int half = 0; half < 2; half++, q += 32) {
			for (int shift = 0; shift < 8; shift += 2) {
				for (int g = 0; g < 2; g++) {
					const uint8_t sc = x[i].scales[is++];
					const float dl = d * (sc & 0x0f);
					const float ml = dmin * (sc >> 4);

					for (int l = 0; l < 16; l++)
						*y++ = dl * (int8_t)((q[l + 16 * g] >> shift) & 3) - ml;
				}
			}
		}
	}
}

void ref_dequant_row_q3_K(const void *src, float *y, int64_t n)
{
	const struct block_q3_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d_all = f16_to_f32(x[i].d);
		const uint8_t *q = x[i].qs;
		const uint8_t *hm = x[i].hmask;
		uint8_t m = 1;
		int is = 0;

		for (int half = 0; half < 2; half++, q += 32) {
			for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
				for (int g = 0; g < 2; g++) {
					const float dl = d_all * q3_K_scale(x[i].scales, is++);
					const int o = 16 * g;

					for (int l = 0; l < 16; l++)
						*y++ = dl * ((int8_t)((q[l + o] >> shift) & 3) -
							     ((hm[l + o] & m) ? 0 : 4));
				}
			}
		}
	}
}

void ref_dequant_row_q4_K(const void *src, float *y, int64_t n)
{
	const struct block_q4_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_to_f32(x[i].d);
		const float dmin = f16_to_f32(x[i].dmin);
		const uint8_t *q = x[i].qs;

		for (int is = 0; is < 8; is += 2, q += 32) {
			uint8_t sc, m;

			k4_scale_min(is, x[i].scales, &sc, &m);
			const float d1 = d * sc, m1 = dmin * m;
			k4_scale_min(is + 1, x[i].scales, &sc, &m);
			const float d2 = d * sc, m2 = dmin * m;

			for (int l = 0; l < 32; l++)
				*y++ = d1 * (q[l] & 0x0f) - m1;
			for (int l = 0; l < 32; l++)
				*y++ = d2 * (q[l] >> 4) - m2;
		}
	}
}

void ref_dequant_row_q5_K(const void *src, float *y, int64_t n)
{
	const struct block_q5_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_to_f32(x[i].d);
		const float dmin = f16_to_f32(x[i].dmin);
		const uint8_t *ql = x[i].qs;
		const uint8_t *qh = x[i].qh;
		uint8_t u1 = 1, u2 = 2;

		for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
			uint8_t sc, m;

			k4_scale_min(is, x[i].scales, &sc, &m);
			const float d1 = d * sc, m1 = dmin * m;
			k4_scale_min(is + 1, x[i].scales, &sc, &m);
			const float d2 = d * sc, m2 = dmin * m;

			for (int l = 0; l < 32; l++)
				*y++ = d1 * ((ql[l] & 0x0f) + (qh[l] & u1 ? 16 : 0)) - m1;
			for (int l = 0; l < 32; l++)
				*y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
		}
	}
}

void ref_dequant_row_q6_K(const void *src, float *y, int64_t n)
{
	const struct block_q6_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_to_f32(x[i].d);
		const uint8_t *ql = x[i].ql;
		const uint8_t *qh = x[i].qh;
		const int8_t *sc = x[i].scales;

		for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8) {
			for (int l = 0; l < 32; l++) {
				const int is = l / 16;
				const int q1 = (int8_t)((ql[l] & 0x0f) | ((qh[l] >> 0 & 3) << 4)) - 32;
				const int q2 = (int8_t)((ql[l + 32] & 0x0f) | ((qh[l] >> 2 & 3) << 4)) - 32;
				const int q3 = (int8_t)((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4)) - 32;
				const int q4 = (int8_t)((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4)) - 32;

				y[l] = d * sc[is] * q1;
				y[l + 32] = d * sc[is + 2] * q2;
				y[l + 64] = d * sc[is + 4] * q3;
				y[l + 96] = d * sc[is + 6] * q4;
			}
		}
	}
}

void ref_dequant_row_q8_K(const void *src, float *y, int64_t n)
{
	const struct block_q8_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++, y += QK_K)
		for (int j = 0; j < QK_K; j++)
			y[j] = x[i].d * x[i].qs[j];
}

void ref_dequant_row_iq4_xs(const void *src, float *y, int64_t n)
{
	const struct block_iq4_xs *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_to_f32(x[i].d);
		const uint8_t *qs = x[i].qs;

		for (int ib = 0; ib < QK_K / 32; ib++, y += 32, qs += 16) {
			const int ls = ((x[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0x0f) |
				       (((x[i].scales_h >> 2 * ib) & 3) << 4);
			const float dl = d * (ls - 32);

			for (int j = 0; j < 16; j++) {
				y[j] = dl * iq4nl_values[qs[j] & 0x0f];
				y[j + 16] = dl * iq4nl_values[qs[j] >> 4];
			}
		}
	}
}

/* ----------------------------------------------------------- encoders */

void ref_quant_row_q8_0(const float *x, void *dst, int64_t n)
{
	struct block_q8_0 *y = dst;

	for (int64_t i = 0; i < n / QK8_0; i++, x += QK8_0) {
		float amax = 0.0f;

		for (int j = 0; j < QK8_0; j++)
			amax = fmaxf(amax, fabsf(x[j]));

		const float d = amax / 127;
		const float id = d ? 1.0f / d : 0.0f;

		y[i].d = f32_to_f16(d);
		for (int j = 0; j < QK8_0; j++)
			y[i].qs[j] = (int8_t)roundf(x[j] * id);
	}
}

/* ggml's quantize_row_q4_0_ref: the element of largest |x| (the first on
 * ties) maps to -8, d = max / -8; q = min(15, trunc(x/d + 8.5)). */
void ref_quant_row_q4_0(const float *x, void *dst, int64_t n)
{
	struct block_q4_0 *y = dst;

	for (int64_t i = 0; i < n / QK4_0; i++, x += QK4_0) {
		float amax = 0.0f, max = 0.0f;

		for (int j = 0; j < QK4_0; j++) {
			if (amax < fabsf(x[j])) {
				amax = fabsf(x[j]);
				max = x[j];
			}
		}

		const float d = max / -8;
		const float id = d ? 1.0f / d : 0.0f;

		y[i].d = f32_to_f16(d);
		for (int j = 0; j < QK4_0 / 2; j++) {
			const int8_t q0 = (int8_t)(x[j] * id + 8.5f), q1 = (int8_t)(x[QK4_0 / 2 + j] * id + 8.5f);

			y[i].qs[j] = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
		}
	}
}

/* ggml's nearest_int: round half to even through the float mantissa,
 * independent of the rounding mode; |f| < 2^22. */
static int nearest_int(float f)
{
	return (int)(fp_bits(f + 12582912.0f) & 0x007fffff) - 0x00400000;
}

void ref_quant_row_q8_K(const float *x, void *dst, int64_t n)
{
	struct block_q8_K *y = dst;

	for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
		float amax = 0.0f, max = 0.0f;

		for (int j = 0; j < QK_K; j++) {
			const float ax = fabsf(x[j]);

			if (ax > amax) {
				amax = ax;
				max = x[j];
			}
		}
		if (amax == 0.0f) {
			memset(&y[i], 0, sizeof(y[i]));
			continue;
		}

		const float iscale = -127.0f / max;

		for (int j = 0; j < QK_K; j++) {
			const int v = nearest_int(iscale * x[j]);

			y[i].qs[j] = (int8_t)(v < 127 ? v : 127);
		}
		for (int g = 0; g < QK_K / 16; g++) {
			int sum = 0;

			for (int j = 0; j < 16; j++)
				sum += y[i].qs[16 * g + j];
			y[i].bsums[g] = (int16_t)sum;
		}
		y[i].d = 1.0f / iscale;
	}
}

/* ------------------------------------------------------ vec_dot (ref) */

typedef void (*dequant_fn)(const void *src, float *dst, int64_t n);

static void copy_f32(const void *src, float *dst, int64_t n)
{
	memcpy(dst, src, (size_t)n * sizeof(float));
}

/* Decodes both rows a chunk at a time (a weight block, 256 elements for the
 * float types) and sums the products in double. */
static float vec_dot_decoded(int64_t n, const void *w, int32_t wt, dequant_fn wdec, const void *xq, int32_t xt)
{
	const int64_t chunk = cpu_block_elems(wt) > 1 ? cpu_block_elems(wt) : QK_K;
	const dequant_fn xdec = xt == GLLMK_Q8_0 ? ref_dequant_row_q8_0 :
				xt == GLLMK_Q8_K ? ref_dequant_row_q8_K : copy_f32;
	float wf[QK_K], xf[QK_K];
	double sum = 0.0;

	for (int64_t i = 0; i < n; i += chunk) {
		const int64_t len = n - i < chunk ? n - i : chunk;

		wdec((const char *)w + cpu_row_bytes(wt, i), wf, len);
		xdec((const char *)xq + cpu_row_bytes(xt, i), xf, len);
		for (int64_t j = 0; j < len; j++)
			sum += (double)wf[j] * xf[j];
	}
	return (float)sum;
}

#define REF_DEFINE_VEC_DOT(name, dt, vdt)                                              \
	float ref_vec_dot_##name(int64_t n, const void *w, const void *xq)              \
	{                                                                               \
		return vec_dot_decoded(n, w, dt, ref_dequant_row_##name, xq, vdt);      \
	}
REF_DECODED_DOT_DTYPES(REF_DEFINE_VEC_DOT)

/* ------------------------------------------------------------------ Codes
 *
 * The formats of REF_CODE_DTYPES, decoded the way ggml's integer vec_dot
 * sees them: a block is int8 codes q[j], an integer multiplier per 16
 * elements and one float d, and element j is exactly
 *
 *     d · mult[j / 16] · q[j]
 *
 * (the i-quants' sub-block scale 2s + 1 is the multiplier; their 1/8 or
 * 1/4 is folded into d, and iq1's offset ±1/8 into the codes 8·g ± 1).
 * Every such product is exact in f32 (at most 11 + 5 + 6 significant bits,
 * no underflow: |value| ≥ 2^-27; mxfp4's d is a power of two), so decoding through the codes gives ggml's
 * dequantize_row_<t> bit for bit, in whatever order ggml multiplies; and
 * the vec_dot sums q·xq per 16 in integers, as ggml does. Layouts and
 * formulas: SPEC/QUANT.md. */

struct codes {
	float d;
	int16_t mult[QK_K / 16];
	int8_t q[QK_K];
};

/* The sign of element j (0..7) of an 8-element group from its sign byte. */
static int sign_of(uint8_t signs, int j)
{
	return signs >> j & 1 ? -1 : 1;
}

/* 8 magnitudes of a grid entry with their signs. */
static void signed_group(int8_t *q, const uint8_t *grid, int n, uint8_t signs, int first_bit)
{
	for (int j = 0; j < n; j++)
		q[j] = (int8_t)(grid[j] * sign_of(signs, first_bit + j));
}

/* A multiplier for each half of sub-block ib (32 elements). */
static void set_mults(struct codes *c, int ib, int lo, int hi)
{
	c->mult[2 * ib] = (int16_t)lo;
	c->mult[2 * ib + 1] = (int16_t)hi;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* iq2_xxs: per 32 elements 8 bytes: 4 grid indices, then a u32 of four
 * 7-bit sign indices and the 4-bit scale s (bits 28..31);
 * x = d·(2s + 1)/8 · grid · sign. */
static void codes_iq2_xxs(const void *src, struct codes *c)
{
	const struct block_iq2_xxs *b = src;
	const uint8_t *qs = (const uint8_t *)b->qs;

	c->d = f16_to_f32(b->d) * 0.125f;
	for (int ib = 0; ib < QK_K / 32; ib++, qs += 8) {
		const uint32_t aux = le32(qs + 4);
		const int ls = 2 * (int)(aux >> 28) + 1;

		set_mults(c, ib, ls, ls);
		for (int l = 0; l < 4; l++)
			signed_group(c->q + 32 * ib + 8 * l, ref_iq2xxs_grid[qs[l]], 8,
				     ref_ksigns_iq2xs[aux >> 7 * l & 127], 0);
	}
}

/* iq2_xs: a u16 per 8 elements, 9-bit grid index and 7-bit sign index; a
 * 4-bit scale per 16 (two per scales byte). */
static void codes_iq2_xs(const void *src, struct codes *c)
{
	const struct block_iq2_xs *b = src;

	c->d = f16_to_f32(b->d) * 0.125f;
	for (int ib = 0; ib < QK_K / 32; ib++) {
		set_mults(c, ib, 2 * (b->scales[ib] & 0x0f) + 1, 2 * (b->scales[ib] >> 4) + 1);
		for (int l = 0; l < 4; l++) {
			const uint16_t v = b->qs[4 * ib + l];

			signed_group(c->q + 32 * ib + 8 * l, ref_iq2xs_grid[v & 511], 8, ref_ksigns_iq2xs[v >> 9], 0);
		}
	}
}

/* iq2_s: 10-bit grid indices (8 low bits in qs, 2 high bits in qh), an
 * explicit sign byte per 8 elements, scales as iq2_xs. */
static void codes_iq2_s(const void *src, struct codes *c)
{
	const struct block_iq2_s *b = src;
	const uint8_t *signs = b->qs + QK_K / 8;

	c->d = f16_to_f32(b->d) * 0.125f;
	for (int ib = 0; ib < QK_K / 32; ib++) {
		set_mults(c, ib, 2 * (b->scales[ib] & 0x0f) + 1, 2 * (b->scales[ib] >> 4) + 1);
		for (int l = 0; l < 4; l++) {
			const int idx = b->qs[4 * ib + l] | (b->qh[ib] << (8 - 2 * l) & 0x300);

			signed_group(c->q + 32 * ib + 8 * l, ref_iq2s_grid[idx], 8, signs[4 * ib + l], 0);
		}
	}
}

/* iq3_xxs: 64 grid indices (4 elements each), then per 32 elements a u32
 * of four 7-bit sign indices and the scale s; x = d·(2s + 1)/4 · grid · sign. */
static void codes_iq3_xxs(const void *src, struct codes *c)
{
	const struct block_iq3_xxs *b = src;
	const uint8_t *qs = b->qs;

	c->d = f16_to_f32(b->d) * 0.25f;
	for (int ib = 0; ib < QK_K / 32; ib++, qs += 8) {
		const uint32_t aux = le32(b->qs + QK_K / 4 + 4 * ib);
		const int ls = 2 * (int)(aux >> 28) + 1;

		set_mults(c, ib, ls, ls);
		for (int l = 0; l < 4; l++) {
			const uint8_t signs = ref_ksigns_iq2xs[aux >> 7 * l & 127];
			int8_t *q = c->q + 32 * ib + 8 * l;

			signed_group(q, ref_iq3xxs_grid[qs[2 * l]], 4, signs, 0);
			signed_group(q + 4, ref_iq3xxs_grid[qs[2 * l + 1]], 4, signs, 4);
		}
	}
}

/* iq3_s: 9-bit grid indices (8 low bits in qs, the 9th in qh, a qh byte
 * per 32 elements), a sign byte per 8, a 4-bit scale per 32;
 * x = d·(2s + 1) · grid · sign. */
static void codes_iq3_s(const void *src, struct codes *c)
{
	const struct block_iq3_s *b = src;

	c->d = f16_to_f32(b->d);
	for (int ib = 0; ib < QK_K / 32; ib++) {
		const int ls = 2 * (b->scales[ib / 2] >> 4 * (ib % 2) & 0x0f) + 1;
		const uint8_t *qs = b->qs + 8 * ib;
		const int qh = b->qh[ib];

		set_mults(c, ib, ls, ls);
		for (int l = 0; l < 4; l++) {
			const uint8_t signs = b->signs[4 * ib + l];
			int8_t *q = c->q + 32 * ib + 8 * l;

			signed_group(q, ref_iq3s_grid[qs[2 * l] | (qh << (8 - 2 * l) & 256)], 4, signs, 0);
			signed_group(q + 4, ref_iq3s_grid[qs[2 * l + 1] | (qh << (7 - 2 * l) & 256)], 4, signs, 4);
		}
	}
}

/* One iq1 group of 8: grid values g in {-1, 0, 1} plus the offset ±1/8,
 * as the codes 8·g ± 1 (d carries the 1/8). */
static void iq1_group(int8_t *q, int idx, int negative_delta)
{
	for (int j = 0; j < 8; j++)
		q[j] = (int8_t)(8 * ref_iq1s_grid[idx][j] + (negative_delta ? -1 : 1));
}

/* iq1_s: 11-bit grid indices (8 low bits in qs, 3 high bits per 8 in the
 * u16 qh of each 32), a 3-bit scale s and the offset's sign in qh's top
 * bits; x = d·(2s + 1)·(g ± 1/8). */
static void codes_iq1_s(const void *src, struct codes *c)
{
	const struct block_iq1_s *b = src;

	c->d = f16_to_f32(b->d) * 0.125f;
	for (int ib = 0; ib < QK_K / 32; ib++) {
		const int qh = b->qh[ib];
		const int ls = 2 * (qh >> 12 & 7) + 1;

		set_mults(c, ib, ls, ls);
		for (int l = 0; l < 4; l++)
			iq1_group(c->q + 32 * ib + 8 * l, b->qs[4 * ib + l] | (qh >> 3 * l & 7) << 8, qh & 0x8000);
	}
}

/* iq1_m: as iq1_s, but a qh nibble per 8 elements (3 index bits and the
 * offset's sign), a 3-bit scale per 16, and the f16 d spread over the top
 * nibbles of the four u16 of scales. */
static void codes_iq1_m(const void *src, struct codes *c)
{
	const struct block_iq1_m *b = src;
	uint16_t sc[4];

	for (int k = 0; k < 4; k++)
		sc[k] = (uint16_t)(b->scales[2 * k] | b->scales[2 * k + 1] << 8);
	c->d = f16_to_f32((uint16_t)(sc[0] >> 12 | (sc[1] >> 8 & 0x00f0) | (sc[2] >> 4 & 0x0f00) |
				     (sc[3] & 0xf000))) * 0.125f;
	for (int ib = 0; ib < QK_K / 32; ib++) {
		const int shift = 6 * (ib % 2);

		set_mults(c, ib, 2 * (sc[ib / 2] >> shift & 7) + 1, 2 * (sc[ib / 2] >> (shift + 3) & 7) + 1);
		for (int l = 0; l < 4; l++) {
			const int nib = b->qh[2 * ib + l / 2] >> 4 * (l % 2) & 0x0f;

			iq1_group(c->q + 32 * ib + 8 * l, b->qs[4 * ib + l] | (nib & 7) << 8, nib & 8);
		}
	}
}

/* The trit of a tq1_0 byte at position n (0..4): the byte is a fixed-point
 * fraction of 3^5 (ggml's packing), so multiplying by 3^n (mod 256) moves
 * trit n to the top, and ·3 >> 8 reads it. */
static int tq1_trit(uint8_t byte, int n)
{
	static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
	const uint8_t q = (uint8_t)(byte * pow3[n]);

	return (q * 3) >> 8;
}

/* One scale for the whole block (d, every multiplier 1), `groups` of 16. */
static void one_scale(struct codes *c, float d, int groups)
{
	c->d = d;
	for (int g = 0; g < groups; g++)
		c->mult[g] = 1;
}

/* Codes trit − 1 of `len` tq1_0 bytes, trits 0 .. trits−1, trit-major:
 * trit n of byte m is code n·len + m. Returns the next code. */
static int8_t *tq1_codes(int8_t *q, const uint8_t *bytes, int len, int trits)
{
	for (int n = 0; n < trits; n++)
		for (int m = 0; m < len; m++)
			*q++ = (int8_t)(tq1_trit(bytes[m], n) - 1);
	return q;
}

/* tq1_0: qs[0..31] hold elements 0..159 (trit n of byte m is element
 * 32n + m), qs[32..47] elements 160..239 (16n + m), qh[0..3] elements
 * 240..255 (4n + m); x = d·(trit − 1). */
static void codes_tq1_0(const void *src, struct codes *c)
{
	const struct block_tq1_0 *b = src;
	int8_t *q = c->q;

	one_scale(c, f16_to_f32(b->d), QK_K / 16);
	q = tq1_codes(q, b->qs, 32, 5);
	q = tq1_codes(q, b->qs + 32, 16, 5);
	tq1_codes(q, b->qh, 4, 4);
}

/* tq2_0: 2 bits per element: bits 2l of byte 32h + m are element
 * 128h + 32l + m; x = d·(q − 1). */
static void codes_tq2_0(const void *src, struct codes *c)
{
	const struct block_tq2_0 *b = src;
	int8_t *q = c->q;

	one_scale(c, f16_to_f32(b->d), QK_K / 16);
	for (int h = 0; h < 2; h++)
		for (int l = 0; l < 4; l++)
			for (int m = 0; m < 32; m++)
				*q++ = (int8_t)((b->qs[32 * h + m] >> 2 * l & 3) - 1);
}

/* ggml's E8M0 scale halved (the codes are E2M1 values doubled):
 * 2^(e − 128), as an f32 bit pattern (e < 2: a subnormal). */
static float e8m0_half(uint8_t e)
{
	return fp_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* mxfp4 (32 elements): E2M1 codes in q4_0's nibble order; x = 2^(e−127)·v,
 * v the E2M1 value. */
static void codes_mxfp4(const void *src, struct codes *c)
{
	const struct block_mxfp4 *b = src;

	one_scale(c, e8m0_half(b->e), QK_MXFP4 / 16);
	for (int j = 0; j < QK_MXFP4 / 2; j++) {
		c->q[j] = ref_kvalues_mxfp4[b->qs[j] & 0x0f];
		c->q[j + QK_MXFP4 / 2] = ref_kvalues_mxfp4[b->qs[j] >> 4];
	}
}

typedef void (*codes_fn)(const void *block, struct codes *c);

static void dequant_codes(const void *src, float *y, int64_t n, int32_t t, codes_fn unpack)
{
	const int64_t elems = cpu_block_elems(t), bytes = cpu_block_bytes(t);
	struct codes c;

	for (int64_t i = 0; i < n / elems; i++, y += elems) {
		unpack((const char *)src + i * bytes, &c);
		for (int64_t g = 0; g < elems / 16; g++) {
			const float dm = c.d * c.mult[g];

			for (int j = 0; j < 16; j++)
				y[16 * g + j] = dm * c.q[16 * g + j];
		}
	}
}

/* Block i of an activation row of q8_0 or q8_K: its quants and scale. */
static const int8_t *partner_block(const void *xq, int32_t xt, int64_t i, float *d)
{
	if (xt == GLLMK_Q8_0) {
		const struct block_q8_0 *b = (const struct block_q8_0 *)xq + i;

		*d = f16_to_f32(b->d);
		return b->qs;
	}
	const struct block_q8_K *b = (const struct block_q8_K *)xq + i;

	*d = b->d;
	return b->qs;
}

/* The integer dot of one unpacked block with an activation block: Σ over
 * the 16-element groups of mult · Σ q·x, exact in int32. */
static int32_t block_isum(const struct codes *c, const int8_t *x, int64_t elems)
{
	int32_t isum = 0;

	for (int64_t g = 0; g < elems / 16; g++) {
		int32_t s = 0;

		for (int j = 0; j < 16; j++)
			s += c->q[16 * g + j] * x[16 * g + j];
		isum += c->mult[g] * s;
	}
	return isum;
}

/* `rows` weight rows (w_stride bytes apart) against `x_rows` activation
 * rows (xq_stride bytes apart), out[i·rows + r] for weight row r and
 * activation row i: each weight block is unpacked once for all x_rows
 * (the tile of cpu_cntx.h's vec_dot_tile; rows = x_rows = 1 is vec_dot).
 * Per output, ggml's order: one f32 product per block, summed in f32.
 * Inlined into each entry, so that the format's unpack and the counts are
 * constants there. */
static inline __attribute__((always_inline)) void vec_dot_codes(int64_t n, const void *w, int64_t w_stride, int rows,
								 const void *xq, int64_t xq_stride, int x_rows,
								 float *out, int32_t t, codes_fn unpack, int32_t xt)
{
	const int64_t elems = cpu_block_elems(t), bytes = cpu_block_bytes(t);
	struct codes c;

	for (int i = 0; i < x_rows * rows; i++)
		out[i] = 0.0f;
	for (int64_t b = 0; b < n / elems; b++) {
		for (int r = 0; r < rows; r++) {
			unpack((const char *)w + r * w_stride + b * bytes, &c);
			for (int i = 0; i < x_rows; i++) {
				float dx;
				const int8_t *x = partner_block((const char *)xq + i * xq_stride, xt, b, &dx);

				out[i * rows + r] += c.d * dx * (float)block_isum(&c, x, elems);
			}
		}
	}
}

#define REF_DEFINE_CODES(name, dt, vdt)                                                           \
	void ref_dequant_row_##name(const void *src, float *dst, int64_t n)                        \
	{                                                                                          \
		dequant_codes(src, dst, n, dt, codes_##name);                                      \
	}                                                                                          \
	float ref_vec_dot_##name(int64_t n, const void *w, const void *xq)                         \
	{                                                                                          \
		float out;                                                                         \
                                                                                                   \
		vec_dot_codes(n, w, 0, 1, xq, 0, 1, &out, dt, codes_##name, vdt);                  \
		return out;                                                                        \
	}                                                                                          \
	void ref_vec_dot_rows_##name(int64_t n, const void *w, int64_t w_stride, const void *xq,  \
				     float *out)                                                   \
	{                                                                                          \
		vec_dot_codes(n, w, w_stride, REF_DOT_ROWS, xq, 0, 1, out, dt, codes_##name, vdt); \
	}                                                                                          \
	void ref_vec_dot_tile_##name(int64_t n, const void *w, int64_t w_stride, const void *xq,  \
				     int64_t xq_stride, float *out)                                \
	{                                                                                          \
		vec_dot_codes(n, w, w_stride, REF_DOT_ROWS, xq, xq_stride, REF_DOT_X_ROWS, out, dt, \
			      codes_##name, vdt);                                                  \
	}
REF_CODE_DTYPES(REF_DEFINE_CODES)
