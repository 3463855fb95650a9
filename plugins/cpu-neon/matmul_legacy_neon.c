/* The other 32-element formats against q8_0 activations (q4_1, q5_0, q5_1,
 * iq4_nl, mxfp4), in integer arithmetic as matmul_quant_neon.c's (the one body of
 * neon_dot.h, built twice the same way):
 *
 *   q4_1, q5_1  Σ (d·q + m)·dx·xq = d·dx·Σ q·xq + m·dx·Σ xq, q 0..15 and
 *               0..31 as signed bytes, Σ xq per block once for all rows;
 *   q5_0        q − 16 (−16..15) as signed bytes;
 *   iq4_nl      the 4-bit indices through the code book (tbl), T[i] as
 *               signed bytes;
 *   mxfp4       the same through E2M1's code book (values doubled), the
 *               block scale the E8M0 byte's half (ggml's arithmetic).
 *
 * iq4_xs, a 256-element format against q8_K, is one of the K-quant body's
 * formats (matmul_kquant_neon.c).
 */
#include <string.h>

#include "neon_dot.h"

/* q5_0's and q5_1's quants, 0..31: nibbles (element j low, j + 16 high)
 * plus 16 where bit j of qh is set. */
static inline void q5_bytes(const uint8_t qs[16], const uint8_t qh[4], int8x16_t *lo, int8x16_t *hi)
{
	const uint8x16_t q = vld1q_u8(qs), sixteen = vdupq_n_u8(16);
	uint32_t h;

	memcpy(&h, qh, 4);
	*lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0f)), vandq_u8(bit_bytes(h), sixteen)));
	*hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), vandq_u8(bit_bytes(h >> 16), sixteen)));
}

static inline int32x4_t row_q4_1(const struct block_q4_1 *w, int8x16_t x0, int8x16_t x1)
{
	const uint8x16_t q = vld1q_u8(w->qs);

	return dot32(nibbles_lo(q), nibbles_hi(q), x0, x1);
}

static inline int32x4_t row_q5_0(const struct block_q5_0 *w, int8x16_t x0, int8x16_t x1)
{
	const int8x16_t sixteen = vdupq_n_s8(16);
	int8x16_t lo, hi;

	q5_bytes(w->qs, w->qh, &lo, &hi);
	return dot32(vsubq_s8(lo, sixteen), vsubq_s8(hi, sixteen), x0, x1);
}

static inline int32x4_t row_q5_1(const struct block_q5_1 *w, int8x16_t x0, int8x16_t x1)
{
	int8x16_t lo, hi;

	q5_bytes(w->qs, w->qh, &lo, &hi);
	return dot32(lo, hi, x0, x1);
}

static inline int32x4_t row_iq4_nl(const struct block_iq4_nl *w, int8x16_t x0, int8x16_t x1)
{
	const uint8x16_t q = vld1q_u8(w->qs);

	return dot32(iq4_lookup(nibbles_lo(q)), iq4_lookup(nibbles_hi(q)), x0, x1);
}

/* mxfp4: q4_0's nibble order (low nibbles elements 0..15). */
static inline int32x4_t row_mxfp4(const struct block_mxfp4 *w, int8x16_t x0, int8x16_t x1)
{
	const uint8x16_t q = vld1q_u8(w->qs);

	return dot32(mxfp4_lookup(nibbles_lo(q)), mxfp4_lookup(nibbles_hi(q)), x0, x1);
}

#define MIN_M(w) f16_to_f32((w)->m)
#define E8M0_HALF(w) e8m0_half_to_f32((w)->e)

NEON_DEFINE_DOT_32(q4_1_rows, q4_1, block_q4_1, 1, MIN_M)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_q4_1, neon_vec_dot_q4_1),
		   DOT_NAME(neondot_vec_dot_rows_q4_1, neon_vec_dot_rows_q4_1),
		   q4_1_rows, n / QK8_0 * (int64_t)sizeof(struct block_q4_1), NEON_DOT_ROWS)
NEON_DEFINE_DOT_32(q5_0_rows, q5_0, block_q5_0, 0, NO_MIN)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_q5_0, neon_vec_dot_q5_0),
		   DOT_NAME(neondot_vec_dot_rows_q5_0, neon_vec_dot_rows_q5_0),
		   q5_0_rows, n / QK8_0 * (int64_t)sizeof(struct block_q5_0), NEON_DOT_ROWS)
NEON_DEFINE_DOT_32(q5_1_rows, q5_1, block_q5_1, 1, MIN_M)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_q5_1, neon_vec_dot_q5_1),
		   DOT_NAME(neondot_vec_dot_rows_q5_1, neon_vec_dot_rows_q5_1),
		   q5_1_rows, n / QK8_0 * (int64_t)sizeof(struct block_q5_1), NEON_DOT_ROWS)
NEON_DEFINE_DOT_32(iq4_nl_rows, iq4_nl, block_iq4_nl, 0, NO_MIN)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_iq4_nl, neon_vec_dot_iq4_nl),
		   DOT_NAME(neondot_vec_dot_rows_iq4_nl, neon_vec_dot_rows_iq4_nl),
		   iq4_nl_rows, n / QK8_0 * (int64_t)sizeof(struct block_iq4_nl), NEON_DOT_ROWS)
NEON_DEFINE_DOT_32_SCALED(mxfp4_rows, mxfp4, block_mxfp4, 0, NO_MIN, E8M0_HALF)
DEFINE_DOT_ENTRIES(DOT_NAME(neondot_vec_dot_mxfp4, neon_vec_dot_mxfp4),
		   DOT_NAME(neondot_vec_dot_rows_mxfp4, neon_vec_dot_rows_mxfp4),
		   mxfp4_rows, n / QK8_0 * (int64_t)sizeof(struct block_mxfp4), NEON_DOT_ROWS)
