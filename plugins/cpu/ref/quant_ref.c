/* Reference row codecs: each decoder does ggml's arithmetic in ggml's order,
 * so the f32 it produces is bit for bit ggml's to_float (checked against
 * ../shared/vectors/ggml). Layouts and formulas: SPEC/QUANT.md.
 */
#include <math.h>
#include <string.h>

#include "quant_ref.h"
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
REF_DTYPES(REF_DEFINE_VEC_DOT)
