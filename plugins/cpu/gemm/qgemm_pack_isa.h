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

/* An ISA's isc packer <isa>_qgemm_pack_isc_<t> (cpu_qgemm_kernels.pack_b_isc;
 * w_bias unused, the packing unsigned), to be expanded by
 * CPU_QGEMM_ISC_FORMATS (gemm/qgemm.h): its declaration, its definition
 * (the ISA's file has a pack_panel_isc(w, row_bytes, rows, kc, dst, sb,
 * has_min, decoder, qgemm_isc_<t>, block bytes)) and a table entry. */
#define CPU_QGEMM_ISC_PACKER_PROTO(isa, t) \
	void isa##_qgemm_pack_isc_##t(const void *w, int64_t row_bytes, int64_t rows, int64_t kc, int w_bias, void *dst)
#define CPU_QGEMM_ISC_PACKER_DEFINE(isa, t, sb, has_min)                                                   \
	CPU_QGEMM_ISC_PACKER_PROTO(isa, t)                                                                 \
	{                                                                                                  \
		(void)w_bias;                                                                              \
		pack_panel_isc(w, row_bytes, rows, kc, dst, sb, has_min, decode_##t, qgemm_isc_##t,       \
			       sizeof(struct block_##t));                                                  \
	}
#define CPU_QGEMM_ISC_PACKER_ENTRY(isa, t, T) [GLLMK_##T] = isa##_qgemm_pack_isc_##t,

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

/* ------------------------------------------- the isc mode's integers */

/* The integers of one 256-element block (struct cpu_qgemm_format.isc):
 * sub-block scales sc, k (mins with a min, else sc), and the f16 bits of
 * d and dmin (0 without a min). */
static inline void qgemm_isc_q2_K(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin)
{
	const struct block_q2_K *x = block;

	for (int is = 0; is < 16; is++) {
		sc[is] = x->scales[is] & 0x0f;
		k[is] = x->scales[is] >> 4;
	}
	*d = x->d;
	*dmin = x->dmin;
}

static inline void qgemm_isc_q3_K(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin)
{
	const struct block_q3_K *x = block;

	for (int is = 0; is < 16; is++)
		sc[is] = k[is] = (int16_t)q3_K_scale(x->scales, is);
	*d = x->d;
	*dmin = 0;
}

/* q4_K's and q5_K's head (the same offsets in both blocks). */
static inline void qgemm_isc_k4(uint16_t d16, uint16_t dmin16, const uint8_t *scales, int16_t *sc, int16_t *k,
				uint16_t *d, uint16_t *dmin)
{
	uint32_t w[4];

	k4_scales_mins(scales, w);
	for (int is = 0; is < 8; is++) {
		sc[is] = (int16_t)((w[is / 4] >> 8 * (is % 4)) & 0xff);
		k[is] = (int16_t)((w[2 + is / 4] >> 8 * (is % 4)) & 0xff);
	}
	*d = d16;
	*dmin = dmin16;
}

static inline void qgemm_isc_q4_K(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin)
{
	const struct block_q4_K *x = block;

	qgemm_isc_k4(x->d, x->dmin, x->scales, sc, k, d, dmin);
}

static inline void qgemm_isc_q5_K(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin)
{
	const struct block_q5_K *x = block;

	qgemm_isc_k4(x->d, x->dmin, x->scales, sc, k, d, dmin);
}

static inline void qgemm_isc_q6_K(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin)
{
	const struct block_q6_K *x = block;

	for (int is = 0; is < 16; is++)
		sc[is] = k[is] = x->scales[is];
	*d = x->d;
	*dmin = 0;
}

/* iq4_xs: the 8 sub-blocks' ls − 32 (as qgemm_chunk_scales_iq4_xs reads
 * them), k = 0. Its u reach 255, so its isc microkernels take the signed
 * packing (gemm/qgemm.h, isc), which has no c·Σxq term: k 0 makes a
 * kernel that subtracts Σ k·Σxq anyway (cpu-neon's) subtract nothing. */
static inline void qgemm_isc_iq4_xs(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin)
{
	const struct block_iq4_xs *x = block;

	for (int ib = 0; ib < QK_K / 32; ib++) {
		sc[ib] = (int16_t)(iq4_xs_ls(x, ib) - 32);
		k[ib] = 0;
	}
	*d = x->d;
	*dmin = 0;
}

/* One 256 of a panel's rows, as the qgemm_isc_<t> write them. */
struct qgemm_isc_ints {
	int16_t sc[CPU_QGEMM_NR][16], k[CPU_QGEMM_NR][16];
	uint16_t d[CPU_QGEMM_NR], dmin[CPU_QGEMM_NR];
};

/* 256 i of a panel kc deep in the isc mode (gemm/qgemm.h): each scale
 * slot's 16 lanes (sc, sc), the offset slots 0 (with a min), the
 * trailer's d, dmin and (k_2j, k_2j+1) lanes, a slot at a time; the
 * lanes of rows past `rows` 0. */
static inline void qgemm_isc_put(void *dst, int64_t kc, int sb, int has_min, int64_t i, int64_t rows,
				 const struct qgemm_isc_ints *v)
{
	typedef int32_t i32_alias __attribute__((may_alias));
	typedef uint16_t u16_alias __attribute__((may_alias));
	const int64_t nsub = QK_K / sb, sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, has_min);
	uint8_t *tr = (uint8_t *)dst + kc / sb * sb_bytes + i * CPU_QGEMM_ISC_TRAILER(sb);
	i32_alias *kpair = (i32_alias *)(tr + CPU_QGEMM_ISC_KPAIRS(0));

	for (int64_t jj = 0; jj < CPU_QGEMM_NR; jj++) {
		((u16_alias *)(tr + CPU_QGEMM_ISC_D))[jj] = jj < rows ? v->d[jj] : 0;
		((u16_alias *)(tr + CPU_QGEMM_ISC_DMIN))[jj] = jj < rows ? v->dmin[jj] : 0;
	}
	for (int64_t s = 0; s < nsub; s++) {
		i32_alias *slot = (i32_alias *)((uint8_t *)dst + (i * nsub + s) * sb_bytes + CPU_QGEMM_NR * sb);

		for (int64_t jj = 0; jj < CPU_QGEMM_NR; jj++) {
			slot[jj] = jj < rows ? (int32_t)((uint32_t)(uint16_t)v->sc[jj][s] * 0x10001u) : 0;
			if (has_min)
				slot[CPU_QGEMM_NR + jj] = 0;
		}
	}
	for (int64_t j = 0; j < nsub / 2; j++)
		for (int64_t jj = 0; jj < CPU_QGEMM_NR; jj++)
			kpair[CPU_QGEMM_NR * j + jj] = jj < rows ? (int32_t)((uint32_t)(uint16_t)v->k[jj][2 * j] |
								     (uint32_t)(uint16_t)v->k[jj][2 * j + 1] << 16) : 0;
}

#endif
