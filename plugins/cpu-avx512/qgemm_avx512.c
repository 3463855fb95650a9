/* The int8 GEMM microkernel (AVX512-VNNI; layouts: plugins/cpu/gemm/qgemm.h):
 * AVX512_QGEMM_MR activation rows × 16 weight rows. Per 4 bytes of K, one
 * zmm load of the weights' u (16 rows × 4 bytes) and one vpdpbusd per
 * activation row with its 4 bytes broadcast from memory; per sub-block,
 * the int32 sums become f32: acc += cvt(sum)·xs·scale (+ offset·xs·Σxq
 * for weights with a min). Everything stays in registers: MR int32 sums,
 * MR f32 accumulators.
 */
#include <immintrin.h>
#include <string.h>

#include "avx512_kernels.h"
#include "cpu_cntx.h"

#define MR AVX512_QGEMM_MR
#define NR CPU_QGEMM_NR

typedef int32_t i32_alias __attribute__((may_alias));
typedef float f32_alias __attribute__((may_alias));

static inline __attribute__((always_inline)) void qgemm_body(int64_t nsb, const uint8_t *a, const uint8_t *b,
							     float *c, int64_t ldc, int accumulate, const int sb,
							     const int has_min)
{
	__m512 acc[MR];

	for (int r = 0; r < MR; r++)
		acc[r] = _mm512_setzero_ps();
	for (int64_t s = 0; s < nsb; s++) {
		const f32_alias *xs = (const f32_alias *)(a + sb * MR);
		const i32_alias *xo = (const i32_alias *)(a + sb * MR + 4 * MR);
		__m512i dot[MR];

		for (int r = 0; r < MR; r++)
			dot[r] = has_min ? _mm512_setzero_si512() : _mm512_set1_epi32(xo[r]);
		for (int g = 0; g < sb / 4; g++) {
			const __m512i bv = _mm512_loadu_si512(b + 4 * NR * g);
			const i32_alias *ag = (const i32_alias *)(a + 4 * MR * g);

			for (int r = 0; r < MR; r++)
				dot[r] = _mm512_dpbusd_epi32(dot[r], bv, _mm512_set1_epi32(ag[r]));
		}

		const __m512 scale = _mm512_loadu_ps((const float *)(b + NR * sb));

		for (int r = 0; r < MR; r++)
			acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot[r]), _mm512_set1_ps(xs[r])), scale,
						 acc[r]);
		if (has_min) {
			const __m512 off = _mm512_loadu_ps((const float *)(b + NR * sb + 4 * NR));
			const f32_alias *xsum = (const f32_alias *)xo;

			for (int r = 0; r < MR; r++)
				acc[r] = _mm512_fmadd_ps(off, _mm512_set1_ps(xsum[r]), acc[r]);
		}
		a += sb * MR + 8 * MR;
		b += NR * sb + (has_min ? 8 : 4) * NR;
	}
	for (int r = 0; r < MR; r++) {
		float *cr = c + r * ldc;

		_mm512_storeu_ps(cr, accumulate ? _mm512_add_ps(acc[r], _mm512_loadu_ps(cr)) : acc[r]);
	}
}

#define QGEMM_UKERNEL(sb, has_min, name)                                                                   \
	void avx512vnni_qgemm_ukernel_##name(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, \
					     int accumulate)                                                  \
	{                                                                                                  \
		qgemm_body(nsb, a, b, c, ldc, accumulate, sb, has_min);                                    \
	}
QGEMM_UKERNEL(32, 0, sb32)
QGEMM_UKERNEL(32, 1, sb32_min)
QGEMM_UKERNEL(16, 0, sb16)
QGEMM_UKERNEL(16, 1, sb16_min)
