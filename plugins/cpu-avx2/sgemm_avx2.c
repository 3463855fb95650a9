/* The AVX2 sgemm microkernel, 6×16: C[6×16] = alpha·A·B + beta·C.
 *
 * 12 ymm accumulators (6 rows × 2 vectors of 8), 2 for the B row, 1 for the
 * A broadcast: 15 of the 16 registers. Each step of k is 2 loads of B, 6
 * broadcasts of A (loads folded into vbroadcastss) and 12 FMAs: the FMA
 * ports stay the bottleneck (two 256-bit FMAs per cycle; one broadcast per
 * two FMAs fits the load ports). A panel: a[p·6 + i]; B panel: b[p·16 + j]
 * (the framework's packing, 64-byte aligned).
 */
#include <immintrin.h>

#include "avx2_kernels.h"

#define MR AVX2_SGEMM_MR
#define NR AVX2_SGEMM_NR
/* A is 24 bytes a step, prefetched every 2 steps about 500 cycles ahead:
 * the first microkernel of a row of C tiles reads its A micro-panel from
 * L3 or DRAM (gemm/sgemm.c packs the A block long before), the next from L1. */
#define PREFETCH_A_FLOATS 512

/* One step of k: row i of the block gets a[i]·b. */
#define ROW_FMA(i)                                                       \
	do {                                                             \
		const __m256 ai = _mm256_broadcast_ss(a + (i));          \
		c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);              \
		c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);              \
	} while (0)

#define STEP()                                                           \
	do {                                                             \
		const __m256 b0 = _mm256_load_ps(b);                     \
		const __m256 b1 = _mm256_load_ps(b + 8);                 \
		ROW_FMA(0); ROW_FMA(1); ROW_FMA(2);                      \
		ROW_FMA(3); ROW_FMA(4); ROW_FMA(5);                      \
		a += MR;                                                 \
		b += NR;                                                 \
	} while (0)

/* Row i of C: alpha·acc (beta == 0, C never read) or alpha·acc + beta·C. */
#define ROW_STORE(i)                                                                       \
	do {                                                                               \
		float *ci = c + (i) * ldc;                                                 \
		__m256 r0 = _mm256_mul_ps(va, c##i##0), r1 = _mm256_mul_ps(va, c##i##1);   \
		if (beta != 0.0f) {                                                        \
			r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);                 \
			r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r1);             \
		}                                                                          \
		_mm256_storeu_ps(ci, r0);                                                  \
		_mm256_storeu_ps(ci + 8, r1);                                              \
	} while (0)

void avx2_sgemm_ukernel(int64_t k, const float *restrict a, const float *restrict b, float *restrict c,
			int64_t ldc, float alpha, float beta)
{
	__m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
	__m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
	__m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
	__m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
	__m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
	__m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
	int64_t p = 0;

	/* C's rows are written at the end: fetch them while k runs */
	for (int i = 0; i < MR; i++)
		_mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
	for (; p + 4 <= k; p += 4) {
		_mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
		_mm_prefetch((const char *)(a + PREFETCH_A_FLOATS), _MM_HINT_T0);
		STEP();
		STEP();
		_mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
		_mm_prefetch((const char *)(a + PREFETCH_A_FLOATS), _MM_HINT_T0);
		STEP();
		STEP();
	}
	for (; p < k; p++)
		STEP();

	const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);

	ROW_STORE(0); ROW_STORE(1); ROW_STORE(2);
	ROW_STORE(3); ROW_STORE(4); ROW_STORE(5);
}
