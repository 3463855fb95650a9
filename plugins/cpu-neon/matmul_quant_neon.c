/* q8_0 and q4_0 weight rows against q8_0 activations, in integer dot
 * products (one f32 scale product per block of 32), NEON_DOT_ROWS rows a
 * call (neon_dot.h). The other 32-element formats are in
 * matmul_legacy_neon.c, the 256-element ones in matmul_kquant_neon.c.
 *
 * Built twice (meson.build): plain AdvSIMD as neon_* (smull + sadalp,
 * any AArch64 CPU), and with -march=armv8.2-a+dotprod -DNEON_DOTPROD as
 * neondot_* (sdot); open picks the table by HWCAP_ASIMDDP.
 */
#include "neon_dot.h"
#include "prepared.h"

static inline int32x4_t row_q8_0(const struct block_q8_0 *w, int8x16_t x0, int8x16_t x1)
{
	return dot32(vld1q_s8(w->qs), vld1q_s8(w->qs + 16), x0, x1);
}

/* q4_0: low nibbles are w[0..15], high nibbles w[16..31], minus 8. */
static inline int32x4_t row_q4_0(const struct block_q4_0 *w, int8x16_t x0, int8x16_t x1)
{
	const uint8x16_t q = vld1q_u8(w->qs);
	const int8x16_t eight = vdupq_n_s8(8);

	return dot32(vsubq_s8(nibbles_lo(q), eight), vsubq_s8(nibbles_hi(q), eight), x0, x1);
}

NEON_DEFINE_DOT_32(q8_0_rows, q8_0, block_q8_0, 0, NO_MIN)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_q8_0, neon_vec_dot_q8_0),
		   DOT_NAME(neondot_vec_dot_rows_q8_0, neon_vec_dot_rows_q8_0),
		   q8_0_rows, n / QK8_0 * (int64_t)sizeof(struct block_q8_0), NEON_DOT_ROWS)
NEON_DEFINE_DOT_32(q4_0_rows, q4_0, block_q4_0, 0, NO_MIN)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_q4_0, neon_vec_dot_q4_0),
		   DOT_NAME(neondot_vec_dot_rows_q4_0, neon_vec_dot_rows_q4_0),
		   q4_0_rows, n / QK8_0 * (int64_t)sizeof(struct block_q4_0), NEON_DOT_ROWS)

#ifdef NEON_DOTPROD
/* Prepared q4_0 weights (plugins/cpu/prepared.h), sdot build only: a
 * q4_0x8 chunk is rows 0..3 and 4..7 × 4 bytes, and sdot by lane c adds
 * each row's 4 bytes times the activation's bytes 4c..4c+3 into that row's
 * lane; the plain build's smull + sadalp sums other lanes, so its table
 * prepares nothing. A block's nibbles are split once for the call's
 * activation rows (16 registers of the 32). */
#define Q4_0X8_CHUNK(c)                                                                      \
	do {                                                                                 \
		s0 = vdotq_laneq_s32(s0, lo[c][0], xl, c);                                   \
		s0 = vdotq_laneq_s32(s0, hi[c][0], xh, c);                                   \
		s1 = vdotq_laneq_s32(s1, lo[c][1], xl, c);                                   \
		s1 = vdotq_laneq_s32(s1, hi[c][1], xh, c);                                   \
	} while (0)

static inline __attribute__((always_inline)) void q4_0x8_dot_body(int64_t n, const void *w, const void *xq,
								  const int32_t *xsum, float *out, const int xrows)
{
	const struct cpu_q4_0x8 *u = w;
	const struct block_q8_0 *x = xq;
	const int64_t nb = n / QK4_0;
	float32x4_t acc[CPU_Q4_0X8_X_ROWS][2];

	for (int t = 0; t < xrows; t++)
		acc[t][0] = acc[t][1] = vdupq_n_f32(0.0f);
	for (int64_t b = 0; b < nb; b++) {
		const float32x4_t d0 = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u[b].d)));
		const float32x4_t d1 = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u[b].d + 4)));
		int8x16_t lo[4][2], hi[4][2];

		for (int c = 0; c < 4; c++)
			for (int h = 0; h < 2; h++) {
				const uint8x16_t q = vld1q_u8(u[b].qs[c][4 * h]);

				lo[c][h] = nibbles_lo(q);
				hi[c][h] = nibbles_hi(q);
			}
		for (int t = 0; t < xrows; t++) {
			const struct block_q8_0 *xb = &x[t * nb + b];
			const int8x16_t xl = vld1q_s8(xb->qs), xh = vld1q_s8(xb->qs + 16);
			const float32x4_t dx = vdupq_n_f32(f16_to_f32(xb->d));
			int32x4_t s0 = vdupq_n_s32(-8 * xsum[t * nb + b]), s1 = s0;

			Q4_0X8_CHUNK(0);
			Q4_0X8_CHUNK(1);
			Q4_0X8_CHUNK(2);
			Q4_0X8_CHUNK(3);
			acc[t][0] = vfmaq_f32(acc[t][0], vcvtq_f32_s32(s0), vmulq_f32(d0, dx));
			acc[t][1] = vfmaq_f32(acc[t][1], vcvtq_f32_s32(s1), vmulq_f32(d1, dx));
		}
	}
	for (int t = 0; t < xrows; t++) {
		vst1q_f32(out + 8 * t, acc[t][0]);
		vst1q_f32(out + 8 * t + 4, acc[t][1]);
	}
}

CPU_DEFINE_DOT_Q4_0X8(neondot_dot_q4_0x8, q4_0x8_dot_body)
#endif
