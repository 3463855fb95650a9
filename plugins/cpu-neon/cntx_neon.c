/* cpu-neon's context tables (BLIS's cntx): for each slot of struct
 * cpu_cntx (plugins/cpu/cpu_cntx.h), the kernel this ISA runs, by
 * name. Two tables that differ only in the integer dot of the quantized
 * matmul: neon_cntx (plain AdvSIMD, any AArch64 CPU) and neondot_cntx (the
 * dot-product extension's sdot); open (plugin_neon.c) picks one by HWCAP.
 */
#include "cpu_cntx.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "neon_kernels.h"
#include "dot_float_simd.h"
#include "rows_simd.h"
#include "attn_simd.h"

/* What both tables hold: the reference kernels as defaults, the AdvSIMD
 * row, attention and float-weight kernels (plugins/cpu/simd, compiled for
 * NEON) over them, then this plugin's own (a later designated initialiser
 * wins: -Wno-override-init). */
#define CNTX_COMMON                                                                                  \
	.dequant_row = REF_DEQUANT_ROWS,                                                             \
	.quant_row = REF_QUANT_ROWS,                                                                 \
	.matmul = REF_MATMUL_KERNELS,                                                                \
	REF_ROW_KERNELS,                                                                             \
	SIMD_ROW_KERNELS(neon),                                                                      \
	SIMD_ATTN_KERNELS(neon),                                                                     \
	.matmul[GLLMK_F32] = { GLLMK_F32, neon_vec_dot_f32, neon_vec_dot_rows_f32, DOT_FLOAT_ROWS,         \
			       neon_vec_dot_tile_f32, DOT_FLOAT_X_ROWS_neon },                         \
	.matmul[GLLMK_F16] = { GLLMK_F32, neon_vec_dot_f16, neon_vec_dot_rows_f16, DOT_FLOAT_ROWS,         \
			       neon_vec_dot_tile_f16, DOT_FLOAT_X_ROWS_neon },                         \
	.matmul[GLLMK_BF16] = { GLLMK_F32, neon_vec_dot_bf16, neon_vec_dot_rows_bf16, DOT_FLOAT_ROWS,      \
				neon_vec_dot_tile_bf16, DOT_FLOAT_X_ROWS_neon },                       \
	.quant_row[GLLMK_Q8_0] = neon_quant_row_q8_0,                                                \
	.quant_row[GLLMK_Q8_K] = neon_quant_row_q8_K,                                                \
	.mr = NEON_SGEMM_MR,                                                                         \
	.nr = NEON_SGEMM_NR,                                                                         \
	.sgemm_ukernel = neon_sgemm_ukernel

/* Every block format: { activation dtype, vec_dot, vec_dot_rows, dot_rows }.
 * Activations encoded to q8_0 (32-element formats) or q8_K (256-element
 * ones), NEON_DOT_ROWS weight rows a call. */
const struct cpu_cntx neon_cntx = {
	.isa = "neon",
	CNTX_COMMON,
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, neon_vec_dot_q8_0, neon_vec_dot_rows_q8_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, neon_vec_dot_q4_0, neon_vec_dot_rows_q4_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_1] = { GLLMK_Q8_0, neon_vec_dot_q4_1, neon_vec_dot_rows_q4_1, NEON_DOT_ROWS },
	.matmul[GLLMK_Q5_0] = { GLLMK_Q8_0, neon_vec_dot_q5_0, neon_vec_dot_rows_q5_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q5_1] = { GLLMK_Q8_0, neon_vec_dot_q5_1, neon_vec_dot_rows_q5_1, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ4_NL] = { GLLMK_Q8_0, neon_vec_dot_iq4_nl, neon_vec_dot_rows_iq4_nl, NEON_DOT_ROWS },
	.matmul[GLLMK_MXFP4] = { GLLMK_Q8_0, neon_vec_dot_mxfp4, neon_vec_dot_rows_mxfp4, NEON_DOT_ROWS },
	.matmul[GLLMK_Q2_K] = { GLLMK_Q8_K, neon_vec_dot_q2_K, neon_vec_dot_rows_q2_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q3_K] = { GLLMK_Q8_K, neon_vec_dot_q3_K, neon_vec_dot_rows_q3_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_K] = { GLLMK_Q8_K, neon_vec_dot_q4_K, neon_vec_dot_rows_q4_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q5_K] = { GLLMK_Q8_K, neon_vec_dot_q5_K, neon_vec_dot_rows_q5_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q6_K] = { GLLMK_Q8_K, neon_vec_dot_q6_K, neon_vec_dot_rows_q6_K, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ4_XS] = { GLLMK_Q8_K, neon_vec_dot_iq4_xs, neon_vec_dot_rows_iq4_xs, NEON_DOT_ROWS },
	.matmul[GLLMK_TQ1_0] = { GLLMK_Q8_K, neon_vec_dot_tq1_0, neon_vec_dot_rows_tq1_0, NEON_DOT_ROWS },
	.matmul[GLLMK_TQ2_0] = { GLLMK_Q8_K, neon_vec_dot_tq2_0, neon_vec_dot_rows_tq2_0, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ2_XXS] = { GLLMK_Q8_K, neon_vec_dot_iq2_xxs, neon_vec_dot_rows_iq2_xxs, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ2_XS] = { GLLMK_Q8_K, neon_vec_dot_iq2_xs, neon_vec_dot_rows_iq2_xs, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ2_S] = { GLLMK_Q8_K, neon_vec_dot_iq2_s, neon_vec_dot_rows_iq2_s, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ3_XXS] = { GLLMK_Q8_K, neon_vec_dot_iq3_xxs, neon_vec_dot_rows_iq3_xxs, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ3_S] = { GLLMK_Q8_K, neon_vec_dot_iq3_s, neon_vec_dot_rows_iq3_s, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ1_S] = { GLLMK_Q8_K, neon_vec_dot_iq1_s, neon_vec_dot_rows_iq1_s, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ1_M] = { GLLMK_Q8_K, neon_vec_dot_iq1_m, neon_vec_dot_rows_iq1_m, NEON_DOT_ROWS },
};

/* The same with sdot. */
const struct cpu_cntx neondot_cntx = {
	.isa = "neon",
	CNTX_COMMON,
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, neondot_vec_dot_q8_0, neondot_vec_dot_rows_q8_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, neondot_vec_dot_q4_0, neondot_vec_dot_rows_q4_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_1] = { GLLMK_Q8_0, neondot_vec_dot_q4_1, neondot_vec_dot_rows_q4_1, NEON_DOT_ROWS },
	.matmul[GLLMK_Q5_0] = { GLLMK_Q8_0, neondot_vec_dot_q5_0, neondot_vec_dot_rows_q5_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q5_1] = { GLLMK_Q8_0, neondot_vec_dot_q5_1, neondot_vec_dot_rows_q5_1, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ4_NL] = { GLLMK_Q8_0, neondot_vec_dot_iq4_nl, neondot_vec_dot_rows_iq4_nl, NEON_DOT_ROWS },
	.matmul[GLLMK_MXFP4] = { GLLMK_Q8_0, neondot_vec_dot_mxfp4, neondot_vec_dot_rows_mxfp4, NEON_DOT_ROWS },
	.matmul[GLLMK_Q2_K] = { GLLMK_Q8_K, neondot_vec_dot_q2_K, neondot_vec_dot_rows_q2_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q3_K] = { GLLMK_Q8_K, neondot_vec_dot_q3_K, neondot_vec_dot_rows_q3_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_K] = { GLLMK_Q8_K, neondot_vec_dot_q4_K, neondot_vec_dot_rows_q4_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q5_K] = { GLLMK_Q8_K, neondot_vec_dot_q5_K, neondot_vec_dot_rows_q5_K, NEON_DOT_ROWS },
	.matmul[GLLMK_Q6_K] = { GLLMK_Q8_K, neondot_vec_dot_q6_K, neondot_vec_dot_rows_q6_K, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ4_XS] = { GLLMK_Q8_K, neondot_vec_dot_iq4_xs, neondot_vec_dot_rows_iq4_xs, NEON_DOT_ROWS },
	.matmul[GLLMK_TQ1_0] = { GLLMK_Q8_K, neondot_vec_dot_tq1_0, neondot_vec_dot_rows_tq1_0, NEON_DOT_ROWS },
	.matmul[GLLMK_TQ2_0] = { GLLMK_Q8_K, neondot_vec_dot_tq2_0, neondot_vec_dot_rows_tq2_0, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ2_XXS] = { GLLMK_Q8_K, neondot_vec_dot_iq2_xxs, neondot_vec_dot_rows_iq2_xxs, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ2_XS] = { GLLMK_Q8_K, neondot_vec_dot_iq2_xs, neondot_vec_dot_rows_iq2_xs, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ2_S] = { GLLMK_Q8_K, neondot_vec_dot_iq2_s, neondot_vec_dot_rows_iq2_s, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ3_XXS] = { GLLMK_Q8_K, neondot_vec_dot_iq3_xxs, neondot_vec_dot_rows_iq3_xxs, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ3_S] = { GLLMK_Q8_K, neondot_vec_dot_iq3_s, neondot_vec_dot_rows_iq3_s, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ1_S] = { GLLMK_Q8_K, neondot_vec_dot_iq1_s, neondot_vec_dot_rows_iq1_s, NEON_DOT_ROWS },
	.matmul[GLLMK_IQ1_M] = { GLLMK_Q8_K, neondot_vec_dot_iq1_m, neondot_vec_dot_rows_iq1_m, NEON_DOT_ROWS },
};
