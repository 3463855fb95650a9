/* cpu-neon's kernels (contracts: cpu_cntx.h). AdvSIMD is part of the
 * AArch64 base ISA; only the integer dots (matmul_*_neon.c) are built a
 * second time, with -march=armv8.2-a+dotprod, as neondot_* (sdot), and open
 * picks the table by HWCAP (probe_neon.c).
 */
#ifndef GLLMK_CPU_NEON_KERNELS_H
#define GLLMK_CPU_NEON_KERNELS_H

#include <stdint.h>

#include "cpu_cntx.h"
#include "gemm/qgemm_pack_isa.h"

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
/* ... and the K-quants' isc microkernels (cpu_qgemm_kernels.ukernel_isc) on
 * the unsigned packing, neondot_qgemm_u8_4x16_isc_<t> and
 * neon_qgemm_u8_2x16_isc_<t>. */
#define NEON_DECLARE_QGEMM_ISC(t, T, sb, has_min, j, shift) \
	NEON_DECLARE_QGEMM(neondot_qgemm_u8_4x16_isc_##t) NEON_DECLARE_QGEMM(neon_qgemm_u8_2x16_isc_##t)
CPU_QGEMM_ISC_FORMATS(NEON_DECLARE_QGEMM_ISC)
/* ... and those on the signed packing (CPU_QGEMM_ISC_SIGNED_FORMATS),
 * neondot_qgemm_s8_4x16_isc_<t> and neon_qgemm_s8_2x16_isc_<t>. */
#define NEON_DECLARE_QGEMM_ISC_SIGNED(t, T, sb) \
	NEON_DECLARE_QGEMM(neondot_qgemm_s8_4x16_isc_##t) NEON_DECLARE_QGEMM(neon_qgemm_s8_2x16_isc_##t)
CPU_QGEMM_ISC_SIGNED_FORMATS(NEON_DECLARE_QGEMM_ISC_SIGNED)

/* qgemm_pack_neon.c: the int8 GEMM's B packers (cpu_qgemm_pack_fn),
 * neon_qgemm_pack_<dtype> for each dtype of CPU_QGEMM_ISA_PACKERS
 * (gemm/qgemm_pack_isa.h), the same bytes as the framework's cpu_qgemm_pack_b. */
#define NEON_DECLARE_QGEMM_PACK(t, T, sb, has_min) CPU_QGEMM_PACKER_PROTO(neon, t);
CPU_QGEMM_ISA_PACKERS(NEON_DECLARE_QGEMM_PACK)

/* quant_neon.c: the q8_0 and q8_K activation encoders, bit for bit the
 * reference encoders (ref_quant_row_q8_0, ref_quant_row_q8_K). */
void neon_quant_row_q8_0(const float *src, void *dst, int64_t n);
void neon_quant_row_q8_K(const float *src, void *dst, int64_t n);

/* matmul_*_neon.c, per integer-dot flavour (neon_dot.h): block weights
 * against q8_0 activations (32-element formats) or q8_K (256-element ones),
 * each as vec_dot and as vec_dot_rows of NEON_DOT_ROWS rows. */
#define NEON_DOT_ROWS 4
cpu_vec_dot_fn neon_vec_dot_q8_0, neondot_vec_dot_q8_0;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q8_0, neondot_vec_dot_rows_q8_0;
cpu_vec_dot_fn neon_vec_dot_q4_0, neondot_vec_dot_q4_0;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q4_0, neondot_vec_dot_rows_q4_0;
/* prepared weights: the sdot table only */
cpu_dot_group_fn neondot_dot_q4_0x8, neondot_dot_q4_Kx8, neondot_dot_q5_Kx8, neondot_dot_iq4_xsx8;
cpu_dot_group_fn neondot_dot_q2_Kx8, neondot_dot_q3_Kx8;
cpu_vec_dot_fn neon_vec_dot_q4_1, neondot_vec_dot_q4_1;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q4_1, neondot_vec_dot_rows_q4_1;
cpu_vec_dot_fn neon_vec_dot_q5_0, neondot_vec_dot_q5_0;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q5_0, neondot_vec_dot_rows_q5_0;
cpu_vec_dot_fn neon_vec_dot_q5_1, neondot_vec_dot_q5_1;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q5_1, neondot_vec_dot_rows_q5_1;
cpu_vec_dot_fn neon_vec_dot_iq4_nl, neondot_vec_dot_iq4_nl;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq4_nl, neondot_vec_dot_rows_iq4_nl;
cpu_vec_dot_fn neon_vec_dot_mxfp4, neondot_vec_dot_mxfp4;
cpu_vec_dot_rows_fn neon_vec_dot_rows_mxfp4, neondot_vec_dot_rows_mxfp4;
cpu_vec_dot_fn neon_vec_dot_q2_K, neondot_vec_dot_q2_K;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q2_K, neondot_vec_dot_rows_q2_K;
cpu_vec_dot_fn neon_vec_dot_q3_K, neondot_vec_dot_q3_K;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q3_K, neondot_vec_dot_rows_q3_K;
cpu_vec_dot_fn neon_vec_dot_q4_K, neondot_vec_dot_q4_K;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q4_K, neondot_vec_dot_rows_q4_K;
cpu_vec_dot_fn neon_vec_dot_q5_K, neondot_vec_dot_q5_K;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q5_K, neondot_vec_dot_rows_q5_K;
cpu_vec_dot_fn neon_vec_dot_q6_K, neondot_vec_dot_q6_K;
cpu_vec_dot_rows_fn neon_vec_dot_rows_q6_K, neondot_vec_dot_rows_q6_K;
cpu_vec_dot_fn neon_vec_dot_iq4_xs, neondot_vec_dot_iq4_xs;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq4_xs, neondot_vec_dot_rows_iq4_xs;
cpu_vec_dot_fn neon_vec_dot_tq1_0, neondot_vec_dot_tq1_0;
cpu_vec_dot_rows_fn neon_vec_dot_rows_tq1_0, neondot_vec_dot_rows_tq1_0;
cpu_vec_dot_fn neon_vec_dot_tq2_0, neondot_vec_dot_tq2_0;
cpu_vec_dot_rows_fn neon_vec_dot_rows_tq2_0, neondot_vec_dot_rows_tq2_0;
cpu_vec_dot_fn neon_vec_dot_iq2_xxs, neondot_vec_dot_iq2_xxs;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq2_xxs, neondot_vec_dot_rows_iq2_xxs;
cpu_vec_dot_fn neon_vec_dot_iq2_xs, neondot_vec_dot_iq2_xs;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq2_xs, neondot_vec_dot_rows_iq2_xs;
cpu_vec_dot_fn neon_vec_dot_iq2_s, neondot_vec_dot_iq2_s;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq2_s, neondot_vec_dot_rows_iq2_s;
cpu_vec_dot_fn neon_vec_dot_iq3_xxs, neondot_vec_dot_iq3_xxs;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq3_xxs, neondot_vec_dot_rows_iq3_xxs;
cpu_vec_dot_fn neon_vec_dot_iq3_s, neondot_vec_dot_iq3_s;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq3_s, neondot_vec_dot_rows_iq3_s;
cpu_vec_dot_fn neon_vec_dot_iq1_s, neondot_vec_dot_iq1_s;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq1_s, neondot_vec_dot_rows_iq1_s;
cpu_vec_dot_fn neon_vec_dot_iq1_m, neondot_vec_dot_iq1_m;
cpu_vec_dot_rows_fn neon_vec_dot_rows_iq1_m, neondot_vec_dot_rows_iq1_m;

/* probe_neon.c: what HWCAP/HWCAP2 report (baseline code). */
struct neon_features {
	int asimd;      /* AdvSIMD: required */
	int fp16;       /* half-precision arithmetic (FPHP + ASIMDHP) */
	int dotprod;    /* sdot/udot */
	int i8mm;       /* smmla */
};
void neon_features_read(struct neon_features *f);

#endif
