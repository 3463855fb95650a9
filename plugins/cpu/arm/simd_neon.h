/* AdvSIMD (NEON) helpers for the AArch64 row kernels (rows_neon.c): row
 * tails and the transcendental functions on float32x4_t. AdvSIMD is part of
 * the AArch64 base ISA, so nothing here needs a -march flag.
 *
 * The functions follow the x86 vector layer's algorithms (plugins/cpu/x86/
 * simd.h, accuracy in SPEC/CPU.md), so that every CPU plugin rounds alike:
 *   vf_exp     2^n · e^r, r = x − n·ln2 (two-constant FMA reduction),
 *              Cephes degree-6 polynomial; −inf and x < −104 give +0,
 *              x > 88.73 gives +inf, NaN stays NaN, subnormal results are
 *              rounded once (2^n applied as two half powers).
 *   vf_sigmoid 1/(1 + e^−x) from e^−|x|, so no input overflows.
 *   vf_tanh    odd polynomial below |x| 0.625, else (1 − e)/(1 + e),
 *              e = e^−2|x|, sign put back.
 *   vf_erfc    (x >= 0) t·exp(−x² + P(t)), t = 2/(2 + x), the exponent
 *              carried as a float pair.
 * Divisions are AArch64's exact vector divide (no estimate + Newton).
 */
#ifndef GLLMK_ARM_SIMD_NEON_H
#define GLLMK_ARM_SIMD_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#define VEC_WIDTH 4
typedef float32x4_t vf;

/* ------------------------------------------------------------ tails */

/* The first n (< 4) elements of p; the other lanes hold `fill`. Never
 * touches memory past p[n − 1]. */
static inline vf vf_load_n_or(const float *p, int64_t n, float fill)
{
	float buf[VEC_WIDTH] = { fill, fill, fill, fill };

	memcpy(buf, p, (size_t)n * sizeof(float));
	return vld1q_f32(buf);
}

static inline vf vf_load_n(const float *p, int64_t n)
{
	return vf_load_n_or(p, n, 0.0f);
}

static inline void vf_store_n(float *p, vf v, int64_t n)
{
	float buf[VEC_WIDTH];

	vst1q_f32(buf, v);
	memcpy(p, buf, (size_t)n * sizeof(float));
}

/* ------------------------------------------------------------- exp */

#define EXP_HI 88.8f           /* e^x = inf above 88.7228 */
#define EXP_LO -104.0f         /* e^x rounds to +0 below −103.97 */
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693147182464599609375f
#define LN2_LO -1.904654323148236e-09f

/* 2^n for n in [−126, 127]. */
static inline vf vf_pow2i(int32x4_t n)
{
	return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23));
}

/* a·b + c and c − a·b, in the x86 layer's argument order. */
#define vf_fma(a, b, c) vfmaq_f32((c), (a), (b))
#define vf_fnma(a, b, c) vfmsq_f32((c), (a), (b))

static inline vf vf_exp(vf x)
{
	/* vmaxq/vminq propagate NaN, so NaN flows through the clamp. */
	x = vminq_f32(vdupq_n_f32(EXP_HI), vmaxq_f32(vdupq_n_f32(EXP_LO), x));

	vf fn = vrndnq_f32(vmulq_n_f32(x, LOG2E));
	vf r = vf_fnma(fn, vdupq_n_f32(LN2_HI), x);

	r = vf_fnma(fn, vdupq_n_f32(LN2_LO), r);

	vf p = vdupq_n_f32(1.9875691500e-4f);

	p = vf_fma(p, r, vdupq_n_f32(1.3981999507e-3f));
	p = vf_fma(p, r, vdupq_n_f32(8.3334519073e-3f));
	p = vf_fma(p, r, vdupq_n_f32(4.1665795894e-2f));
	p = vf_fma(p, r, vdupq_n_f32(1.6666665459e-1f));
	p = vf_fma(p, r, vdupq_n_f32(5.0000001201e-1f));
	p = vf_fma(vmulq_f32(p, r), r, vaddq_f32(r, vdupq_n_f32(1.0f)));

	int32x4_t n = vcvtq_s32_f32(fn);
	int32x4_t n1 = vshrq_n_s32(n, 1);

	return vmulq_f32(vmulq_f32(p, vf_pow2i(n1)), vf_pow2i(vsubq_s32(n, n1)));
}

/* ------------------------------------------------------ tanh, sigmoid */

static inline vf vf_copysign(vf x, vf s)
{
	return vbslq_f32(vdupq_n_u32(0x80000000u), s, vabsq_f32(x));
}

static inline vf vf_sigmoid(vf x)
{
	vf e = vf_exp(vnegq_f32(vabsq_f32(x)));
	vf r = vdivq_f32(vdupq_n_f32(1.0f), vaddq_f32(vdupq_n_f32(1.0f), e));

	return vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), r, vmulq_f32(e, r));
}

static inline vf vf_tanh(vf x)
{
	vf a = vabsq_f32(x);
	vf z = vmulq_f32(x, x);
	vf p = vdupq_n_f32(-5.70498872745e-3f);

	p = vf_fma(p, z, vdupq_n_f32(2.06390887954e-2f));
	p = vf_fma(p, z, vdupq_n_f32(-5.37397155531e-2f));
	p = vf_fma(p, z, vdupq_n_f32(1.33314422036e-1f));
	p = vf_fma(p, z, vdupq_n_f32(-3.33332819422e-1f));
	vf small = vf_fma(vmulq_f32(p, z), x, x);

	vf e = vf_exp(vmulq_n_f32(a, -2.0f));
	vf big = vdivq_f32(vsubq_f32(vdupq_n_f32(1.0f), e), vaddq_f32(vdupq_n_f32(1.0f), e));

	return vbslq_f32(vcltq_f32(a, vdupq_n_f32(0.625f)), small, vf_copysign(big, x));
}

/* ------------------------------------------------------------- erfc */

/* erfc(x) for x >= 0 (or NaN). */
static inline vf vf_erfc(vf x)
{
	x = vminq_f32(vdupq_n_f32(10.0f), x);

	vf t = vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(x, vdupq_n_f32(2.0f)));
	vf p = vdupq_n_f32(0.17087277f);

	p = vf_fma(p, t, vdupq_n_f32(-0.82215223f));
	p = vf_fma(p, t, vdupq_n_f32(1.48851587f));
	p = vf_fma(p, t, vdupq_n_f32(-1.13520398f));
	p = vf_fma(p, t, vdupq_n_f32(0.27886807f));
	p = vf_fma(p, t, vdupq_n_f32(-0.18628806f));
	p = vf_fma(p, t, vdupq_n_f32(0.09678418f));
	p = vf_fma(p, t, vdupq_n_f32(0.37409196f));
	p = vf_fma(p, t, vdupq_n_f32(1.00002368f));
	p = vf_fma(p, t, vdupq_n_f32(-1.26551223f));

	/* −x² + P as sum + err: x² = hi + lo exactly, Fast2Sum for the rest. */
	vf hi = vmulq_f32(x, x);
	vf lo = vnegq_f32(vfmsq_f32(hi, x, x));   /* x·x − hi, exact */
	vf b = vsubq_f32(p, lo);
	vf sum = vsubq_f32(b, hi);
	vf err = vsubq_f32(vaddq_f32(sum, hi), b);
	vf e = vf_exp(sum);

	return vmulq_f32(t, vf_fnma(e, err, e));
}

#endif
