/* The activation encoders of the quantized matmul, bit for bit the
 * reference ones (ref/quant_ref.c): the same f32 operations, four lanes at
 * a time. q8_0 rounds half away from zero (roundf: fcvtas), q8_K half to
 * even (ggml's nearest_int: fcvtns; |x·iscale| <= 127 is far inside the
 * range where both agree). max(|x|) ignores NaN as fmaxf does (fmaxnm).
 */
#include <arm_neon.h>
#include <string.h>

#include "fp16.h"
#include "neon_kernels.h"
#include "quant_blocks.h"

/* max(|x|) of 4·count floats. */
static inline float amax_f32(const float *x, int count)
{
	float32x4_t m = vdupq_n_f32(0.0f);

	for (int i = 0; i < count; i++)
		m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + 4 * i)));
	return vmaxnmvq_f32(m);
}

/* 16 int32 (within ±127) in four vectors to 16 int8 in order. */
static inline int8x16_t narrow_i32x16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d)
{
	const int16x8_t ab = vcombine_s16(vqmovn_s32(a), vqmovn_s32(b));
	const int16x8_t cd = vcombine_s16(vqmovn_s32(c), vqmovn_s32(d));

	return vcombine_s8(vqmovn_s16(ab), vqmovn_s16(cd));
}

void neon_quant_row_q8_0(const float *x, void *dst, int64_t n)
{
	struct block_q8_0 *y = dst;

	for (int64_t i = 0; i < n / QK8_0; i++, x += QK8_0) {
		const float d = amax_f32(x, QK8_0 / 4) / 127;
		const float id = d ? 1.0f / d : 0.0f;

		y[i].d = f32_to_f16(d);
		for (int j = 0; j < QK8_0; j += 16) {
			int32x4_t q[4];

			for (int k = 0; k < 4; k++)
				q[k] = vcvtaq_s32_f32(vmulq_n_f32(vld1q_f32(x + j + 4 * k), id));
			vst1q_s8(y[i].qs + j, narrow_i32x16(q[0], q[1], q[2], q[3]));
		}
	}
}

/* The first element of largest magnitude (ggml keeps the first on ties). */
static inline float first_of_magnitude(const float *x, float amax)
{
	for (int j = 0; j < QK_K; j += 4) {
		const uint32x4_t hit = vceqq_f32(vabsq_f32(vld1q_f32(x + j)), vdupq_n_f32(amax));

		if (vmaxvq_u32(hit))
			for (int l = 0; l < 4; l++)
				if (__builtin_fabsf(x[j + l]) == amax)
					return x[j + l];
	}
	return 0.0f;
}

void neon_quant_row_q8_K(const float *x, void *dst, int64_t n)
{
	struct block_q8_K *y = dst;

	for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
		const float amax = amax_f32(x, QK_K / 4);

		if (amax == 0.0f) {
			memset(&y[i], 0, sizeof(y[i]));
			continue;
		}

		const float iscale = -127.0f / first_of_magnitude(x, amax);
		const int32x4_t hi = vdupq_n_s32(127);

		for (int j = 0; j < QK_K; j += 16) {
			int32x4_t q[4];

			for (int k = 0; k < 4; k++)
				q[k] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + j + 4 * k), iscale)), hi);

			const int8x16_t q8 = narrow_i32x16(q[0], q[1], q[2], q[3]);

			vst1q_s8(y[i].qs + j, q8);
			y[i].bsums[j / 16] = vaddlvq_s8(q8);
		}
		y[i].d = 1.0f / iscale;
	}
}
