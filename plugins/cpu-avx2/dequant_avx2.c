/* Row decoders of the block formats that matmul streams (get_rows,
 * dequantize, and the large-M GEMM's packing). Each value is formed with
 * the reference decoder's f32 operations in its order (ref/quant_ref.c),
 * so the results are bit for bit ggml's to_float; where the reference
 * rounds d·q − m once after an exact product, the FMA rounds the same
 * exact value once.
 */
#include <immintrin.h>

#include "avx2_kernels.h"
#include "quant_blocks.h"

/* 8 signed bytes at p, times d, stored as 8 floats. */
static inline void store_scaled_i8x8(float *y, __m128i q8, __m256 d)
{
	_mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8)), d));
}

/* 32 signed bytes, times d, to y[0..31]. */
static inline void store_scaled_i8x32(float *y, __m256i q, __m256 d)
{
	const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);

	store_scaled_i8x8(y, lo, d);
	store_scaled_i8x8(y + 8, _mm_srli_si128(lo, 8), d);
	store_scaled_i8x8(y + 16, hi, d);
	store_scaled_i8x8(y + 24, _mm_srli_si128(hi, 8), d);
}

void avx2_dequant_row_q8_0(const void *src, float *y, int64_t n)
{
	const struct block_q8_0 *x = src;

	for (int64_t i = 0; i < n / QK8_0; i++, y += QK8_0)
		store_scaled_i8x32(y, _mm256_loadu_si256((const __m256i *)x[i].qs), _mm256_set1_ps(_cvtsh_ss(x[i].d)));
}

void avx2_dequant_row_q4_0(const void *src, float *y, int64_t n)
{
	const struct block_q4_0 *x = src;

	for (int64_t i = 0; i < n / QK4_0; i++, y += QK4_0) {
		const __m128i q = _mm_loadu_si128((const __m128i *)x[i].qs);
		const __m256i u = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0f));

		store_scaled_i8x32(y, _mm256_sub_epi8(u, _mm256_set1_epi8(8)), _mm256_set1_ps(_cvtsh_ss(x[i].d)));
	}
}

/* 8 nibbles (as bytes 0..15) times d1, minus m1: d1·q is exact (a 17-bit
 * scale times 4 bits), so FMA and the reference's mul-then-sub both round
 * the exact d1·q − m1 once. */
static inline void store_fms_u8x8(float *y, __m128i q8, __m256 d, __m256 m)
{
	_mm256_storeu_ps(y, _mm256_fmsub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(q8)), d, m));
}

static inline void store_fms_u8x32(float *y, __m256i q, __m256 d, __m256 m)
{
	const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);

	store_fms_u8x8(y, lo, d, m);
	store_fms_u8x8(y + 8, _mm_srli_si128(lo, 8), d, m);
	store_fms_u8x8(y + 16, hi, d, m);
	store_fms_u8x8(y + 24, _mm_srli_si128(hi, 8), d, m);
}

/* Scale and min j of q4_K (k4_scale_min in quant_ref.c). */
static inline void q4_K_scale_min(const uint8_t *q, int j, int *d, int *m)
{
	if (j < 4) {
		*d = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*d = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

void avx2_dequant_row_q4_K(const void *src, float *y, int64_t n)
{
	const struct block_q4_K *x = src;
	const __m256i low4 = _mm256_set1_epi8(0x0f);

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = _cvtsh_ss(x[i].d), dmin = _cvtsh_ss(x[i].dmin);
		const uint8_t *q = x[i].qs;

		for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
			const __m256i qv = _mm256_loadu_si256((const __m256i *)q);
			int sc, m;

			q4_K_scale_min(x[i].scales, j, &sc, &m);
			store_fms_u8x32(y, _mm256_and_si256(qv, low4), _mm256_set1_ps(d * sc), _mm256_set1_ps(dmin * m));
			q4_K_scale_min(x[i].scales, j + 1, &sc, &m);
			store_fms_u8x32(y + 32, _mm256_and_si256(_mm256_srli_epi16(qv, 4), low4), _mm256_set1_ps(d * sc),
					_mm256_set1_ps(dmin * m));
		}
	}
}

/* (d·sc)·(q − 32) in that order, as the reference: 16 values per scale. */
void avx2_dequant_row_q6_K(const void *src, float *y, int64_t n)
{
	const struct block_q6_K *x = src;
	const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = _cvtsh_ss(x[i].d);
		const int8_t *sc = x[i].scales;

		for (int h = 0; h < 2; h++) {
			const uint8_t *ql = x[i].ql + 64 * h, *qh = x[i].qh + 32 * h;
			const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
			const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
			const __m256i hb = _mm256_loadu_si256((const __m256i *)qh);
			const __m256i q[4] = {
				_mm256_or_si256(_mm256_and_si256(l0, low4),
						_mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45)),
				_mm256_or_si256(_mm256_and_si256(l1, low4),
						_mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45)),
				_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
						_mm256_and_si256(hb, bits45)),
				_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
						_mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45)),
			};

			for (int c = 0; c < 4; c++, y += 32, sc += 2) {
				const __m256i v = _mm256_sub_epi8(q[c], _mm256_set1_epi8(32));
				const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
				const __m256 d0 = _mm256_set1_ps(d * sc[0]), d1 = _mm256_set1_ps(d * sc[1]);

				store_scaled_i8x8(y, lo, d0);
				store_scaled_i8x8(y + 8, _mm_srli_si128(lo, 8), d0);
				store_scaled_i8x8(y + 16, hi, d1);
				store_scaled_i8x8(y + 24, _mm_srli_si128(hi, 8), d1);
			}
		}
	}
}
