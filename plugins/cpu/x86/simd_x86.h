/* The x86 half of the f32 vector vocabulary (vf_*, simd/simd.h): the
 * primitives on ymm or zmm. The compile flags pick the width:
 *   -mavx512f -mavx512bw -mavx512vl -mavx512dq  -> VEC_WIDTH 16 (zmm)
 *   -mavx2 -mfma -mf16c                         -> VEC_WIDTH 8  (ymm)
 *
 * Partial vectors (row tails) go through vf_load_n_or / vf_store_n, which
 * never touch memory past the n-th element: AVX-512 opmasks, AVX2
 * vmaskmovps. 16-bit rows (f16, bf16) have their own loads and stores.
 * Include simd/simd.h, not this file: it adds the functions built on these
 * (exp, tanh, erf, bf16) and the symbol prefix.
 */
#ifndef GLLMK_X86_SIMD_X86_H
#define GLLMK_X86_SIMD_X86_H

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
#define vf_any(m) ((m) != 0)    /* some lane of the mask is set */
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

/* VEC_WIDTH bytes widened to 32-bit lanes (quant blocks in attention's KV). */
static inline vi vi_widen_i8(const int8_t *p)
{
	return _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p));
}

static inline vi vi_widen_u8(const uint8_t *p)
{
	return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
}

#define vi_to_vf(a) _mm512_cvtepi32_ps(a)
/* Every lane the f16 value h (a block's scale). */
#define vf_set1_f16(h) _mm512_set1_ps(_cvtsh_ss(h))

/* Lanes below n from a, the others from b. */
#define vf_first_n(n, a, b) _mm512_mask_blend_ps(vf_tail_mask(n), (b), (a))
/* (v0, v1, v2, v3, ...) -> (v1, v0, v3, v2, ...) */
#define vf_swap_pairs(v) _mm512_permute_ps((v), 0xb1)
/* p·2^fn, fn integer-valued: one rounding (simd.h) */
#define vf_mul_pow2(p, fn) _mm512_scalef_ps((p), (fn))
/* 1/d to a relative 2^-14 */
#define vf_rcp_estimate(d) _mm512_rcp14_ps(d)
/* A non-temporal store of a whole vector to a 64-byte aligned p. */
#define vf_stream(p, v) _mm512_stream_ps((p), (v))

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
#define vf_any(m) (_mm256_movemask_ps(m) != 0)
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

/* The 8 lanes' sum or max: halves, pairs, the last two. */
#define DEFINE_HREDUCE(name, op)                                                        \
	static inline float name(vf v)                                                  \
	{                                                                               \
		__m128 s = _mm_##op##_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); \
		s = _mm_##op##_ps(s, _mm_movehl_ps(s, s));                              \
		return _mm_cvtss_f32(_mm_##op##_ss(s, _mm_movehdup_ps(s)));             \
	}

DEFINE_HREDUCE(vf_hsum, add)
DEFINE_HREDUCE(vf_hmax, max)

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

/* VEC_WIDTH bytes widened to 32-bit lanes (quant blocks in attention's KV). */
static inline vi vi_widen_i8(const int8_t *p)
{
	return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

static inline vi vi_widen_u8(const uint8_t *p)
{
	return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

#define vi_to_vf(a) _mm256_cvtepi32_ps(a)
/* Every lane the f16 value h (a block's scale). */
#define vf_set1_f16(h) _mm256_set1_ps(_cvtsh_ss(h))

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

#define vf_first_n(n, a, b) _mm256_blendv_ps((b), (a), _mm256_castsi256_ps(vf_tail_mask(n)))
/* Pairs never cross a 128-bit lane. */
#define vf_swap_pairs(v) _mm256_permute_ps((v), 0xb1)
/* 1/d to a relative 1.5·2^-12 */
#define vf_rcp_estimate(d) _mm256_rcp_ps(d)
/* A non-temporal store of a whole vector to a 32-byte aligned p. */
#define vf_stream(p, v) _mm256_stream_ps((p), (v))

#else
#error "simd_x86.h needs -mavx2 -mfma -mf16c, or AVX-512 F/BW/VL/DQ on top"
#endif

/* Orders the non-temporal stores before what follows (another thread's
 * read of the output after the pool's barrier). */
#define vf_sfence() _mm_sfence()

/* 1/d for finite d > 0 to about 1 ulp: the estimate and one Newton step,
 * several times the throughput of a division. d = inf or 0 gives NaN:
 * callers keep d in range. */
static inline vf vf_recip(vf d)
{
	vf r = vf_rcp_estimate(d);

	return vf_fma(r, vf_fnma(d, r, vf_set1(1.0f)), r);
}

#endif
