/* q8_0 and q4_0 weight rows against q8_0 activations, in integer dot
 * products (one f32 scale product per block of 32), NEON_DOT_ROWS rows a
 * call (neon_dot.h). The other 32-element formats are in
 * matmul_legacy_neon.c, the 256-element ones in matmul_kquant_neon.c.
 *
 * Built twice (meson.build): plain AdvSIMD as neon_* (smull + sadalp,
 * any AArch64 CPU), and with -march=armv8.2-a+dotprod -DNEON_DOTPROD as
 * neondot_* (sdot); open picks the table by HWCAP_ASIMDDP. Prepared
 * weights' group kernels: prepared_neon.c.
 */
#include "neon_dot.h"

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
