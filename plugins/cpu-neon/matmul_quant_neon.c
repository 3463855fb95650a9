/* Quantized weight rows against quantized activations, in integer dot
 * products: q8_0 and q4_0 against q8_0 (one f32 scale product per 32),
 * q4_K and q6_K against q8_K (sub-block scales applied to integer sums, the
 * mins and q6_K's −32 offset through q8_K's bsums), as ggml does.
 *
 * Built twice (meson.build): plain AdvSIMD as neon_* (smull + sadalp,
 * any AArch64 CPU), and with -march=armv8.2-a+dotprod -DNEON_DOTPROD as
 * neondot_* (sdot); open picks the table by HWCAP_ASIMDDP. Integer sums
 * are exact either way, so both flavours give the same result.
 */
#include <arm_neon.h>

#include "fp16.h"
#include "neon_kernels.h"
#include "quant_blocks.h"

#ifdef NEON_DOTPROD
#define QFN(name) neondot_##name

/* acc + four sums of four products of signed bytes. */
static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	return vdotq_s32(acc, a, b);
}
#else
#define QFN(name) neon_##name

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	return vpadalq_s16(acc, vmull_high_s8(a, b));
}
#endif

/* Σ a·b over 32 signed bytes. */
static inline int32x4_t dot32(int32x4_t acc, int8x16_t a0, int8x16_t a1, const int8_t *b)
{
	return dot16(dot16(acc, a0, vld1q_s8(b)), a1, vld1q_s8(b + 16));
}

/* ------------------------------------------------ 32-element blocks */

float QFN(vec_dot_q8_0)(int64_t n, const void *w, const void *xq)
{
	const struct block_q8_0 *x = w;
	const struct block_q8_0 *y = xq;
	float32x4_t acc = vdupq_n_f32(0.0f);

	for (int64_t i = 0; i < n / QK8_0; i++) {
		const int32x4_t p = dot32(vdupq_n_s32(0), vld1q_s8(x[i].qs), vld1q_s8(x[i].qs + 16), y[i].qs);

		acc = vfmaq_n_f32(acc, vcvtq_f32_s32(p), f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
	}
	return vaddvq_f32(acc);
}

/* q4_0: low nibbles are x[0..15], high nibbles x[16..31], minus 8. */
float QFN(vec_dot_q4_0)(int64_t n, const void *w, const void *xq)
{
	const struct block_q4_0 *x = w;
	const struct block_q8_0 *y = xq;
	const int8x16_t eight = vdupq_n_s8(8);
	float32x4_t acc = vdupq_n_f32(0.0f);

	for (int64_t i = 0; i < n / QK4_0; i++) {
		const uint8x16_t q = vld1q_u8(x[i].qs);
		const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0f))), eight);
		const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
		const int32x4_t p = dot32(vdupq_n_s32(0), lo, hi, y[i].qs);

		acc = vfmaq_n_f32(acc, vcvtq_f32_s32(p), f16_to_f32(x[i].d) * f16_to_f32(y[i].d));
	}
	return vaddvq_f32(acc);
}

/* ----------------------------------------------- 256-element blocks */

/* q4_K's eight 6-bit scales and mins (ggml's get_scale_min_k4). */
static inline void q4_K_scales(const uint8_t *q, uint8_t sc[8], uint8_t mn[8])
{
	for (int j = 0; j < 4; j++) {
		sc[j] = q[j] & 63;
		mn[j] = q[j + 4] & 63;
		sc[j + 4] = (q[j + 8] & 0x0f) | ((q[j] >> 6) << 4);
		mn[j + 4] = (q[j + 8] >> 4) | ((q[j + 4] >> 6) << 4);
	}
}

/* Each 64 elements: 32 bytes of qs, low nibbles with scale 2j, high
 * nibbles with scale 2j + 1. Σ d·sc·q·x − dmin·m·x, the second term from
 * the bsums (two groups of 16 per sub-block of 32). */
float QFN(vec_dot_q4_K)(int64_t n, const void *w, const void *xq)
{
	const struct block_q4_K *x = w;
	const struct block_q8_K *y = xq;
	const uint8x16_t low4 = vdupq_n_u8(0x0f);
	float sum = 0.0f;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const uint8_t *q4 = x[i].qs;
		const int8_t *q8 = y[i].qs;
		uint8_t sc[8], mn[8];
		int32_t sumi = 0, summ = 0;

		q4_K_scales(x[i].scales, sc, mn);
		for (int j = 0; j < 8; j++)
			summ += mn[j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
		for (int j = 0; j < 4; j++, q4 += 32, q8 += 64) {
			const uint8x16_t a0 = vld1q_u8(q4), a1 = vld1q_u8(q4 + 16);
			const int32x4_t lo = dot32(vdupq_n_s32(0), vreinterpretq_s8_u8(vandq_u8(a0, low4)),
						   vreinterpretq_s8_u8(vandq_u8(a1, low4)), q8);
			const int32x4_t hi = dot32(vdupq_n_s32(0), vreinterpretq_s8_u8(vshrq_n_u8(a0, 4)),
						   vreinterpretq_s8_u8(vshrq_n_u8(a1, 4)), q8 + 32);

			sumi += vaddvq_s32(lo) * sc[2 * j] + vaddvq_s32(hi) * sc[2 * j + 1];
		}
		sum += y[i].d * f16_to_f32(x[i].d) * (float)sumi - y[i].d * f16_to_f32(x[i].dmin) * (float)summ;
	}
	return sum;
}

/* q6_K: per 128 elements, 64 bytes of low nibbles (ql) and 32 of high
 * pairs (qh); group g of 16 elements has scale g. Quants are taken as
 * 0..63 and the −32 comes back as 32·Σ sc·bsum. */
float QFN(vec_dot_q6_K)(int64_t n, const void *w, const void *xq)
{
	const struct block_q6_K *x = w;
	const struct block_q8_K *y = xq;
	const uint8x16_t low4 = vdupq_n_u8(0x0f), bits45 = vdupq_n_u8(0x30);
	float sum = 0.0f;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const uint8_t *ql = x[i].ql, *qh = x[i].qh;
		const int8_t *q8 = y[i].qs, *sc = x[i].scales;
		int32_t sumi = 0, offset = 0;

		for (int g = 0; g < QK_K / 16; g++)
			offset += sc[g] * y[i].bsums[g];
		for (int c = 0; c < 2; c++, ql += 64, qh += 32, q8 += 128, sc += 8) {
			const uint8x16_t h0 = vld1q_u8(qh), h1 = vld1q_u8(qh + 16);
			const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 16);
			const uint8x16_t l2 = vld1q_u8(ql + 32), l3 = vld1q_u8(ql + 48);
			const uint8x16_t q[8] = {
				vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(h0, vdupq_n_u8(3)), 4)),
				vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(h1, vdupq_n_u8(3)), 4)),
				vorrq_u8(vandq_u8(l2, low4), vandq_u8(vshlq_n_u8(h0, 2), bits45)),
				vorrq_u8(vandq_u8(l3, low4), vandq_u8(vshlq_n_u8(h1, 2), bits45)),
				vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(h0, bits45)),
				vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(h1, bits45)),
				vorrq_u8(vshrq_n_u8(l2, 4), vandq_u8(vshrq_n_u8(h0, 2), bits45)),
				vorrq_u8(vshrq_n_u8(l3, 4), vandq_u8(vshrq_n_u8(h1, 2), bits45)),
			};

			for (int g = 0; g < 8; g++)
				sumi += sc[g] * vaddvq_s32(dot16(vdupq_n_s32(0), vreinterpretq_s8_u8(q[g]), vld1q_s8(q8 + 16 * g)));
		}
		sum += y[i].d * f16_to_f32(x[i].d) * (float)(sumi - 32 * offset);
	}
	return sum;
}
