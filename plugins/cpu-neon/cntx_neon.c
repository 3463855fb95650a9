/* cpu-neon's context tables (BLIS's cntx): for each slot of struct
 * cpu_cntx (plugins/cpu/cpu_cntx.h), the kernel this ISA runs, by
 * name. Two tables that differ only in the integer dot of the quantized
 * matmul: neon_cntx (plain AdvSIMD, any AArch64 CPU) and neondot_cntx (the
 * dot-product extension's sdot); open (plugin_neon.c) picks one by HWCAP.
 * The int8 GEMM's microkernels differ the same way (qgemm_neon.c).
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
 * this ISA) over them, then this plugin's own (a later designated initialiser
 * wins: -Wno-override-init). */
#define CNTX_COMMON                                                                                  \
	.dequant_row = REF_DEQUANT_ROWS,                                                             \
	.quant_row = REF_QUANT_ROWS,                                                                 \
	.matmul = REF_MATMUL_KERNELS,                                                                \
	REF_ROW_KERNELS,                                                                             \
	.add_row = neon_add_row, .nt.add_row = neon_add_row_nt, \
	.mul_row = neon_mul_row, .nt.mul_row = neon_mul_row_nt, \
	.swiglu_row = neon_swiglu_row, .nt.swiglu_row = neon_swiglu_row_nt, \
	.scale_row = neon_scale_row, .nt.scale_row = neon_scale_row_nt, \
	.silu_row = neon_silu_row, .nt.silu_row = neon_silu_row_nt, \
	.gelu_tanh_row = neon_gelu_tanh_row, .nt.gelu_tanh_row = neon_gelu_tanh_row_nt, \
	.gelu_erf_row = neon_gelu_erf_row, .nt.gelu_erf_row = neon_gelu_erf_row_nt, \
	.relu_row = neon_relu_row, .nt.relu_row = neon_relu_row_nt, \
	.tanh_row = neon_tanh_row, .nt.tanh_row = neon_tanh_row_nt, \
	.exp_row = neon_exp_row, .nt.exp_row = neon_exp_row_nt, \
	.sigmoid_row = neon_sigmoid_row, .nt.sigmoid_row = neon_sigmoid_row_nt, \
	.clamp_row = neon_clamp_row, .nt.clamp_row = neon_clamp_row_nt, \
	.softcap_row = neon_softcap_row, .nt.softcap_row = neon_softcap_row_nt, \
	.geglu_row = neon_geglu_row, .nt.geglu_row = neon_geglu_row_nt, \
	.geglu_erf_row = neon_geglu_erf_row, .nt.geglu_erf_row = neon_geglu_erf_row_nt, \
	.reglu_row = neon_reglu_row, .nt.reglu_row = neon_reglu_row_nt, \
	.swiglu_oai_row = neon_swiglu_oai_row, .nt.swiglu_oai_row = neon_swiglu_oai_row_nt, \
	.rms_norm_row = neon_rms_norm_row, .nt.rms_norm_row = neon_rms_norm_row_nt, \
	.layer_norm_row = neon_layer_norm_row, .nt.layer_norm_row = neon_layer_norm_row_nt, \
	.softmax_write_row = neon_softmax_write_row, .nt.softmax_write_row = neon_softmax_write_row_nt, \
	.rope_row = neon_rope_row, .nt.rope_row = neon_rope_row_nt, \
	.dot_f32 = neon_dot_f32, \
	.softmax_max_row = neon_softmax_max_row, \
	.softmax_exp_row = neon_softmax_exp_row, \
	.softmax_sum_row = neon_softmax_sum_row, \
	.dequant_row[GLLMK_F16] = neon_dequant_row_f16, .quant_row[GLLMK_F16] = neon_quant_row_f16, \
	.dequant_row[GLLMK_BF16] = neon_dequant_row_bf16, .quant_row[GLLMK_BF16] = neon_quant_row_bf16, \
	.axpy_f32 = neon_axpy_f32, .axpy_f16 = neon_axpy_f16, .dot_f32_f16 = neon_dot_f32_f16, \
	.attn[GLLMK_F32] = SIMD_ATTN_KERNELS(neon, f32), \
	.attn[GLLMK_F16] = SIMD_ATTN_KERNELS(neon, f16), \
	.attn[GLLMK_BF16] = SIMD_ATTN_KERNELS(neon, bf16), \
	.attn[GLLMK_Q8_0] = SIMD_ATTN_KERNELS(neon, q8_0), \
	.attn[GLLMK_Q4_0] = SIMD_ATTN_KERNELS(neon, q4_0), \
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

/* The int8 GEMM's B packers (qgemm_pack_neon.c), signed like the tables. */
#define NEON_QGEMM_PACK_ENTRY(t, T, sb, has_min) CPU_QGEMM_PACKER_ENTRY(neon, t, T)
#define NEON_QGEMM_PACKERS { CPU_QGEMM_ISA_PACKERS(NEON_QGEMM_PACK_ENTRY) }

/* The K-quants' isc microkernels (qgemm_neon.c), packed by the table's
 * packers unsigned and given their integers by the framework's pass. */
#define NEON_QGEMM_ISC_ENTRY(t, T, sb, has_min, j, shift) [GLLMK_##T] = neon_qgemm_u8_2x16_isc_##t,
#define NEONDOT_QGEMM_ISC_ENTRY(t, T, sb, has_min, j, shift) [GLLMK_##T] = neondot_qgemm_u8_4x16_isc_##t,
#define NEON_QGEMM_ISC_SIGNED_ENTRY(t, T, sb) [GLLMK_##T] = neon_qgemm_s8_2x16_isc_##t,
#define NEONDOT_QGEMM_ISC_SIGNED_ENTRY(t, T, sb) [GLLMK_##T] = neondot_qgemm_s8_4x16_isc_##t,

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
	/* The int8 GEMM at large M (plugins/cpu/gemm/qgemm.c), on the signed
	 * packing: smull + sadalp. */
	.qgemm = CPU_QGEMM_KERNELS(NEON_QGEMM_MR, 1, neon_qgemm_s8_2x16_sb32, neon_qgemm_s8_2x16_sb32_min,
				   neon_qgemm_s8_2x16_sb16, neon_qgemm_s8_2x16_sb16_min),
	.qgemm.ukernel_isc = { CPU_QGEMM_ISC_FORMATS(NEON_QGEMM_ISC_ENTRY)
				CPU_QGEMM_ISC_SIGNED_FORMATS(NEON_QGEMM_ISC_SIGNED_ENTRY) },
	.qgemm.pack_b = NEON_QGEMM_PACKERS,
};

/* The same with sdot. */
const struct cpu_cntx neondot_cntx = {
	.isa = "neon",
	CNTX_COMMON,
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, neondot_vec_dot_q8_0, neondot_vec_dot_rows_q8_0, NEON_DOT_ROWS },
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, neondot_vec_dot_q4_0, neondot_vec_dot_rows_q4_0, NEON_DOT_ROWS },
	.dot_group[CPU_LAYOUT_Q4_0X8] = neondot_dot_q4_0x8,
	.dot_group[CPU_LAYOUT_Q4_KX8] = neondot_dot_q4_Kx8,
	.dot_group[CPU_LAYOUT_Q5_KX8] = neondot_dot_q5_Kx8,
	.dot_group[CPU_LAYOUT_IQ4_XSX8] = neondot_dot_iq4_xsx8,
	.dot_group[CPU_LAYOUT_Q2_KX8] = neondot_dot_q2_Kx8,
	.dot_group[CPU_LAYOUT_Q3_KX8] = neondot_dot_q3_Kx8,
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
	/* sdot. */
	.qgemm = CPU_QGEMM_KERNELS(NEON_QGEMM_DOT_MR, 1, neondot_qgemm_s8_4x16_sb32, neondot_qgemm_s8_4x16_sb32_min,
				   neondot_qgemm_s8_4x16_sb16, neondot_qgemm_s8_4x16_sb16_min),
	.qgemm.ukernel_isc = { CPU_QGEMM_ISC_FORMATS(NEONDOT_QGEMM_ISC_ENTRY)
				CPU_QGEMM_ISC_SIGNED_FORMATS(NEONDOT_QGEMM_ISC_SIGNED_ENTRY) },
	.qgemm.pack_b = NEON_QGEMM_PACKERS,
};
