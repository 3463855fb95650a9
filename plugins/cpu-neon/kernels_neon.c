/* cpu-neon's kernel tables: the reference kernels, overridden by the
 * AdvSIMD ones (a later designated initialiser wins; -Wno-override-init).
 * Two tables that differ only in the integer dot of the quantized matmul:
 * plain AdvSIMD (any AArch64 CPU) and the dot-product extension's sdot;
 * open picks one by HWCAP. The int8 GEMM's microkernels differ the same
 * way (qgemm_neon.c). */
#include "cpu_kernels.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "dot_rows.h"
#include "neon_kernels.h"
#include "dot_float_simd.h"
#include "rows_simd.h"
#include "attn_simd.h"

/* Every block format: activations encoded to q8_0 (32-element formats) or
 * q8_K (256-element ones), NEON_DOT_ROWS weight rows a call. */
#define NEON_MATMUL(vdt, isa, t) DOT_ROWS_MATMUL(vdt, isa, t, NEON_DOT_ROWS)

/* The int8 GEMM at large M (plugins/cpu/ops_qgemm.c), on the signed
 * packing: sdot, or smull + sadalp. */
#define NEONDOT_QGEMM                                                                           \
	CPU_QGEMM_KERNELS(NEON_QGEMM_DOT_MR, 1, neondot_qgemm_s8_4x16_sb32, neondot_qgemm_s8_4x16_sb32_min, \
			  neondot_qgemm_s8_4x16_sb16, neondot_qgemm_s8_4x16_sb16_min)
#define NEON_QGEMM                                                                              \
	CPU_QGEMM_KERNELS(NEON_QGEMM_MR, 1, neon_qgemm_s8_2x16_sb32, neon_qgemm_s8_2x16_sb32_min,    \
			  neon_qgemm_s8_2x16_sb16, neon_qgemm_s8_2x16_sb16_min)

#define NEON_KERNELS(dot, qgemm_kernels)                                                                       \
	{                                                                                       \
		.isa = "neon",                                                                  \
		.dequant_row = REF_DEQUANT_ROWS,                                                \
		.quant_row = REF_QUANT_ROWS,                                                    \
		.matmul = REF_MATMUL_KERNELS,                                                   \
		REF_ROW_KERNELS,                                                                \
		NEON_ROW_KERNELS,                                                               \
		NEON_ATTN_KERNELS,                                                              \
		.quant_row[GLLMK_Q8_0] = neon_quant_row_q8_0,                                   \
		.quant_row[GLLMK_Q8_K] = neon_quant_row_q8_K,                                   \
		DOT_FLOAT_MATMULS(neon),                                                        \
		.matmul[GLLMK_Q8_0] = NEON_MATMUL(Q8_0, dot, q8_0),                             \
		.matmul[GLLMK_Q4_0] = NEON_MATMUL(Q8_0, dot, q4_0),                             \
		.matmul[GLLMK_Q4_1] = NEON_MATMUL(Q8_0, dot, q4_1),                             \
		.matmul[GLLMK_Q5_0] = NEON_MATMUL(Q8_0, dot, q5_0),                             \
		.matmul[GLLMK_Q5_1] = NEON_MATMUL(Q8_0, dot, q5_1),                             \
		.matmul[GLLMK_IQ4_NL] = NEON_MATMUL(Q8_0, dot, iq4_nl),                         \
		.matmul[GLLMK_Q2_K] = NEON_MATMUL(Q8_K, dot, q2_K),                             \
		.matmul[GLLMK_Q3_K] = NEON_MATMUL(Q8_K, dot, q3_K),                             \
		.matmul[GLLMK_Q4_K] = NEON_MATMUL(Q8_K, dot, q4_K),                             \
		.matmul[GLLMK_Q5_K] = NEON_MATMUL(Q8_K, dot, q5_K),                             \
		.matmul[GLLMK_Q6_K] = NEON_MATMUL(Q8_K, dot, q6_K),                             \
		.matmul[GLLMK_IQ4_XS] = NEON_MATMUL(Q8_K, dot, iq4_xs),                         \
		.matmul[GLLMK_IQ2_XXS] = NEON_MATMUL(Q8_K, dot, iq2_xxs),                       \
		.matmul[GLLMK_IQ2_XS] = NEON_MATMUL(Q8_K, dot, iq2_xs),                         \
		.matmul[GLLMK_IQ2_S] = NEON_MATMUL(Q8_K, dot, iq2_s),                           \
		.matmul[GLLMK_IQ3_XXS] = NEON_MATMUL(Q8_K, dot, iq3_xxs),                       \
		.matmul[GLLMK_IQ3_S] = NEON_MATMUL(Q8_K, dot, iq3_s),                           \
		.matmul[GLLMK_IQ1_S] = NEON_MATMUL(Q8_K, dot, iq1_s),                           \
		.matmul[GLLMK_IQ1_M] = NEON_MATMUL(Q8_K, dot, iq1_m),                           \
		.matmul[GLLMK_TQ1_0] = NEON_MATMUL(Q8_K, dot, tq1_0),                           \
		.matmul[GLLMK_TQ2_0] = NEON_MATMUL(Q8_K, dot, tq2_0),                           \
		.matmul[GLLMK_MXFP4] = NEON_MATMUL(Q8_0, dot, mxfp4),                           \
		.mr = NEON_SGEMM_MR,                                                            \
		.nr = NEON_SGEMM_NR,                                                            \
		.sgemm_ukernel = neon_sgemm_ukernel,                                            \
		.qgemm = qgemm_kernels,                                                         \
	}

const struct cpu_kernels neon_kernels = NEON_KERNELS(neon, NEON_QGEMM);
const struct cpu_kernels neon_dotprod_kernels = NEON_KERNELS(neondot, NEONDOT_QGEMM);
