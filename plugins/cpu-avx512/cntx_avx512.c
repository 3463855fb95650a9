/* cpu-avx512's context tables (BLIS's cntx): for each slot of struct
 * cpu_cntx (plugins/cpu/cpu_cntx.h), the kernel this ISA runs, by
 * name. Two tables that differ only in the integer dots: avx512vnni_cntx
 * (vpdpbusd, and the int8 GEMM) for CPUs with AVX512_VNNI, avx512_cntx
 * (vpmaddubsw) for the others, Skylake-X; open (plugin_avx512.c) picks one.
 * Data only: this file is built without ISA flags.
 */
#include "cpu_cntx.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "avx512_kernels.h"
#include "rows_simd.h"
#include "attn_simd.h"
#include "dot_float_simd.h"

/* What both tables hold: the reference kernels as defaults, the AVX-512
 * row, attention and float-weight kernels (plugins/cpu/simd, compiled for
 * this ISA) over them, then this plugin's own (a later designated
 * initialiser wins: -Wno-override-init). f32, f16 and bf16 weights keep x
 * in f32 (f32 weights: the vec_dot path at small M, the GEMM at large M). */
#define CNTX_COMMON                                                                                  \
	.dequant_row = REF_DEQUANT_ROWS,                                                             \
	.quant_row = REF_QUANT_ROWS,                                                                 \
	.matmul = REF_MATMUL_KERNELS,                                                                \
	REF_ROW_KERNELS,                                                                             \
	.add_row = avx512_add_row, .nt.add_row = avx512_add_row_nt, \
	.mul_row = avx512_mul_row, .nt.mul_row = avx512_mul_row_nt, \
	.swiglu_row = avx512_swiglu_row, .nt.swiglu_row = avx512_swiglu_row_nt, \
	.scale_row = avx512_scale_row, .nt.scale_row = avx512_scale_row_nt, \
	.silu_row = avx512_silu_row, .nt.silu_row = avx512_silu_row_nt, \
	.gelu_tanh_row = avx512_gelu_tanh_row, .nt.gelu_tanh_row = avx512_gelu_tanh_row_nt, \
	.gelu_erf_row = avx512_gelu_erf_row, .nt.gelu_erf_row = avx512_gelu_erf_row_nt, \
	.relu_row = avx512_relu_row, .nt.relu_row = avx512_relu_row_nt, \
	.tanh_row = avx512_tanh_row, .nt.tanh_row = avx512_tanh_row_nt, \
	.exp_row = avx512_exp_row, .nt.exp_row = avx512_exp_row_nt, \
	.sigmoid_row = avx512_sigmoid_row, .nt.sigmoid_row = avx512_sigmoid_row_nt, \
	.clamp_row = avx512_clamp_row, .nt.clamp_row = avx512_clamp_row_nt, \
	.softcap_row = avx512_softcap_row, .nt.softcap_row = avx512_softcap_row_nt, \
	.geglu_row = avx512_geglu_row, .nt.geglu_row = avx512_geglu_row_nt, \
	.geglu_erf_row = avx512_geglu_erf_row, .nt.geglu_erf_row = avx512_geglu_erf_row_nt, \
	.reglu_row = avx512_reglu_row, .nt.reglu_row = avx512_reglu_row_nt, \
	.swiglu_oai_row = avx512_swiglu_oai_row, .nt.swiglu_oai_row = avx512_swiglu_oai_row_nt, \
	.rms_norm_row = avx512_rms_norm_row, .nt.rms_norm_row = avx512_rms_norm_row_nt, \
	.layer_norm_row = avx512_layer_norm_row, .nt.layer_norm_row = avx512_layer_norm_row_nt, \
	.softmax_write_row = avx512_softmax_write_row, .nt.softmax_write_row = avx512_softmax_write_row_nt, \
	.rope_row = avx512_rope_row, .nt.rope_row = avx512_rope_row_nt, \
	.dot_f32 = avx512_dot_f32, \
	.softmax_max_row = avx512_softmax_max_row, \
	.softmax_exp_row = avx512_softmax_exp_row, \
	.softmax_sum_row = avx512_softmax_sum_row, \
	.dequant_row[GLLMK_F16] = avx512_dequant_row_f16, .quant_row[GLLMK_F16] = avx512_quant_row_f16, \
	.dequant_row[GLLMK_BF16] = avx512_dequant_row_bf16, .quant_row[GLLMK_BF16] = avx512_quant_row_bf16, \
	.axpy_f32 = avx512_axpy_f32, .axpy_f16 = avx512_axpy_f16, .dot_f32_f16 = avx512_dot_f32_f16, \
	.attn[GLLMK_F32] = SIMD_ATTN_KERNELS(avx512, f32), \
	.attn[GLLMK_F16] = SIMD_ATTN_KERNELS(avx512, f16), \
	.attn[GLLMK_BF16] = SIMD_ATTN_KERNELS(avx512, bf16), \
	.attn[GLLMK_Q8_0] = SIMD_ATTN_KERNELS(avx512, q8_0), \
	.attn[GLLMK_Q4_0] = SIMD_ATTN_KERNELS(avx512, q4_0), \
	.matmul[GLLMK_F32] = { GLLMK_F32, avx512_vec_dot_f32, avx512_vec_dot_rows_f32, DOT_FLOAT_ROWS,     \
			       avx512_vec_dot_tile_f32, DOT_FLOAT_X_ROWS_avx512 },                     \
	.matmul[GLLMK_F16] = { GLLMK_F32, avx512_vec_dot_f16, avx512_vec_dot_rows_f16, DOT_FLOAT_ROWS,     \
			       avx512_vec_dot_tile_f16, DOT_FLOAT_X_ROWS_avx512 },                     \
	.matmul[GLLMK_BF16] = { GLLMK_F32, avx512_vec_dot_bf16, avx512_vec_dot_rows_bf16, DOT_FLOAT_ROWS,  \
				avx512_vec_dot_tile_bf16, DOT_FLOAT_X_ROWS_avx512 },                   \
	.dequant_row[GLLMK_Q8_0] = avx512_dequant_row_q8_0,                                          \
	.dequant_row[GLLMK_Q4_0] = avx512_dequant_row_q4_0,                                          \
	.dequant_row[GLLMK_Q4_K] = avx512_dequant_row_q4_K,                                          \
	.dequant_row[GLLMK_Q6_K] = avx512_dequant_row_q6_K,                                          \
	.quant_row[GLLMK_Q8_0] = avx512_quant_row_q8_0,                                              \
	.quant_row[GLLMK_Q8_K] = avx512_quant_row_q8_K,                                              \
	.mr = AVX512_SGEMM_MR,                                                                       \
	.nr = AVX512_SGEMM_NR,                                                                       \
	.sgemm_ukernel = avx512_sgemm_ukernel

/* The block formats: { activation dtype, vec_dot, vec_dot_rows, dot_rows
 * [, vec_dot_tile, x_rows] }. The 32-element formats pair with q8_0
 * activations, the 256-element ones with q8_K. */
const struct cpu_cntx avx512_cntx = {
	.isa = "avx512",
	CNTX_COMMON,
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, avx512_vec_dot_q8_0, avx512_vec_dot_rows_q8_0, AVX512_DOT_ROWS },
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, avx512_vec_dot_q4_0, avx512_vec_dot_rows_q4_0, AVX512_Q4_0_DOT_ROWS },
	.dot_group[CPU_LAYOUT_Q4_0X8] = avx512_dot_q4_0x8,
	.dot_group[CPU_LAYOUT_Q4_KX8] = avx512_dot_q4_Kx8,
	.dot_group[CPU_LAYOUT_Q5_KX8] = avx512_dot_q5_Kx8,
	.dot_group[CPU_LAYOUT_IQ4_XSX8] = avx512_dot_iq4_xsx8,
	.dot_group[CPU_LAYOUT_Q2_KX8] = avx512_dot_q2_Kx8,
	.dot_group[CPU_LAYOUT_Q3_KX8] = avx512_dot_q3_Kx8,
	.matmul[GLLMK_Q4_1] = { GLLMK_Q8_0, avx512_vec_dot_q4_1, avx512_vec_dot_rows_q4_1, AVX512_DOT_ROWS },
	.matmul[GLLMK_Q5_0] = { GLLMK_Q8_0, avx512_vec_dot_q5_0, avx512_vec_dot_rows_q5_0, AVX512_DOT_ROWS },
	.matmul[GLLMK_Q5_1] = { GLLMK_Q8_0, avx512_vec_dot_q5_1, avx512_vec_dot_rows_q5_1, AVX512_DOT_ROWS },
	.matmul[GLLMK_IQ4_NL] = { GLLMK_Q8_0, avx512_vec_dot_iq4_nl, avx512_vec_dot_rows_iq4_nl, AVX512_DOT_ROWS },
	.matmul[GLLMK_MXFP4] = { GLLMK_Q8_0, avx512_vec_dot_mxfp4, avx512_vec_dot_rows_mxfp4, AVX512_DOT_ROWS },
	.matmul[GLLMK_IQ4_XS] = { GLLMK_Q8_K, avx512_vec_dot_iq4_xs, avx512_vec_dot_rows_iq4_xs, AVX512_DOT_ROWS },
	.matmul[GLLMK_Q2_K] = { GLLMK_Q8_K, avx512_vec_dot_q2_K, avx512_vec_dot_rows_q2_K, AVX512_KQ_DOT_ROWS },
	.matmul[GLLMK_Q3_K] = { GLLMK_Q8_K, avx512_vec_dot_q3_K, avx512_vec_dot_rows_q3_K, AVX512_KQ_DOT_ROWS },
	.matmul[GLLMK_Q4_K] = { GLLMK_Q8_K, avx512_vec_dot_q4_K, avx512_vec_dot_rows_q4_K, AVX512_KQ_DOT_ROWS },
	.matmul[GLLMK_Q5_K] = { GLLMK_Q8_K, avx512_vec_dot_q5_K, avx512_vec_dot_rows_q5_K, AVX512_KQ_DOT_ROWS },
	.matmul[GLLMK_Q6_K] = { GLLMK_Q8_K, avx512_vec_dot_q6_K, avx512_vec_dot_rows_q6_K, AVX512_KQ_DOT_ROWS },
	.matmul[GLLMK_TQ1_0] = { GLLMK_Q8_K, avx512_vec_dot_tq1_0, avx512_vec_dot_rows_tq1_0, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_tq1_0, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_TQ2_0] = { GLLMK_Q8_K, avx512_vec_dot_tq2_0, avx512_vec_dot_rows_tq2_0, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_tq2_0, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ2_XXS] = { GLLMK_Q8_K, avx512_vec_dot_iq2_xxs, avx512_vec_dot_rows_iq2_xxs, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq2_xxs, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ2_XS] = { GLLMK_Q8_K, avx512_vec_dot_iq2_xs, avx512_vec_dot_rows_iq2_xs, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq2_xs, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ2_S] = { GLLMK_Q8_K, avx512_vec_dot_iq2_s, avx512_vec_dot_rows_iq2_s, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq2_s, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ3_XXS] = { GLLMK_Q8_K, avx512_vec_dot_iq3_xxs, avx512_vec_dot_rows_iq3_xxs, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq3_xxs, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ3_S] = { GLLMK_Q8_K, avx512_vec_dot_iq3_s, avx512_vec_dot_rows_iq3_s, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq3_s, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ1_S] = { GLLMK_Q8_K, avx512_vec_dot_iq1_s, avx512_vec_dot_rows_iq1_s, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq1_s, AVX512_KQ_X_ROWS },
	.matmul[GLLMK_IQ1_M] = { GLLMK_Q8_K, avx512_vec_dot_iq1_m, avx512_vec_dot_rows_iq1_m, AVX512_KQ_DOT_ROWS,
				avx512_vec_dot_tile_iq1_m, AVX512_KQ_X_ROWS },
};

/* The same with vpdpbusd, and the int8 GEMM (VNNI only). */
#define AVX512_QGEMM_PACK_ENTRY(t, T, sb, has_min) CPU_QGEMM_PACKER_ENTRY(avx512, t, T)

#define CNTX_VNNI \
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, avx512vnni_vec_dot_q8_0, avx512vnni_vec_dot_rows_q8_0, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, avx512vnni_vec_dot_q4_0, avx512vnni_vec_dot_rows_q4_0, AVX512_Q4_0_DOT_ROWS }, \
	.dot_group[CPU_LAYOUT_Q4_0X8] = avx512vnni_dot_q4_0x8, \
	.dot_group[CPU_LAYOUT_Q4_KX8] = avx512vnni_dot_q4_Kx8, \
	.dot_group[CPU_LAYOUT_Q5_KX8] = avx512vnni_dot_q5_Kx8, \
	.dot_group[CPU_LAYOUT_IQ4_XSX8] = avx512vnni_dot_iq4_xsx8, \
	.dot_group[CPU_LAYOUT_Q2_KX8] = avx512vnni_dot_q2_Kx8, \
	.dot_group[CPU_LAYOUT_Q3_KX8] = avx512vnni_dot_q3_Kx8, \
	.matmul[GLLMK_Q4_1] = { GLLMK_Q8_0, avx512vnni_vec_dot_q4_1, avx512vnni_vec_dot_rows_q4_1, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_Q5_0] = { GLLMK_Q8_0, avx512vnni_vec_dot_q5_0, avx512vnni_vec_dot_rows_q5_0, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_Q5_1] = { GLLMK_Q8_0, avx512vnni_vec_dot_q5_1, avx512vnni_vec_dot_rows_q5_1, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_IQ4_NL] = { GLLMK_Q8_0, avx512vnni_vec_dot_iq4_nl, avx512vnni_vec_dot_rows_iq4_nl, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_MXFP4] = { GLLMK_Q8_0, avx512vnni_vec_dot_mxfp4, avx512vnni_vec_dot_rows_mxfp4, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_IQ4_XS] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq4_xs, avx512vnni_vec_dot_rows_iq4_xs, AVX512_DOT_ROWS }, \
	.matmul[GLLMK_Q2_K] = { GLLMK_Q8_K, avx512vnni_vec_dot_q2_K, avx512vnni_vec_dot_rows_q2_K, AVX512_KQ_DOT_ROWS }, \
	.matmul[GLLMK_Q3_K] = { GLLMK_Q8_K, avx512vnni_vec_dot_q3_K, avx512vnni_vec_dot_rows_q3_K, AVX512_KQ_DOT_ROWS }, \
	.matmul[GLLMK_Q4_K] = { GLLMK_Q8_K, avx512vnni_vec_dot_q4_K, avx512vnni_vec_dot_rows_q4_K, AVX512_KQ_DOT_ROWS }, \
	.matmul[GLLMK_Q5_K] = { GLLMK_Q8_K, avx512vnni_vec_dot_q5_K, avx512vnni_vec_dot_rows_q5_K, AVX512_KQ_DOT_ROWS }, \
	.matmul[GLLMK_Q6_K] = { GLLMK_Q8_K, avx512vnni_vec_dot_q6_K, avx512vnni_vec_dot_rows_q6_K, AVX512_KQ_DOT_ROWS }, \
	.matmul[GLLMK_TQ1_0] = { GLLMK_Q8_K, avx512vnni_vec_dot_tq1_0, avx512vnni_vec_dot_rows_tq1_0, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_tq1_0, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_TQ2_0] = { GLLMK_Q8_K, avx512vnni_vec_dot_tq2_0, avx512vnni_vec_dot_rows_tq2_0, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_tq2_0, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ2_XXS] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq2_xxs, avx512vnni_vec_dot_rows_iq2_xxs, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq2_xxs, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ2_XS] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq2_xs, avx512vnni_vec_dot_rows_iq2_xs, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq2_xs, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ2_S] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq2_s, avx512vnni_vec_dot_rows_iq2_s, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq2_s, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ3_XXS] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq3_xxs, avx512vnni_vec_dot_rows_iq3_xxs, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq3_xxs, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ3_S] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq3_s, avx512vnni_vec_dot_rows_iq3_s, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq3_s, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ1_S] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq1_s, avx512vnni_vec_dot_rows_iq1_s, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq1_s, AVX512_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ1_M] = { GLLMK_Q8_K, avx512vnni_vec_dot_iq1_m, avx512vnni_vec_dot_rows_iq1_m, AVX512_KQ_DOT_ROWS, \
				avx512vnni_vec_dot_tile_iq1_m, AVX512_KQ_X_ROWS }, \
	.qgemm = { .mr = AVX512_QGEMM_MR, \
		   .ukernel = { { avx512vnni_qgemm_ukernel_sb32, avx512vnni_qgemm_ukernel_sb32_min }, \
				{ avx512vnni_qgemm_ukernel_sb16, avx512vnni_qgemm_ukernel_sb16_min } }, \
		   .ukernel_xs256 = { { avx512vnni_qgemm_ukernel_sb32_xs256, avx512vnni_qgemm_ukernel_sb32_min_xs256 }, \
				      { avx512vnni_qgemm_ukernel_sb16_xs256, avx512vnni_qgemm_ukernel_sb16_min_xs256 } }, \
		   .pack_b = { CPU_QGEMM_ISA_PACKERS(AVX512_QGEMM_PACK_ENTRY) }, \
		   /* Where this GEMM overtakes the vec_dot rows (Zen 4, 2 threads, \
		    * the 1B model's layer shapes; SPEC/CPU.md "Small M", \
		    * BENCHMARKS.md "Session 8"): the formats with an ISA packer \
		    * above by M = 4-12; q4_1, q5_0, q5_1, mxfp4 and tq1_0 (the \
		    * framework's packer) near M = 28; tq2_0's tiles near 40; the \
		    * codebook i-quants near 16-28 since their packing builds 8 \
		    * bytes a word (BENCHMARKS.md "Session 10 (CPU)"). */ \
		   .small_m = { [GLLMK_Q8_0] = 4, [GLLMK_IQ4_NL] = 4, [GLLMK_IQ4_XS] = 3, \
				[GLLMK_Q4_0] = 8, [GLLMK_Q5_K] = 8, [GLLMK_Q6_K] = 8, \
				[GLLMK_Q2_K] = 10, [GLLMK_Q4_K] = 10, [GLLMK_Q3_K] = 12, \
				[GLLMK_Q4_1] = 24, [GLLMK_Q5_0] = 24, [GLLMK_Q5_1] = 24, \
				[GLLMK_MXFP4] = 24, [GLLMK_TQ1_0] = 24, [GLLMK_TQ2_0] = 40, \
				[GLLMK_IQ2_XXS] = 20, [GLLMK_IQ2_XS] = 24, [GLLMK_IQ2_S] = 24, \
				[GLLMK_IQ3_XXS] = 20, [GLLMK_IQ3_S] = 16, [GLLMK_IQ1_S] = 20, \
				[GLLMK_IQ1_M] = 28 } },

const struct cpu_cntx avx512vnni_cntx = {
	.isa = "avx512-vnni",
	CNTX_COMMON,
	CNTX_VNNI
};

/* VNNI's, and the bf16 GEMM microkernel (vdpbf16ps) for contexts opened
 * with GLLMK_OPEN_BF16_ACTIVATIONS: CPUs with AVX512_BF16 (every one of
 * them has AVX512_VNNI: Cooper Lake, Sapphire Rapids, Zen 4). */
const struct cpu_cntx avx512bf16_cntx = {
	.isa = "avx512-bf16",
	CNTX_COMMON,
	CNTX_VNNI
	.bf16_ukernel = avx512bf16_gemm_ukernel_14x32,
};
