/* cpu-neon's f32 GEMM microkernel: C[8×12] = alpha·A·B + beta·C with A a
 * packed k×8 panel and B a packed k×12 panel (plugins/cpu/gemm/pack.c). Each step of k
 * loads 3 B vectors and 2 A vectors and issues 24 FMAs by lane
 * (fmla v.4s, v.4s, v.s[l]); the 24 accumulators stay in registers.
 */
#include <arm_neon.h>

#include "neon_kernels.h"

/* Row i of the block (A element i in lane l of a register) times the 12
 * columns of B. */
#define FMA_ROW(i, av, l)                                               \
	do {                                                            \
		c##i##0 = vfmaq_laneq_f32(c##i##0, b0, av, l);          \
		c##i##1 = vfmaq_laneq_f32(c##i##1, b1, av, l);          \
		c##i##2 = vfmaq_laneq_f32(c##i##2, b2, av, l);          \
	} while (0)

#define ZERO_ROW(i) float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0

/* beta == 0 never reads C (it may be uninitialised). */
#define STORE_ROW(i)                                                                    \
	do {                                                                            \
		float *ci = c + (i) * ldc;                                              \
		if (beta == 0.0f) {                                                     \
			vst1q_f32(ci, vmulq_n_f32(c##i##0, alpha));                     \
			vst1q_f32(ci + 4, vmulq_n_f32(c##i##1, alpha));                 \
			vst1q_f32(ci + 8, vmulq_n_f32(c##i##2, alpha));                 \
		} else {                                                                \
			vst1q_f32(ci, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(ci), beta), c##i##0, alpha)); \
			vst1q_f32(ci + 4, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(ci + 4), beta), c##i##1, alpha)); \
			vst1q_f32(ci + 8, vfmaq_n_f32(vmulq_n_f32(vld1q_f32(ci + 8), beta), c##i##2, alpha)); \
		}                                                                       \
	} while (0)

void neon_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
			float beta)
{
	ZERO_ROW(0); ZERO_ROW(1); ZERO_ROW(2); ZERO_ROW(3);
	ZERO_ROW(4); ZERO_ROW(5); ZERO_ROW(6); ZERO_ROW(7);

	for (int64_t p = 0; p < k; p++, a += NEON_SGEMM_MR, b += NEON_SGEMM_NR) {
		const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
		const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);

		FMA_ROW(0, a0, 0); FMA_ROW(1, a0, 1); FMA_ROW(2, a0, 2); FMA_ROW(3, a0, 3);
		FMA_ROW(4, a1, 0); FMA_ROW(5, a1, 1); FMA_ROW(6, a1, 2); FMA_ROW(7, a1, 3);
	}

	STORE_ROW(0); STORE_ROW(1); STORE_ROW(2); STORE_ROW(3);
	STORE_ROW(4); STORE_ROW(5); STORE_ROW(6); STORE_ROW(7);
}
