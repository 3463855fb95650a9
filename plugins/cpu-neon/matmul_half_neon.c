/* f16 and bf16 weight rows against f32 activations: each weight is widened
 * to f32 exactly (fcvtl, or a 16-bit shift for bf16) and multiplied by the
 * f32 activation in f32, so x is never rounded to 16 bits. Four
 * accumulators of four lanes hide the FMA latency. */
#include <arm_neon.h>

#include "fp16.h"
#include "neon_kernels.h"

static inline void widen_f16(uint16x8_t h, float32x4_t *lo, float32x4_t *hi)
{
	const float16x8_t f = vreinterpretq_f16_u16(h);

	*lo = vcvt_f32_f16(vget_low_f16(f));
	*hi = vcvt_high_f32_f16(f);
}

static inline void widen_bf16(uint16x8_t h, float32x4_t *lo, float32x4_t *hi)
{
	*lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
	*hi = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
}

#define DEFINE_HALF_DOT(name, WIDEN, TO_F32)                                            \
	float neon_vec_dot_##name(int64_t n, const void *w, const void *xv)             \
	{                                                                               \
		const uint16_t *h = w;                                                  \
		const float *x = xv;                                                    \
		float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;          \
		float32x4_t w0, w1, w2, w3;                                             \
		int64_t i = 0;                                                          \
		for (; i + 16 <= n; i += 16) {                                          \
			WIDEN(vld1q_u16(h + i), &w0, &w1);                              \
			WIDEN(vld1q_u16(h + i + 8), &w2, &w3);                          \
			s0 = vfmaq_f32(s0, w0, vld1q_f32(x + i));                       \
			s1 = vfmaq_f32(s1, w1, vld1q_f32(x + i + 4));                   \
			s2 = vfmaq_f32(s2, w2, vld1q_f32(x + i + 8));                   \
			s3 = vfmaq_f32(s3, w3, vld1q_f32(x + i + 12));                  \
		}                                                                       \
		for (; i + 8 <= n; i += 8) {                                            \
			WIDEN(vld1q_u16(h + i), &w0, &w1);                              \
			s0 = vfmaq_f32(s0, w0, vld1q_f32(x + i));                       \
			s1 = vfmaq_f32(s1, w1, vld1q_f32(x + i + 4));                   \
		}                                                                       \
		float sum = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3))); \
		for (; i < n; i++)                                                      \
			sum += TO_F32(h[i]) * x[i];                                     \
		return sum;                                                             \
	}

DEFINE_HALF_DOT(f16, widen_f16, f16_to_f32)
DEFINE_HALF_DOT(bf16, widen_bf16, bf16_to_f32)
