/* The activation encoders of the quantized matmul, bit for bit the
 * reference ones (ref/quant_ref.c): the same f32 operations in the same
 * order, only eight lanes at a time. q8_0 rounds half away from zero
 * (roundf), q8_K half to even (ggml's nearest_int; vcvtps2dq under the
 * default MXCSR rounding, and |x·iscale| <= 127 stays far inside the
 * range where both agree).
 */
#include <immintrin.h>
#include <string.h>

#include "avx2_kernels.h"
#include "quant_blocks.h"

static inline float hmax_ps(__m256 v)
{
	__m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_max_ps(s, _mm_movehl_ps(s, s));
	s = _mm_max_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline __m256 abs_ps(__m256 v)
{
	return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

/* max(|x|) of 8·count floats, NaN ignored as fmaxf does: vmaxps returns
 * its second operand when either is NaN, and that is the running max. */
static inline float amax_ps(const float *x, int count)
{
	__m256 m = _mm256_setzero_ps();

	for (int i = 0; i < count; i++)
		m = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + 8 * i)), m);
	return hmax_ps(m);
}

/* roundf: truncate, then step away from zero when the exact remainder
 * (v − trunc(v) is exact in f32) reaches one half. */
static inline __m256i round_half_away(__m256 v)
{
	const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
	const __m256 up = _mm256_cmp_ps(abs_ps(_mm256_sub_ps(v, t)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
	const __m256 step = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(v, _mm256_set1_ps(-0.0f)));

	return _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, step)));
}

/* 32 int32 in four vectors to 32 int8 in order (values within ±127). */
static inline __m256i pack_i32x32(__m256i a, __m256i b, __m256i c, __m256i d)
{
	/* the packs interleave 128-bit halves: a0 b0 a1 b1 ... restore order */
	const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);

	return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

void avx2_quant_row_q8_0(const float *x, void *dst, int64_t n)
{
	struct block_q8_0 *y = dst;

	for (int64_t i = 0; i < n / QK8_0; i++, x += QK8_0) {
		const float d = amax_ps(x, 4) / 127;
		const __m256 id = _mm256_set1_ps(d ? 1.0f / d : 0.0f);
		__m256i q[4];

		y[i].d = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
		for (int j = 0; j < 4; j++)
			q[j] = round_half_away(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * j), id));
		_mm256_storeu_si256((__m256i *)y[i].qs, pack_i32x32(q[0], q[1], q[2], q[3]));
	}
}

/* The first element of largest magnitude (ggml keeps the first on ties). */
static inline float first_of_magnitude(const float *x, float amax)
{
	const __m256 m = _mm256_set1_ps(amax);

	for (int j = 0; j < QK_K; j += 8) {
		const int hit = _mm256_movemask_ps(_mm256_cmp_ps(abs_ps(_mm256_loadu_ps(x + j)), m, _CMP_EQ_OQ));

		if (hit)
			return x[j + __builtin_ctz((unsigned)hit)];
	}
	return 0.0f;
}

void avx2_quant_row_q8_K(const float *x, void *dst, int64_t n)
{
	struct block_q8_K *y = dst;

	for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
		const float amax = amax_ps(x, QK_K / 8);

		if (amax == 0.0f) {
			memset(&y[i], 0, sizeof(y[i]));
			continue;
		}

		const float iscale = -127.0f / first_of_magnitude(x, amax);
		const __m256 vs = _mm256_set1_ps(iscale);
		const __m256i hi = _mm256_set1_epi32(127);

		for (int j = 0; j < QK_K; j += 32) {
			__m256i q[4];

			for (int k = 0; k < 4; k++)
				q[k] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(vs, _mm256_loadu_ps(x + j + 8 * k))), hi);
			_mm256_storeu_si256((__m256i *)(y[i].qs + j), pack_i32x32(q[0], q[1], q[2], q[3]));
		}
		/* sums of 16 quants: vpmaddubsw by ones, then pairs of pairs */
		for (int g = 0; g < QK_K / 16; g += 2) {
			const __m256i q = _mm256_loadu_si256((const __m256i *)(y[i].qs + 16 * g));
			const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
			const __m256i s32 = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
			/* 4 partial sums per 128-bit half: group g low, g + 1 high */
			__m128i lo = _mm256_castsi256_si128(s32), hi2 = _mm256_extracti128_si256(s32, 1);
			__m128i s = _mm_hadd_epi32(lo, hi2);

			s = _mm_hadd_epi32(s, s);
			y[i].bsums[g] = (int16_t)_mm_cvtsi128_si32(s);
			y[i].bsums[g + 1] = (int16_t)_mm_extract_epi32(s, 1);
		}
		y[i].d = 1.0f / iscale;
	}
}
