/* The portable sgemm microkernel (REF_SGEMM_MR × REF_SGEMM_NR). Written as
 * fixed-size loops over a local accumulator block so that gcc keeps the
 * block in vector registers and emits one broadcast-multiply-add per row of
 * A and vector of B, on any target. */
#include "quant_ref.h"

#define MR REF_SGEMM_MR
#define NR REF_SGEMM_NR

void ref_sgemm_ukernel(int64_t k, const float *restrict a, const float *restrict b, float *restrict c,
		       int64_t ldc, float alpha, float beta)
{
	float acc[MR][NR] = { { 0 } };

	for (int64_t p = 0; p < k; p++, a += MR, b += NR)
		for (int i = 0; i < MR; i++)
			for (int j = 0; j < NR; j++)
				acc[i][j] += a[i] * b[j];

	for (int i = 0; i < MR; i++, c += ldc) {
		if (beta == 0.0f) {     /* never read c: it may hold NaN */
			for (int j = 0; j < NR; j++)
				c[j] = alpha * acc[i][j];
		} else {
			for (int j = 0; j < NR; j++)
				c[j] = alpha * acc[i][j] + beta * c[j];
		}
	}
}
