/* cpu-avx2's B packers for the f32 GEMM (cpu_cntx.sgemm_pack_b): f16 and
 * bf16 weight rows, decoded and transposed into the framework's nr-column
 * panels (gemm/pack.c) in one pass. Per 8 rows × 8 depths: 8 loads that
 * decode on the way (vcvtph2ps; bf16: a zero extension and a shift), an
 * 8×8 transpose in registers and 8 stores of 8 columns. The framework's
 * portable path decodes each row into a buffer and transposes it in 4×4
 * tiles afterwards, about twice the instructions a weight: its B packing
 * was 6-7 % of an f16 prefill on Zen 3 (BENCHMARKS.md, "Session 20").
 */
#include <immintrin.h>
#include <string.h>

#include "avx2_kernels.h"

/* 8 consecutive 16-bit weights as f32. */
static inline __attribute__((always_inline)) __m256 load8_f16(const void *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static inline __attribute__((always_inline)) __m256 load8_bf16(const void *p)
{
	const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));

	return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* r[i] holds row i's 8 depths: depth q of the 8 rows to d + q·nr. */
static inline __attribute__((always_inline)) void transpose8_store(__m256 r[8], float *d, int64_t nr)
{
	const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
	const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
	const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
	const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
	const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
	const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
	const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);

	_mm256_storeu_ps(d + 0 * nr, _mm256_permute2f128_ps(u0, u4, 0x20));
	_mm256_storeu_ps(d + 1 * nr, _mm256_permute2f128_ps(u1, u5, 0x20));
	_mm256_storeu_ps(d + 2 * nr, _mm256_permute2f128_ps(u2, u6, 0x20));
	_mm256_storeu_ps(d + 3 * nr, _mm256_permute2f128_ps(u3, u7, 0x20));
	_mm256_storeu_ps(d + 4 * nr, _mm256_permute2f128_ps(u0, u4, 0x31));
	_mm256_storeu_ps(d + 5 * nr, _mm256_permute2f128_ps(u1, u5, 0x31));
	_mm256_storeu_ps(d + 6 * nr, _mm256_permute2f128_ps(u2, u6, 0x31));
	_mm256_storeu_ps(d + 7 * nr, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* 8 rows (w, row_bytes apart) × kc depths into d (depth p at d + p·nr):
 * whole steps of 8 depths from the rows, the last kc % 8 through a
 * zero-padded copy. Every 32 depths, the same 64 bytes of the next 8 rows
 * are fetched: a GEMM call reads each weight once, from DRAM, and fetches
 * spread over the pass stay within the misses a core can have in flight
 * (the next panel's rows too, or past the matrix's last row: an x86
 * prefetch never faults). */
#define PACK_ROWS8(t, load8)                                                                          \
	static void pack_rows8_##t(const char *w, const char *next, int64_t row_bytes, int64_t kc,     \
				   int64_t nr, float *d)                                                  \
	{                                                                                             \
		__m256 r[8];                                                                          \
		int64_t p = 0;                                                                        \
                                                                                                      \
		for (; p + 8 <= kc; p += 8) {                                                         \
			if (p % 32 == 0)                                                      \
				for (int i = 0; i < 8; i++)                                           \
					_mm_prefetch(next + i * row_bytes + 2 * p, _MM_HINT_T0);       \
			for (int i = 0; i < 8; i++)                                                   \
				r[i] = load8(w + i * row_bytes + 2 * p);                              \
			transpose8_store(r, d + p * nr, nr);                                          \
		}                                                                                     \
		if (p < kc) {                                                                         \
			uint16_t pad[8][8] = { { 0 } };                                               \
			float tile[8 * 8];                                                            \
                                                                                                      \
			for (int i = 0; i < 8; i++) {                                                 \
				memcpy(pad[i], w + i * row_bytes + 2 * p, (size_t)(2 * (kc - p)));   \
				r[i] = load8(pad[i]);                                                 \
			}                                                                             \
			transpose8_store(r, tile, 8);                                                 \
			for (int64_t q = 0; q < kc - p; q++)                                          \
				memcpy(d + (p + q) * nr, tile + 8 * q, 8 * sizeof(float));           \
		}                                                                                     \
	}
PACK_ROWS8(f16, load8_f16)
PACK_ROWS8(bf16, load8_bf16)

/* cpu_sgemm_pack_fn (cols a multiple of 8) */
#define SGEMM_PACK_B(t)                                                                                      \
	void avx2_sgemm_pack_b_##t(const void *w, int64_t row_bytes, int64_t cols, int64_t kc, int64_t nr,    \
				   float *dst)                                                               \
	{                                                                                                    \
		const char *rows = w;                                                                        \
                                                                                                             \
		for (int64_t jj = 0; jj < cols; jj += 8) {                                                   \
			pack_rows8_##t(rows + jj * row_bytes, rows + (jj + 8) * row_bytes, row_bytes, kc, nr, \
				       dst + jj);                                                            \
		}                                                                                            \
	}
SGEMM_PACK_B(f16)
SGEMM_PACK_B(bf16)
