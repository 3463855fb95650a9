/* cpu-neon's int8 GEMM microkernels (the framework: plugins/cpu/gemm/qgemm.c,
 * layouts: gemm/qgemm.h). Both take the signed packing (the K-quants' isc
 * kernels below: the unsigned one): weights as s8 bytes
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
#include "gemm/qgemm.h"
#include "neon_kernels.h"

#define NR CPU_QGEMM_NR
#define A_SB_BYTES(sb) CPU_QGEMM_A_SB_BYTES(sb, MR)
#define B_SB_BYTES CPU_QGEMM_B_SB_BYTES

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

static inline __attribute__((always_inline)) void dot_group(int32x4_t dot[MR][DOT_REGS], const int8x16_t *w,
							    const int nq, const uint8_t *ag)
{
	for (int r = 0; r < MR; r++) {
		const int8x16_t x = dup_x(ag, r);

		for (int q = 0; q < nq; q++)
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

static inline __attribute__((always_inline)) void dot_group(int32x4_t dot[MR][DOT_REGS], const int8x16_t *w,
							    const int nq, const uint8_t *ag)
{
	for (int r = 0; r < MR; r++) {
		const int8x16_t x = dup_x(ag, r);

		for (int q = 0; q < nq; q++) {
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

			dot_group(dot, w, 4, a + 4 * MR * g);
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
		a += A_SB_BYTES(sb);
		b += B_SB_BYTES(sb, has_min);
	}
	for (int r = 0; r < MR; r++)
		for (int q = 0; q < 4; q++) {
			float *cr = c + r * ldc + 4 * q;

			vst1q_f32(cr, accumulate ? vaddq_f32(acc[r][q], vld1q_f32(cr)) : acc[r][q]);
		}
}

/* The isc microkernels (cpu_qgemm_kernels.ukernel_isc; gemm/qgemm.h, isc):
 * the K-quants on the unsigned packing (u ≤ 63, so each byte is the same
 * s8 for sdot and smull; iq4_xs on the signed one), each sub-block's
 * int32 dots multiplied by its integer scale (the high i16 of its (sc,
 * sc) lane) into one int32 sum per row and column over a 256, Σ k·Σxq
 * from the trailer's (k_2j, k_2j+1) pairs against xo's (Σxq, Σxq) pair
 * (smull, pairs added), then one conversion per 256: acc += xs·(d·dot −
 * dmin·ksum), or without a min xs·d·(dot − (ksum << shift)). Where the
 * other modes convert, scale and add per sub-block and row quad, this
 * mode multiplies and adds once.
 * The bounds are cpu-avx2's (|dot| < 2^29 for q6_K). Weight rows in two
 * halves of 8 (h), so that a sub-block's dots, the 256's sums and the
 * accumulators fit the 32 registers. Not timed: no AArch64 machine here
 * (BENCHMARKS.md "Session 19"); conformance under qemu. */
/* Σ k·Σxq of weight rows 4e .. 4e + 3 of the half (k: their (k_2j,
 * k_2j+1) i16 pairs) and one activation row (xo: its (Σxq, Σxq) pair). */
static inline int32x4_t isc_ksum(int16x8_t k, int32_t xo)
{
	const int16x8_t xx = vreinterpretq_s16_s32(vdupq_n_s32(xo));

	return vpaddq_s32(vmull_s16(vget_low_s16(k), vget_low_s16(xx)), vmull_high_s16(k, xx));
}

static inline __attribute__((always_inline)) void isc_half(int64_t nsb, const uint8_t *a, const uint8_t *b,
							   float *c, int64_t ldc, int accumulate, const int sb,
							   const int has_min, const int shift, const int h)
{
	const int nsub = QK_K / sb;
	const uint8_t *tr = b + nsb * B_SB_BYTES(sb, has_min);
	float32x4_t acc[MR][2];

	for (int r = 0; r < MR; r++)
		acc[r][0] = acc[r][1] = vdupq_n_f32(0.0f);
	for (int64_t s0 = 0; s0 < nsb; s0 += nsub, tr += CPU_QGEMM_ISC_TRAILER(sb)) {
		const f32_alias *xs = (const f32_alias *)(a + s0 * A_SB_BYTES(sb) + sb * MR);
		int32x4_t dot[MR][2], ksum[MR][2];

		for (int r = 0; r < MR; r++)
			dot[r][0] = dot[r][1] = ksum[r][0] = ksum[r][1] = vdupq_n_s32(0);
		for (int64_t s = s0; s < s0 + nsub; s++) {
			const uint8_t *as = a + s * A_SB_BYTES(sb), *bs = b + s * B_SB_BYTES(sb, has_min);
			int32x4_t sub[MR][DOT_REGS];

			for (int r = 0; r < MR; r++)
				for (int i = 0; i < DOT_REGS; i++)
					sub[r][i] = vdupq_n_s32(0);
			for (int g = 0; g < sb / 4; g++) {
				const int8_t *bg = (const int8_t *)bs + 4 * NR * g + 32 * h;
				const int8x16_t w[2] = { vld1q_s8(bg), vld1q_s8(bg + 16) };

				dot_group(sub, w, 2, as + 4 * MR * g);
			}
			for (int e = 0; e < 2; e++) {
				const i32_alias *lanes = (const i32_alias *)(bs + NR * sb + 32 * h + 16 * e);
				const int32x4_t sc = vshrq_n_s32(vld1q_s32(lanes), 16);

				for (int r = 0; r < MR; r++)
					dot[r][e] = vmlaq_s32(dot[r][e], dot_rows(sub, r, e), sc);
			}
		}
		for (int j = 0; j < nsub / 2; j++) {
			const i32_alias *xo = (const i32_alias *)(a + (s0 + 2 * j) * A_SB_BYTES(sb) + sb * MR + 4 * MR);

			for (int e = 0; e < 2; e++) {
				const int16x8_t k = vld1q_s16((const int16_t *)(tr + CPU_QGEMM_ISC_KPAIRS(j) + 32 * h + 16 * e));

				for (int r = 0; r < MR; r++)
					ksum[r][e] = vaddq_s32(ksum[r][e], isc_ksum(k, xo[r]));
			}
		}
		for (int e = 0; e < 2; e++) {
			const int64_t lane = 2 * (8 * h + 4 * e);
			const uint16_t *d16 = (const uint16_t *)(tr + CPU_QGEMM_ISC_D + lane);
			const uint16_t *dmin16 = (const uint16_t *)(tr + CPU_QGEMM_ISC_DMIN + lane);
			const float32x4_t d = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(d16)));
			const float32x4_t dmin = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(dmin16)));

			for (int r = 0; r < MR; r++) {
				const float32x4_t t =
					has_min ? vfmsq_f32(vmulq_f32(vcvtq_f32_s32(dot[r][e]), d), vcvtq_f32_s32(ksum[r][e]), dmin) :
						  vmulq_f32(vcvtq_f32_s32(vsubq_s32(dot[r][e], vshlq_s32(ksum[r][e], vdupq_n_s32(shift)))), d);

				acc[r][e] = vfmaq_n_f32(acc[r][e], t, xs[r]);
			}
		}
	}
	for (int r = 0; r < MR; r++)
		for (int e = 0; e < 2; e++) {
			float *cr = c + r * ldc + 8 * h + 4 * e;

			vst1q_f32(cr, accumulate ? vaddq_f32(acc[r][e], vld1q_f32(cr)) : acc[r][e]);
		}
}

/* A format's isc microkernel (CPU_QGEMM_ISC_FORMATS: sb, a min, log2 c),
 * and the same on the signed packing (CPU_QGEMM_ISC_SIGNED_FORMATS: iq4_xs,
 * whose s8 bytes sdot and smull take as they are; its k are 0, so the
 * Σ k·Σxq it subtracts is 0). */
#ifdef NEON_DOTPROD
#define ISC_NAME(t) neondot_qgemm_u8_4x16_isc_##t
#define ISC_SIGNED_NAME(t) neondot_qgemm_s8_4x16_isc_##t
#else
#define ISC_NAME(t) neon_qgemm_u8_2x16_isc_##t
#define ISC_SIGNED_NAME(t) neon_qgemm_s8_2x16_isc_##t
#endif
#define ISC_KERNEL(name, sb, has_min, shift)                                                         \
	void name(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate) \
	{                                                                                            \
		isc_half(nsb, a, b, c, ldc, accumulate, sb, has_min, shift, 0);                      \
		isc_half(nsb, a, b, c, ldc, accumulate, sb, has_min, shift, 1);                      \
	}
#define ISC_UKERNEL(t, T, sb, has_min, j, shift) ISC_KERNEL(ISC_NAME(t), sb, has_min, shift)
#define ISC_SIGNED_UKERNEL(t, T, sb) ISC_KERNEL(ISC_SIGNED_NAME(t), sb, 0, 0)
CPU_QGEMM_ISC_FORMATS(ISC_UKERNEL)
CPU_QGEMM_ISC_SIGNED_FORMATS(ISC_SIGNED_UKERNEL)

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
