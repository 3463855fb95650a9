/* What the ISAs' B packers of the int8 GEMM share
 * (plugins/cpu-avx512/qgemm_pack_avx512.c, plugins/cpu-avx2/qgemm_pack_avx2.c):
 * the dtypes they pack and the scalar half of their decoders, the scales
 * and offsets of a 64-element chunk c of a row, computed as the framework's
 * C decoders compute them (qgemm_pack.c) so that the panels are
 * byte-identical. Each writes sub-block s's at scale[CPU_QGEMM_NR·s] (and
 * off[..]); d and dmin come converted (F16C in both ISAs, exactly as
 * fp16.h). Layouts: SPEC/QUANT.md.
 */
#ifndef GLLMK_CPU_QGEMM_PACK_ISA_H
#define GLLMK_CPU_QGEMM_PACK_ISA_H

#include "gemm/qgemm.h"
#include "quant_blocks.h"

/* X(dtype, DTYPE, sub-block, has a min) for every dtype with an ISA packer. */
#define CPU_QGEMM_ISA_PACKERS(X)                                                                    \
	X(q4_0, Q4_0, 32, 0) X(iq4_nl, IQ4_NL, 32, 0) X(q8_0, Q8_0, 32, 0) X(iq4_xs, IQ4_XS, 32, 0) \
	X(q4_K, Q4_K, 32, 1) X(q5_K, Q5_K, 32, 1) X(q6_K, Q6_K, 16, 0) X(q3_K, Q3_K, 16, 0)         \
	X(q2_K, Q2_K, 16, 1)

/* The packer <isa>_qgemm_pack_<t> (cpu_qgemm_pack_fn): its declaration,
 * its definition (the ISA's file has a pack_panel(w, row_bytes, rows, kc,
 * w_bias, dst, sb, has_min, decoder) and a decode_<t> per dtype) and a
 * table's pack_b entry, to be expanded by CPU_QGEMM_ISA_PACKERS. */
#define CPU_QGEMM_PACKER_PROTO(isa, t) \
	void isa##_qgemm_pack_##t(const void *w, int64_t row_bytes, int64_t rows, int64_t kc, int w_bias, void *dst)
#define CPU_QGEMM_PACKER_DEFINE(isa, t, sb, has_min)                                        \
	CPU_QGEMM_PACKER_PROTO(isa, t)                                                      \
	{                                                                                   \
		pack_panel(w, row_bytes, rows, kc, w_bias, dst, sb, has_min, decode_##t);   \
	}
#define CPU_QGEMM_PACKER_ENTRY(isa, t, T) [GLLMK_##T] = isa##_qgemm_pack_##t,

/* iq4_xs: chunk q = c mod 4 is 32-element sub-blocks 2q, 2q + 1, scale
 * d·(ls − 32) with ls 4 low bits from scales_l, 2 high from scales_h. */
static inline void qgemm_chunk_scales_iq4_xs(const struct block_iq4_xs *x, int q, float d, float *scale)
{
	/* unsigned fields: gcc -O3 otherwise spills a byte and reloads it as
	 * an int (a store-forwarding stall: 2x the pack's time) */
	const unsigned lo = x->scales_l[q], hi = (unsigned)x->scales_h >> 4 * q;
	const int ls0 = (int)((lo & 0x0f) | (hi & 3) << 4), ls1 = (int)(lo >> 4 | (hi & 0x0c) << 2);

	scale[0] = d * (ls0 - 32);
	scale[CPU_QGEMM_NR] = d * (ls1 - 32);
}

/* q4_K and q5_K: chunk q is sub-blocks 2q, 2q + 1, scale d·sc, offset −dmin·m. */
static inline void qgemm_chunk_scales_k4(const uint8_t *scales, float d, float dmin, int q, float *scale,
					 float *off)
{
	for (int h = 0; h < 2; h++) {
		uint8_t sc, m;

		k4_scale_min(2 * q + h, scales, &sc, &m);
		scale[CPU_QGEMM_NR * h] = d * sc;
		off[CPU_QGEMM_NR * h] = -(dmin * m);
	}
}

/* q6_K: chunk q's four 16-element sub-blocks, scale d·sc. */
static inline void qgemm_chunk_scales_q6_K(const struct block_q6_K *x, int q, float d, float *scale)
{
	for (int s = 0; s < 4; s++)
		scale[CPU_QGEMM_NR * s] = d * x->scales[4 * q + s];
}

/* q3_K: chunk q's four 16-element sub-blocks, scale d·(6-bit scale − 32). */
static inline void qgemm_chunk_scales_q3_K(const struct block_q3_K *x, int q, float d, float *scale)
{
	for (int s = 0; s < 4; s++)
		scale[CPU_QGEMM_NR * s] = d * q3_K_scale(x->scales, 4 * q + s);
}

/* q2_K: chunk q's four 16-element sub-blocks, scale d·(sc & 15), offset
 * −dmin·(sc >> 4). */
static inline void qgemm_chunk_scales_q2_K(const struct block_q2_K *x, int q, float d, float dmin, float *scale,
					   float *off)
{
	for (int s = 0; s < 4; s++) {
		scale[CPU_QGEMM_NR * s] = d * (x->scales[4 * q + s] & 0x0f);
		off[CPU_QGEMM_NR * s] = -(dmin * (x->scales[4 * q + s] >> 4));
	}
}

#endif
