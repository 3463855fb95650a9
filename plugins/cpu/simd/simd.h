/* A small f32 vector vocabulary for the row kernels, in the spirit of
 * ggml's GGML_F32_VEC: kernels are written once against vf_* and compiled
 * once per ISA. The target and its flags pick the primitives:
 *   AArch64 (AdvSIMD, baseline)                 -> arm/simd_neon.h, 4 lanes
 *   -mavx2 -mfma -mf16c                         -> x86/simd_x86.h, 8 lanes
 *   AVX-512 F/BW/VL/DQ on top                   -> x86/simd_x86.h, 16 lanes
 * and SIMD_NAME(avx2 name, avx512 name, neon name) the build's one of the
 * three names a kernel file spells out where it defines a kernel (so that
 * each is found by grep).
 *
 * Every ISA gives the same primitives with the same meaning (x86's where
 * they differ: vf_max(a, b) and vf_min(a, b) return b when either is NaN;
 * vf_select(m, a, b) is m ? a : b per lane; vf_stream is a non-temporal
 * store of a whole vector to an aligned address where the ISA has one, a
 * plain store elsewhere, and vf_sfence orders those stores). This file
 * adds what is built on them.
 *
 * The transcendental functions (accuracy measured against double over
 * 10^8 points, SPEC/CPU.md):
 *   vf_exp    Cephes-style: 2^n · e^r, r = x − n·ln2 in [−ln2/2, ln2/2]
 *             (two-constant FMA reduction), degree-6 polynomial; ≤ 2 ulp.
 *             −inf and x < −104 give +0, x > 88.73 gives +inf, NaN stays
 *             NaN; subnormal results are rounded once (2^n applied by
 *             vf_mul_pow2: vscalefps, or two half powers), not flushed.
 *   vf_tanh   odd polynomial below |x| 0.625 (Cephes tanhf), else
 *             (1 − e)/(1 + e), e = e^−2|x|, with the sign put back; ±1 for
 *             large |x|; NaN stays NaN.
 *   vf_sigmoid 1/(1 + e^−x) from e^−|x|, so no input overflows.
 *   vf_erfc   (x >= 0) Chebyshev fit t·exp(−x² + P(t)), t = 2/(2 + x)
 *             (Numerical Recipes' erfcc, fractional error < 1.2e-7), the
 *             exponent carried as a float pair so large x keep their
 *             precision.
 *   vf_erf    Taylor series below |x| 0.5, 1 − erfc(|x|) above.
 * Reciprocals (vf_recip) are the hardware estimate and one Newton step on
 * x86, a division on AArch64: about 1 ulp either way.
 */
#ifndef GLLMK_SIMD_H
#define GLLMK_SIMD_H

#if defined(__aarch64__)
#include "../arm/simd_neon.h"
#define SIMD_NAME(avx2_name, avx512_name, neon_name) neon_name
#elif defined(__x86_64__)
#include "../x86/simd_x86.h"
#if VEC_WIDTH == 16
#define SIMD_NAME(avx2_name, avx512_name, neon_name) avx512_name
#else
#define SIMD_NAME(avx2_name, avx512_name, neon_name) avx2_name
#endif
#else
#error "simd.h: no vector vocabulary for this target"
#endif

static inline vf vf_load_n(const float *p, int64_t n)
{
	return vf_load_n_or(p, n, 0.0f);
}

static inline vf vf_abs(vf x)
{
	return vf_and(x, vi_as_vf(vi_set1(0x7fffffff)));
}

/* The sign bit of s on the magnitude of x. */
static inline vf vf_copysign(vf x, vf s)
{
	return vf_or(vf_abs(x), vf_and(s, vf_set1(-0.0f)));
}

/* bf16 <-> f32. Widening is a shift. Narrowing rounds to nearest even by
 * an integer add of 0x7fff plus the kept lsb (a carry rounds up to the
 * next binade or to inf, both correct), keeps subnormals (no DAZ), and
 * turns NaN into a quiet NaN with the top payload kept (fp16.h's
 * f32_to_bf16, bit for bit). */
static inline vf vf_load_bf16(const uint16_t *p)
{
	return vi_as_vf(vi_slli(vi_widen_u16(p), 16));
}

static inline vf vf_load_bf16_n(const uint16_t *p, int64_t n)
{
	return vi_as_vf(vi_slli(vi_widen_u16_n(p, n), 16));
}

static inline vi vf_to_bf16_bits(vf v)
{
	vi x = vf_as_vi(v);
	vi lsb = vi_and(vi_srli(x, 16), vi_set1(1));
	vi rounded = vi_srli(vi_add(x, vi_add(vi_set1(0x7fff), lsb)), 16);
	vi nan = vi_or(vi_srli(x, 16), vi_set1(0x40));

	return vi_select(vf_unord(v, v), nan, rounded);
}

static inline void vf_store_bf16(uint16_t *p, vf v)
{
	vi_narrow_u16(p, vf_to_bf16_bits(v));
}

static inline void vf_store_bf16_n(uint16_t *p, vf v, int64_t n)
{
	vi_narrow_u16_n(p, vf_to_bf16_bits(v), n);
}

/* ------------------------------------------------------------- exp */

#define EXP_HI 88.8f           /* e^x = inf above 88.7228 */
#define EXP_LO -104.0f         /* e^x rounds to +0 below −103.97 */
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693147182464599609375f        /* ln 2 rounded to f32 */
#define LN2_LO -1.904654323148236e-09f         /* ln 2 − LN2_HI */

/* 2^n as an f32, for n in [−126, 127] (an integer vector). */
static inline vf vf_pow2i(vi n)
{
	return vi_as_vf(vi_slli(vi_add(n, vi_set1(127)), 23));
}

/* p·2^fn for integer-valued fn in [−150, 129], rounded once (to a
 * subnormal, to inf). AVX-512 has it in one instruction (vscalefps,
 * simd_x86.h); elsewhere two half powers, each a normal f32, so that the
 * first product is exact and the second rounds once. */
#ifndef vf_mul_pow2
static inline vf vf_mul_pow2(vf p, vf fn)
{
	vi n = vf_to_vi(fn);
	vi n1 = vi_srai(n, 1);

	return vf_mul(vf_mul(p, vf_pow2i(n1)), vf_pow2i(vi_sub(n, n1)));
}
#endif

static inline vf vf_exp(vf x)
{
	/* max/min(bound, x) return x when x is NaN: NaN flows through. */
	x = vf_min(vf_set1(EXP_HI), vf_max(vf_set1(EXP_LO), x));

	vf fn = vf_round(vf_mul(x, vf_set1(LOG2E)));
	vf r = vf_fnma(fn, vf_set1(LN2_HI), x);

	r = vf_fnma(fn, vf_set1(LN2_LO), r);

	/* e^r = 1 + r + r²·P(r), |r| <= ln2/2 (Cephes expf coefficients) */
	vf p = vf_set1(1.9875691500e-4f);

	p = vf_fma(p, r, vf_set1(1.3981999507e-3f));
	p = vf_fma(p, r, vf_set1(8.3334519073e-3f));
	p = vf_fma(p, r, vf_set1(4.1665795894e-2f));
	p = vf_fma(p, r, vf_set1(1.6666665459e-1f));
	p = vf_fma(p, r, vf_set1(5.0000001201e-1f));
	p = vf_fma(vf_mul(p, r), r, vf_add(r, vf_set1(1.0f)));

	return vf_mul_pow2(p, fn);
}

/* ------------------------------------------------------------ tanh */

/* 1/(1 + e^−x) from e = e^−|x| <= 1: the denominator stays in [1, 2],
 * large |x| give exactly 0 or 1, NaN stays NaN. */
static inline vf vf_sigmoid(vf x)
{
	vf e = vf_exp(vf_sub(vf_zero(), vf_abs(x)));
	vf r = vf_recip(vf_add(vf_set1(1.0f), e));

	return vf_select(vf_ge(x, vf_zero()), r, vf_mul(e, r));
}

static inline vf vf_tanh(vf x)
{
	vf a = vf_abs(x);

	/* |x| < 0.625: x + x³·P(x²) (Cephes tanhf) */
	vf z = vf_mul(x, x);
	vf p = vf_set1(-5.70498872745e-3f);

	p = vf_fma(p, z, vf_set1(2.06390887954e-2f));
	p = vf_fma(p, z, vf_set1(-5.37397155531e-2f));
	p = vf_fma(p, z, vf_set1(1.33314422036e-1f));
	p = vf_fma(p, z, vf_set1(-3.33332819422e-1f));
	vf small = vf_fma(vf_mul(p, z), x, x);

	/* else (1 − e)/(1 + e), e = e^−2|x| <= 0.29: no cancellation, and
	 * e = 0 (large |x|) gives exactly 1 */
	vf e = vf_exp(vf_mul(a, vf_set1(-2.0f)));
	vf big = vf_mul(vf_sub(vf_set1(1.0f), e), vf_recip(vf_add(vf_set1(1.0f), e)));

	return vf_select(vf_lt(a, vf_set1(0.625f)), small, vf_copysign(big, x));
}

/* ------------------------------------------------------------- erf */

/* erfc(x) for x >= 0 (or NaN). */
static inline vf vf_erfc(vf x)
{
	/* erfc(10) = 2e-45 already rounds to 0; bounding x keeps x² finite. */
	x = vf_min(vf_set1(10.0f), x);

	vf t = vf_mul(vf_set1(2.0f), vf_recip(vf_add(x, vf_set1(2.0f))));
	vf p = vf_set1(0.17087277f);

	p = vf_fma(p, t, vf_set1(-0.82215223f));
	p = vf_fma(p, t, vf_set1(1.48851587f));
	p = vf_fma(p, t, vf_set1(-1.13520398f));
	p = vf_fma(p, t, vf_set1(0.27886807f));
	p = vf_fma(p, t, vf_set1(-0.18628806f));
	p = vf_fma(p, t, vf_set1(0.09678418f));
	p = vf_fma(p, t, vf_set1(0.37409196f));
	p = vf_fma(p, t, vf_set1(1.00002368f));
	p = vf_fma(p, t, vf_set1(-1.26551223f));

	/* The exponent −x² + P as s + err: x² = hi + lo exactly (FMA), and
	 * s = (P − lo) − hi with its rounding error err recovered (Fast2Sum,
	 * |hi| >= |P − lo| wherever it matters), so e^(s + err) = e^s·(1 + err)
	 * keeps full precision even where x² is large. */
	vf hi = vf_mul(x, x);
	vf lo = vf_fms(x, x, hi);
	vf b = vf_sub(p, lo);
	vf sum = vf_sub(b, hi);
	vf err = vf_sub(vf_add(sum, hi), b);   /* rounding of sum, negated */
	vf e = vf_exp(sum);

	return vf_mul(t, vf_fnma(e, err, e));
}

#define TWO_OVER_SQRT_PI 1.12837916709551257390f

static inline vf vf_erf(vf x)
{
	vf a = vf_abs(x);

	/* |x| < 0.5: (2/√π)·(x − x³/3 + x⁵/10 − x⁷/42 + x⁹/216 − x¹¹/1320 + x¹³/9360) */
	vf z = vf_mul(x, x);
	vf p = vf_set1(1.0f / 9360);

	p = vf_fma(p, z, vf_set1(-1.0f / 1320));
	p = vf_fma(p, z, vf_set1(1.0f / 216));
	p = vf_fma(p, z, vf_set1(-1.0f / 42));
	p = vf_fma(p, z, vf_set1(1.0f / 10));
	p = vf_fma(p, z, vf_set1(-1.0f / 3));
	p = vf_fma(vf_mul(p, z), x, x);
	vf small = vf_mul(p, vf_set1(TWO_OVER_SQRT_PI));
	vf big = vf_copysign(vf_sub(vf_set1(1.0f), vf_erfc(a)), x);

	return vf_select(vf_lt(a, vf_set1(0.5f)), small, big);
}

#endif
