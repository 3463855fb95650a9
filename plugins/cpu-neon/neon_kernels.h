/* cpu-neon's kernels (contracts: cpu_kernels.h). AdvSIMD is part of the
 * AArch64 base ISA; only the integer dots (matmul_*_neon.c) are built a
 * second time, with -march=armv8.2-a+dotprod, as neondot_* (sdot), and open
 * picks the table by HWCAP (probe_neon.c).
 */
#ifndef GLLMK_CPU_NEON_KERNELS_H
#define GLLMK_CPU_NEON_KERNELS_H

#include <stdint.h>

#include "dot_rows.h"

/* sgemm_neon.c: 8×12 FMA register block (24 accumulators of 4 lanes, 3 B
 * and 2 A registers: 29 of the 32 vector registers). */
#define NEON_SGEMM_MR 8
#define NEON_SGEMM_NR 12
void neon_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
			float beta);

/* qgemm_neon.c: the int8 GEMM microkernels (cpu_qgemm_kernels) on the
 * signed packing: neondot_* (sdot, built with +dotprod) 4 activation rows ×
 * 16 weight rows, neon_* (smull + sadalp, any AArch64 CPU) 2 × 16. */
#define NEON_QGEMM_DOT_MR 4
#define NEON_QGEMM_MR 2
#define NEON_DECLARE_QGEMM(name) \
	void name(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate);
NEON_DECLARE_QGEMM(neondot_qgemm_s8_4x16_sb32)
NEON_DECLARE_QGEMM(neondot_qgemm_s8_4x16_sb32_min)
NEON_DECLARE_QGEMM(neondot_qgemm_s8_4x16_sb16)
NEON_DECLARE_QGEMM(neondot_qgemm_s8_4x16_sb16_min)
NEON_DECLARE_QGEMM(neon_qgemm_s8_2x16_sb32)
NEON_DECLARE_QGEMM(neon_qgemm_s8_2x16_sb32_min)
NEON_DECLARE_QGEMM(neon_qgemm_s8_2x16_sb16)
NEON_DECLARE_QGEMM(neon_qgemm_s8_2x16_sb16_min)

/* quant_neon.c: the q8_0 and q8_K activation encoders, bit for bit the
 * reference encoders (ref_quant_row_q8_0, ref_quant_row_q8_K). */
void neon_quant_row_q8_0(const float *src, void *dst, int64_t n);
void neon_quant_row_q8_K(const float *src, void *dst, int64_t n);

/* matmul_*_neon.c, per integer-dot flavour (neon_dot.h): block weights
 * against q8_0 activations (32-element formats) or q8_K (256-element ones),
 * each as vec_dot and as vec_dot_rows of NEON_DOT_ROWS rows. */
#define NEON_DOT_ROWS 4
#define NEON_DECLARE_VEC_DOTS(isa)                                              \
	/* matmul_quant_neon.c */                                               \
	DOT_ENTRIES_DECLARE(isa, q8_0) DOT_ENTRIES_DECLARE(isa, q4_0)           \
	/* matmul_legacy_neon.c */                                              \
	DOT_ENTRIES_DECLARE(isa, q4_1) DOT_ENTRIES_DECLARE(isa, q5_0)           \
	DOT_ENTRIES_DECLARE(isa, q5_1) DOT_ENTRIES_DECLARE(isa, iq4_nl)         \
	DOT_ENTRIES_DECLARE(isa, mxfp4)                                         \
	/* matmul_kquant_neon.c */                                              \
	DOT_ENTRIES_DECLARE(isa, q2_K) DOT_ENTRIES_DECLARE(isa, q3_K)           \
	DOT_ENTRIES_DECLARE(isa, q4_K) DOT_ENTRIES_DECLARE(isa, q5_K)           \
	DOT_ENTRIES_DECLARE(isa, q6_K) DOT_ENTRIES_DECLARE(isa, iq4_xs)         \
	DOT_ENTRIES_DECLARE(isa, tq1_0) DOT_ENTRIES_DECLARE(isa, tq2_0)         \
	DOT_ENTRIES_DECLARE(isa, iq2_xxs) DOT_ENTRIES_DECLARE(isa, iq2_xs)      \
	DOT_ENTRIES_DECLARE(isa, iq2_s) DOT_ENTRIES_DECLARE(isa, iq3_xxs)       \
	DOT_ENTRIES_DECLARE(isa, iq3_s) DOT_ENTRIES_DECLARE(isa, iq1_s)         \
	DOT_ENTRIES_DECLARE(isa, iq1_m)
NEON_DECLARE_VEC_DOTS(neon)
NEON_DECLARE_VEC_DOTS(neondot)

/* probe_neon.c: what HWCAP/HWCAP2 report (baseline code). */
struct neon_features {
	int asimd;      /* AdvSIMD: required */
	int fp16;       /* half-precision arithmetic (FPHP + ASIMDHP) */
	int dotprod;    /* sdot/udot */
	int i8mm;       /* smmla */
};
void neon_features_read(struct neon_features *f);

#endif
