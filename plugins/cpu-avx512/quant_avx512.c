/* Row codecs with AVX-512: the activation encoders (q8_0, q8_K) bit for bit
 * the reference ones (ref/quant_ref.c: same f32 operations, same rounding),
 * and the decoders of the formats the integer dots cover, each value
 * rounded once as ggml rounds it (no fused multiply-add: this file is built
 * with -ffp-contract=off).
 */
#include <string.h>

#include "avx512_blocks.h"
#include "avx512_kernels.h"

/* ------------------------------------------------------------ encoders */

/* roundf(): half away from zero. v − trunc(v) is exact, so the tie test
 * is too (adding 0.5 first would round 0.49999997 up). */
static inline __m512i round_away(__m512 v)
{
	const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
	const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
	const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
	const __m512 one = _mm512_or_ps(_mm512_set1_ps(1.0f),
					_mm512_and_ps(v, _mm512_castsi512_ps(_mm512_set1_epi32((int)0x80000000u))));

	return _mm512_cvttps_epi32(_mm512_mask_add_ps(t, up, t, one));
}

void avx512_quant_row_q8_0(const float *x, void *dst, int64_t n)
{
	struct block_q8_0 *y = dst;

	for (int64_t i = 0; i < n / QK8_0; i++, x += QK8_0) {
		const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
		/* max(|x|, acc) keeps acc where x is NaN, as fmaxf does */
		const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x1),
								      _mm512_max_ps(_mm512_abs_ps(x0), _mm512_setzero_ps())));
		const float d = amax / 127;
		const float id = d ? 1.0f / d : 0.0f;
		const __m512 vid = _mm512_set1_ps(id);

		y[i].d = f32_to_f16(d);
		/* vpmovdb truncates as the reference's (int8_t) cast does */
		_mm_storeu_si128((__m128i *)y[i].qs, _mm512_cvtepi32_epi8(round_away(_mm512_mul_ps(x0, vid))));
		_mm_storeu_si128((__m128i *)(y[i].qs + 16), _mm512_cvtepi32_epi8(round_away(_mm512_mul_ps(x1, vid))));
	}
}

/* The first element of largest magnitude (strict >, as the reference). */
static float first_max(const float *x, float *amax_out)
{
	__m512 m = _mm512_setzero_ps();

	for (int j = 0; j < QK_K; j += 16)
		m = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), m);

	const float amax = _mm512_reduce_max_ps(m);
	const __m512 va = _mm512_set1_ps(amax);

	*amax_out = amax;
	for (int j = 0; amax > 0.0f && j < QK_K; j += 16) {
		const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)), va, _CMP_EQ_OQ);

		if (hit)
			return x[j + __builtin_ctz(hit)];
	}
	return 0.0f;
}

void avx512_quant_row_q8_K(const float *x, void *dst, int64_t n)
{
	struct block_q8_K *y = dst;

	for (int64_t i = 0; i < n / QK_K; i++, x += QK_K) {
		float amax;
		const float max = first_max(x, &amax);

		if (amax == 0.0f) {
			memset(&y[i], 0, sizeof(y[i]));
			continue;
		}

		const float iscale = -127.0f / max;
		const __m512 vs = _mm512_set1_ps(iscale);

		for (int g = 0; g < QK_K / 16; g++) {
			/* round half to even, as the reference's nearest_int */
			__m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(vs, _mm512_loadu_ps(x + 16 * g)));

			q = _mm512_min_epi32(q, _mm512_set1_epi32(127));
			_mm_storeu_si128((__m128i *)(y[i].qs + 16 * g), _mm512_cvtepi32_epi8(q));
			y[i].bsums[g] = (int16_t)_mm512_reduce_add_epi32(q);
		}
		y[i].d = 1.0f / iscale;
	}
}

/* ------------------------------------------------------------ decoders */

void avx512_dequant_row_q8_0(const void *src, float *y, int64_t n)
{
	const struct block_q8_0 *x = src;

	for (int64_t i = 0; i < n / QK8_0; i++, y += QK8_0) {
		const __m512 d = _mm512_set1_ps(f16_scalar(x[i].d));

		for (int h = 0; h < 2; h++) {
			const __m512i q = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(x[i].qs + 16 * h)));

			_mm512_storeu_ps(y + 16 * h, _mm512_mul_ps(_mm512_cvtepi32_ps(q), d));
		}
	}
}

void avx512_dequant_row_q4_0(const void *src, float *y, int64_t n)
{
	const struct block_q4_0 *x = src;
	const __m512i eight = _mm512_set1_epi32(8), m4 = _mm512_set1_epi32(0x0f);

	for (int64_t i = 0; i < n / QK4_0; i++, y += QK4_0) {
		const __m512 d = _mm512_set1_ps(f16_scalar(x[i].d));
		const __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)x[i].qs));
		const __m512i lo = _mm512_sub_epi32(_mm512_and_si512(q, m4), eight);
		const __m512i hi = _mm512_sub_epi32(_mm512_srli_epi32(q, 4), eight);

		_mm512_storeu_ps(y, _mm512_mul_ps(_mm512_cvtepi32_ps(lo), d));
		_mm512_storeu_ps(y + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(hi), d));
	}
}

/* 64 unsigned bytes to f32 scale·q − min in four stores of 16 (16 per
 * scale group of `group` elements: q4_K has one scale per 32). */
static inline void store_scaled(float *y, __m512i q8, const float *scale, const float *min, int group)
{
	for (int c = 0; c < 4; c++) {
		const __m128i b = _mm512_extracti32x4_epi32(q8, 0);
		const int g = 16 * c / group;
		const __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b));

		_mm512_storeu_ps(y + 16 * c, _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(scale[g]), v),
							   _mm512_set1_ps(min[g])));
		q8 = _mm512_alignr_epi32(q8, q8, 4);    /* next 16 bytes down */
	}
}

void avx512_dequant_row_q4_K(const void *src, float *y, int64_t n)
{
	const struct block_q4_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_scalar(x[i].d), dmin = f16_scalar(x[i].dmin);
		uint8_t sc[8], m[8];
		float ds[8], ms[8];

		q4_K_scales(&x[i], sc, m);
		for (int s = 0; s < 8; s++) {
			ds[s] = d * sc[s];
			ms[s] = dmin * m[s];
		}
		for (int j = 0; j < 4; j++, y += 64)
			store_scaled(y, q4_K_quarter(&x[i], j), ds + 2 * j, ms + 2 * j, 32);
	}
}

void avx512_dequant_row_q6_K(const void *src, float *y, int64_t n)
{
	const struct block_q6_K *x = src;
	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_scalar(x[i].d);
		float ds[16];

		for (int g = 0; g < 16; g++)
			ds[g] = d * x[i].scales[g];
		for (int h = 0; h < 2; h++) {
			__m512i lo, hi;

			q6_K_half(&x[i], h, &lo, &hi);
			/* y = (d·sc)·(q − 32): through (q − 32) as a signed byte */
			lo = _mm512_sub_epi8(lo, _mm512_set1_epi8(32));
			hi = _mm512_sub_epi8(hi, _mm512_set1_epi8(32));
			for (int half = 0; half < 2; half++, y += 64) {
				__m512i q8 = half ? hi : lo;
				const float *s = ds + 8 * h + 4 * half;

				for (int c = 0; c < 4; c++) {
					const __m512 v = _mm512_cvtepi32_ps(
						_mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(q8, 0)));

					_mm512_storeu_ps(y + 16 * c, _mm512_mul_ps(_mm512_set1_ps(s[c]), v));
					q8 = _mm512_alignr_epi32(q8, q8, 4);
				}
			}
		}
	}
}
