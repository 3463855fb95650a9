/* cpu-neon's int8 GEMM microkernels (the framework: plugins/cpu/gemm/qgemm.c,
 * layouts: gemm/qgemm.h). Both take the signed packing: weights as s8 bytes
 * w = u − c in [−128, 127], activations q8_0 bytes x with |x| ≤ 127.
 * Per 4 bytes of K: four q-register loads of the weights (16 rows × 4
 * bytes, rows 4q .. 4q + 3 in register q), then per activation row its 4
 * bytes duplicated into every lane and the integer dots; per sub-block the
 * int32 sums become f32: acc += cvt(sum)·xs·scale (+ offset·xs·Σxq with a
 * min).
 *
 * This file is built twice (meson.build):
 *   neondot_qgemm_s8_4x16_*  with -march=armv8.2-a+dotprod -DNEON_DOTPROD:
 *                            4 rows × 16, sdot (vdotq_s32) sums four s8×s8
 *                            products into each int32 lane;
 *   neon_qgemm_s8_2x16_*     any AArch64 CPU: 2 rows × 16, smull (s8×s8 into
 *                            int16: |w·x| ≤ 128·127 = 16256, exact) and
 *                            sadalp (pairs of int16 added into int32 lanes:
 *                            no saturation), the pairs of a row folded at
 *                            the end of the sub-block by addp.
 */
#include <arm_neon.h>
#include <string.h>

#include "cpu_cntx.h"
#include "neon_kernels.h"

#define NR CPU_QGEMM_NR

typedef int32_t i32_alias __attribute__((may_alias));
typedef float f32_alias __attribute__((may_alias));

/* Activation row r's 4 bytes at ag + 4r, in every 32-bit lane. */
static inline int8x16_t dup_x(const uint8_t *ag, int r)
{
	int32_t v;

	memcpy(&v, ag + 4 * r, 4);
	return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

#ifdef NEON_DOTPROD
#define MR NEON_QGEMM_DOT_MR
#define DOT_REGS 4      /* per row: int32 sums of weight rows 4q .. 4q + 3 */

static inline __attribute__((always_inline)) void dot_group(int32x4_t dot[MR][DOT_REGS], const int8x16_t w[4],
							    const uint8_t *ag)
{
	for (int r = 0; r < MR; r++) {
		const int8x16_t x = dup_x(ag, r);

		for (int q = 0; q < 4; q++)
			dot[r][q] = vdotq_s32(dot[r][q], w[q], x);
	}
}

/* The int32 sums of weight rows 4q .. 4q + 3 for activation row r. */
static inline int32x4_t dot_rows(int32x4_t dot[MR][DOT_REGS], int r, int q)
{
	return dot[r][q];
}
#else
#define MR NEON_QGEMM_MR
#define DOT_REGS 8      /* per row: register 2q + e holds rows 4q + 2e, 4q + 2e + 1, two lanes each */

static inline __attribute__((always_inline)) void dot_group(int32x4_t dot[MR][DOT_REGS], const int8x16_t w[4],
							    const uint8_t *ag)
{
	for (int r = 0; r < MR; r++) {
		const int8x16_t x = dup_x(ag, r);

		for (int q = 0; q < 4; q++) {
			dot[r][2 * q] = vpadalq_s16(dot[r][2 * q], vmull_s8(vget_low_s8(w[q]), vget_low_s8(x)));
			dot[r][2 * q + 1] = vpadalq_s16(dot[r][2 * q + 1], vmull_high_s8(w[q], x));
		}
	}
}

/* addp: [k0+k1, k2+k3] of rows 4q, 4q + 1, then of rows 4q + 2, 4q + 3,
 * into one sum per row. */
static inline int32x4_t dot_rows(int32x4_t dot[MR][DOT_REGS], int r, int q)
{
	return vpaddq_s32(dot[r][2 * q], dot[r][2 * q + 1]);
}
#endif

static inline __attribute__((always_inline)) void qgemm_body(int64_t nsb, const uint8_t *a, const uint8_t *b,
							     float *c, int64_t ldc, int accumulate, const int sb,
							     const int has_min)
{
	float32x4_t acc[MR][4];

	for (int r = 0; r < MR; r++)
		for (int q = 0; q < 4; q++)
			acc[r][q] = vdupq_n_f32(0.0f);
	for (int64_t s = 0; s < nsb; s++) {
		const f32_alias *xs = (const f32_alias *)(a + sb * MR);
		const i32_alias *xo = (const i32_alias *)(a + sb * MR + 4 * MR);
		const float *scale = (const float *)(b + NR * sb);
		int32x4_t dot[MR][DOT_REGS];

		for (int r = 0; r < MR; r++)
			for (int i = 0; i < DOT_REGS; i++)
				dot[r][i] = vdupq_n_s32(0);
		for (int g = 0; g < sb / 4; g++) {
			const int8_t *bg = (const int8_t *)b + 4 * NR * g;
			const int8x16_t w[4] = { vld1q_s8(bg), vld1q_s8(bg + 16), vld1q_s8(bg + 32), vld1q_s8(bg + 48) };

			dot_group(dot, w, a + 4 * MR * g);
		}
		for (int r = 0; r < MR; r++)
			for (int q = 0; q < 4; q++) {
				/* xo: −(c − c)·Σxq = 0 with the signed packing, kept for its contract */
				const int32x4_t sum = has_min ? dot_rows(dot, r, q) :
								vaddq_s32(dot_rows(dot, r, q), vdupq_n_s32(xo[r]));
				const float32x4_t t = vmulq_n_f32(vcvtq_f32_s32(sum), xs[r]);

				acc[r][q] = vfmaq_f32(acc[r][q], t, vld1q_f32(scale + 4 * q));
			}
		if (has_min) {
			const float *off = scale + NR;
			const f32_alias *xsum = (const f32_alias *)xo;

			for (int r = 0; r < MR; r++)
				for (int q = 0; q < 4; q++)
					acc[r][q] = vfmaq_n_f32(acc[r][q], vld1q_f32(off + 4 * q), xsum[r]);
		}
		a += sb * MR + 8 * MR;
		b += NR * sb + (has_min ? 8 : 4) * NR;
	}
	for (int r = 0; r < MR; r++)
		for (int q = 0; q < 4; q++) {
			float *cr = c + r * ldc + 4 * q;

			vst1q_f32(cr, accumulate ? vaddq_f32(acc[r][q], vld1q_f32(cr)) : acc[r][q]);
		}
}

/* One microkernel per sub-block size and offset kind (cpu_qgemm_kernels). */
#ifdef NEON_DOTPROD
CPU_QGEMM_UKERNEL(neondot_qgemm_s8_4x16_sb32, qgemm_body, 32, 0)
CPU_QGEMM_UKERNEL(neondot_qgemm_s8_4x16_sb32_min, qgemm_body, 32, 1)
CPU_QGEMM_UKERNEL(neondot_qgemm_s8_4x16_sb16, qgemm_body, 16, 0)
CPU_QGEMM_UKERNEL(neondot_qgemm_s8_4x16_sb16_min, qgemm_body, 16, 1)
#else
CPU_QGEMM_UKERNEL(neon_qgemm_s8_2x16_sb32, qgemm_body, 32, 0)
CPU_QGEMM_UKERNEL(neon_qgemm_s8_2x16_sb32_min, qgemm_body, 32, 1)
CPU_QGEMM_UKERNEL(neon_qgemm_s8_2x16_sb16, qgemm_body, 16, 0)
CPU_QGEMM_UKERNEL(neon_qgemm_s8_2x16_sb16_min, qgemm_body, 16, 1)
#endif
