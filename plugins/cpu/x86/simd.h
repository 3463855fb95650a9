/* A small f32 vector abstraction for the x86 row kernels (rows_x86.c),
 * in the spirit of ggml's GGML_F32_VEC: the kernels are written once
 * against vf_* and compiled twice. The compile flags pick the width:
 *   -mavx512f -mavx512bw -mavx512vl -mavx512dq  -> VEC_WIDTH 16 (zmm)
 *   -mavx2 -mfma -mf16c                         -> VEC_WIDTH 8  (ymm)
 *
 * Partial vectors (row tails) go through vf_load_n / vf_store_n, which
 * never touch memory past the n-th element: AVX-512 opmasks, AVX2
 * vmaskmovps. 16-bit rows (f16, bf16) have their own loads and stores.
 *
 * The transcendental functions (accuracy measured against double over
 * 10^8 points, SPEC/CPU.md):
 *   vf_exp    Cephes-style: 2^n · e^r, r = x − n·ln2 in [−ln2/2, ln2/2]
 *             (two-constant FMA reduction), degree-6 polynomial; ≤ 2 ulp.
 *             −inf and x < −104 give +0, x > 88.73 gives +inf, NaN stays
 *             NaN; subnormal results are rounded once (2^n applied as two
 *             half powers), not flushed.
 *   vf_tanh   odd polynomial below |x| 0.625 (Cephes tanhf), else
 *             (1 − e)/(1 + e), e = e^−2|x|, with the sign put back; ±1 for
 *             large |x|; NaN stays NaN.
 *   vf_sigmoid 1/(1 + e^−x) from e^−|x|, so no input overflows.
 *   vf_erfc   (x >= 0) Chebyshev fit t·exp(−x² + P(t)), t = 2/(2 + x)
 *             (Numerical Recipes' erfcc, fractional error < 1.2e-7), the
 *             exponent carried as a float pair so large x keep their
 *             precision.
 *   vf_erf    Taylor series below |x| 0.5, 1 − erfc(|x|) above.
 */
#ifndef GLLMK_X86_SIMD_H
#define GLLMK_X86_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)

#define VEC_WIDTH 16
typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vmask;

#define vf_zero() _mm512_setzero_ps()
#define vf_set1(f) _mm512_set1_ps(f)
#define vf_load(p) _mm512_loadu_ps(p)
#define vf_store(p, v) _mm512_storeu_ps((p), (v))
#define vf_add(a, b) _mm512_add_ps((a), (b))
#define vf_sub(a, b) _mm512_sub_ps((a), (b))
#define vf_mul(a, b) _mm512_mul_ps((a), (b))
#define vf_div(a, b) _mm512_div_ps((a), (b))
#define vf_fma(a, b, c) _mm512_fmadd_ps((a), (b), (c))    /* a·b + c */
#define vf_fnma(a, b, c) _mm512_fnmadd_ps((a), (b), (c))  /* c − a·b */
#define vf_fms(a, b, c) _mm512_fmsub_ps((a), (b), (c))    /* a·b − c */
/* x86 max/min return the second operand when either is NaN. */
#define vf_max(a, b) _mm512_max_ps((a), (b))
#define vf_min(a, b) _mm512_min_ps((a), (b))
#define vf_round(a) _mm512_roundscale_ps((a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define vf_and(a, b) _mm512_and_ps((a), (b))
#define vf_or(a, b) _mm512_or_ps((a), (b))
#define vf_xor(a, b) _mm512_xor_ps((a), (b))
#define vf_to_vi(a) _mm512_cvttps_epi32(a)
#define vi_add(a, b) _mm512_add_epi32((a), (b))
#define vi_sub(a, b) _mm512_sub_epi32((a), (b))
#define vi_and(a, b) _mm512_and_si512((a), (b))
#define vi_or(a, b) _mm512_or_si512((a), (b))
#define vi_set1(i) _mm512_set1_epi32(i)
#define vi_srai(a, n) _mm512_srai_epi32((a), (n))
#define vi_srli(a, n) _mm512_srli_epi32((a), (n))
#define vi_slli(a, n) _mm512_slli_epi32((a), (n))
#define vi_as_vf(a) _mm512_castsi512_ps(a)
#define vf_as_vi(a) _mm512_castps_si512(a)

/* Comparisons give a mask; vf_select(m, a, b) = m ? a : b per lane. */
#define vf_lt(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_LT_OQ)
#define vf_ge(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_GE_OQ)
#define vf_unord(a, b) _mm512_cmp_ps_mask((a), (b), _CMP_UNORD_Q)
#define vi_gt(a, b) _mm512_cmpgt_epi32_mask((a), (b))
#define vf_select(m, a, b) _mm512_mask_blend_ps((m), (b), (a))
#define vi_select(m, a, b) _mm512_mask_blend_epi32((m), (b), (a))

static inline vmask vf_tail_mask(int64_t n)
{
	return (vmask)((1u << n) - 1u);
}

/* The first n (< VEC_WIDTH) elements; the other lanes hold `fill`. */
static inline vf vf_load_n_or(const float *p, int64_t n, float fill)
{
	return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), vf_tail_mask(n), p);
}

static inline void vf_store_n(float *p, vf v, int64_t n)
{
	_mm512_mask_storeu_ps(p, vf_tail_mask(n), v);
}

static inline float vf_hsum(vf v)
{
	return _mm512_reduce_add_ps(v);
}

static inline float vf_hmax(vf v)
{
	return _mm512_reduce_max_ps(v);
}

/* f16: F16C widening is exact; narrowing rounds to nearest even, keeps
 * subnormals, overflows to ±inf and quiets NaN (as fp16.h). */
static inline vf vf_load_f16(const uint16_t *p)
{
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

static inline vf vf_load_f16_n(const uint16_t *p, int64_t n)
{
	return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(vf_tail_mask(n), p));
}

static inline void vf_store_f16(uint16_t *p, vf v)
{
	_mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

static inline void vf_store_f16_n(uint16_t *p, vf v, int64_t n)
{
	_mm256_mask_storeu_epi16(p, vf_tail_mask(n), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* bf16 lanes as the low halves of 32-bit lanes and back. */
static inline vi vi_widen_u16(const uint16_t *p)
{
	return _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
}

static inline vi vi_widen_u16_n(const uint16_t *p, int64_t n)
{
	return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(vf_tail_mask(n), p));
}

static inline void vi_narrow_u16(uint16_t *p, vi v)
{
	_mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(v));
}

static inline void vi_narrow_u16_n(uint16_t *p, vi v, int64_t n)
{
	_mm512_mask_cvtepi32_storeu_epi16(p, vf_tail_mask(n), v);
}

#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#define VEC_WIDTH 8
typedef __m256 vf;
typedef __m256i vi;
typedef __m256 vmask;   /* all-ones lanes */

#define vf_zero() _mm256_setzero_ps()
#define vf_set1(f) _mm256_set1_ps(f)
#define vf_load(p) _mm256_loadu_ps(p)
#define vf_store(p, v) _mm256_storeu_ps((p), (v))
#define vf_add(a, b) _mm256_add_ps((a), (b))
#define vf_sub(a, b) _mm256_sub_ps((a), (b))
#define vf_mul(a, b) _mm256_mul_ps((a), (b))
#define vf_div(a, b) _mm256_div_ps((a), (b))
#define vf_fma(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define vf_fnma(a, b, c) _mm256_fnmadd_ps((a), (b), (c))
#define vf_fms(a, b, c) _mm256_fmsub_ps((a), (b), (c))
#define vf_max(a, b) _mm256_max_ps((a), (b))
#define vf_min(a, b) _mm256_min_ps((a), (b))
#define vf_round(a) _mm256_round_ps((a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define vf_and(a, b) _mm256_and_ps((a), (b))
#define vf_or(a, b) _mm256_or_ps((a), (b))
#define vf_xor(a, b) _mm256_xor_ps((a), (b))
#define vf_to_vi(a) _mm256_cvttps_epi32(a)
#define vi_add(a, b) _mm256_add_epi32((a), (b))
#define vi_sub(a, b) _mm256_sub_epi32((a), (b))
#define vi_and(a, b) _mm256_and_si256((a), (b))
#define vi_or(a, b) _mm256_or_si256((a), (b))
#define vi_set1(i) _mm256_set1_epi32(i)
#define vi_srai(a, n) _mm256_srai_epi32((a), (n))
#define vi_srli(a, n) _mm256_srli_epi32((a), (n))
#define vi_slli(a, n) _mm256_slli_epi32((a), (n))
#define vi_as_vf(a) _mm256_castsi256_ps(a)
#define vf_as_vi(a) _mm256_castps_si256(a)

#define vf_lt(a, b) _mm256_cmp_ps((a), (b), _CMP_LT_OQ)
#define vf_ge(a, b) _mm256_cmp_ps((a), (b), _CMP_GE_OQ)
#define vf_unord(a, b) _mm256_cmp_ps((a), (b), _CMP_UNORD_Q)
#define vi_gt(a, b) _mm256_castsi256_ps(_mm256_cmpgt_epi32((a), (b)))
#define vf_select(m, a, b) _mm256_blendv_ps((b), (a), (m))
#define vi_select(m, a, b) _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), \
								   _mm256_castsi256_ps(a), (m)))

/* Lanes below n all-ones: the mask vmaskmovps wants. */
static inline __m256i vf_tail_mask(int64_t n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline vf vf_load_n_or(const float *p, int64_t n, float fill)
{
	__m256i m = vf_tail_mask(n);

	return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}

static inline void vf_store_n(float *p, vf v, int64_t n)
{
	_mm256_maskstore_ps(p, vf_tail_mask(n), v);
}

static inline float vf_hsum(vf v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline float vf_hmax(vf v)
{
	__m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_max_ps(s, _mm_movehl_ps(s, s));
	s = _mm_max_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

/* 16-bit tails: AVX2 has no 16-bit masked moves, so they go through an
 * 8-lane buffer on the stack (a tail is at most 7 elements). */
static inline __m128i load_u16_n(const uint16_t *p, int64_t n)
{
	uint16_t buf[8] = { 0 };

	for (int64_t i = 0; i < n; i++)
		buf[i] = p[i];
	return _mm_loadu_si128((const __m128i *)buf);
}

static inline void store_u16_n(uint16_t *p, __m128i v, int64_t n)
{
	uint16_t buf[8];

	_mm_storeu_si128((__m128i *)buf, v);
	for (int64_t i = 0; i < n; i++)
		p[i] = buf[i];
}

static inline vf vf_load_f16(const uint16_t *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static inline vf vf_load_f16_n(const uint16_t *p, int64_t n)
{
	return _mm256_cvtph_ps(load_u16_n(p, n));
}

static inline void vf_store_f16(uint16_t *p, vf v)
{
	_mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

static inline void vf_store_f16_n(uint16_t *p, vf v, int64_t n)
{
	store_u16_n(p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), n);
}

static inline vi vi_widen_u16(const uint16_t *p)
{
	return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
}

static inline vi vi_widen_u16_n(const uint16_t *p, int64_t n)
{
	return _mm256_cvtepu16_epi32(load_u16_n(p, n));
}

/* Values are < 2^16, so the unsigned saturating pack is exact. */
static inline __m128i narrow_u16(vi v)
{
	return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

static inline void vi_narrow_u16(uint16_t *p, vi v)
{
	_mm_storeu_si128((__m128i *)p, narrow_u16(v));
}

static inline void vi_narrow_u16_n(uint16_t *p, vi v, int64_t n)
{
	store_u16_n(p, narrow_u16(v), n);
}

#else
#error "simd.h needs -mavx2 -mfma -mf16c, or AVX-512 F/BW/VL/DQ on top"
#endif

static inline vf vf_load_n(const float *p, int64_t n)
{
	return vf_load_n_or(p, n, 0.0f);
}

/* Lanes below n from a, the others from b. */
static inline vf vf_first_n(int64_t n, vf a, vf b)
{
#if VEC_WIDTH == 16
	return _mm512_mask_blend_ps(vf_tail_mask(n), b, a);
#else
	return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(vf_tail_mask(n)));
#endif
}

/* (v0, v1, v2, v3, ...) -> (v1, v0, v3, v2, ...): pairs never cross a
 * 128-bit lane. */
static inline vf vf_swap_pairs(vf v)
{
#if VEC_WIDTH == 16
	return _mm512_permute_ps(v, 0xb1);
#else
	return _mm256_permute_ps(v, 0xb1);
#endif
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

/* 1/d for finite d > 0 to about 1 ulp: the hardware estimate (2^-14
 * AVX-512, 2^-12 AVX2) and one Newton step, several times the throughput
 * of a division. d = inf or 0 gives NaN: callers keep d in range. */
static inline vf vf_recip(vf d)
{
#if VEC_WIDTH == 16
	vf r = _mm512_rcp14_ps(d);
#else
	vf r = _mm256_rcp_ps(d);
#endif
	return vf_fma(r, vf_fnma(d, r, vf_set1(1.0f)), r);
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

	/* n in [−150, 129]: two half powers, each a normal f32, so that the
	 * first product is exact and the second rounds once (to a subnormal,
	 * to inf). */
	vi n = vf_to_vi(fn);
	vi n1 = vi_srai(n, 1);

	return vf_mul(vf_mul(p, vf_pow2i(n1)), vf_pow2i(vi_sub(n, n1)));
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
