/* cpu-avx2's context tables (BLIS's cntx): for each slot of struct
 * cpu_cntx (plugins/cpu/cpu_cntx.h), the kernel this ISA runs, by
 * name. Two tables that differ only in the integer dot of the 32-element
 * formats: avx2_cntx (vpmaddubsw, any AVX2 CPU) and avx2vnni_cntx
 * (AVX-VNNI's vpdpbusd); open (plugin_avx2.c) picks one by CPUID. The
 * K-quants' (matmul_kquant_avx2.c, with the ternary and the i-quants
 * below 4 bits) are vpmaddubsw in both. The int8 GEMM's microkernels
 * differ the same way (qgemm_avx2.c).
 */
#include "cpu_cntx.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "avx2_kernels.h"
#include "dot_float_simd.h"
#include "rows_simd.h"
#include "attn_simd.h"

/* What both tables hold: the reference kernels as defaults, the AVX2 row,
 * attention and float-weight kernels (plugins/cpu/simd, compiled for AVX2)
 * over them, then this plugin's own (a later designated initialiser wins:
 * -Wno-override-init). f32, f16 and bf16 weights keep x in f32 (f32
 * weights: the vec_dot path at small M, the GEMM at large M). The
 * K-quants: { activation dtype, vec_dot, vec_dot_rows, dot_rows
 * [, vec_dot_tile, x_rows] }. */
#define CNTX_COMMON                                                                                  \
	.dequant_row = REF_DEQUANT_ROWS,                                                             \
	.quant_row = REF_QUANT_ROWS,                                                                 \
	.matmul = REF_MATMUL_KERNELS,                                                                \
	REF_ROW_KERNELS,                                                                             \
	.add_row = avx2_add_row, .nt.add_row = avx2_add_row_nt, \
	.mul_row = avx2_mul_row, .nt.mul_row = avx2_mul_row_nt, \
	.swiglu_row = avx2_swiglu_row, .nt.swiglu_row = avx2_swiglu_row_nt, \
	.scale_row = avx2_scale_row, .nt.scale_row = avx2_scale_row_nt, \
	.silu_row = avx2_silu_row, .nt.silu_row = avx2_silu_row_nt, \
	.gelu_tanh_row = avx2_gelu_tanh_row, .nt.gelu_tanh_row = avx2_gelu_tanh_row_nt, \
	.gelu_erf_row = avx2_gelu_erf_row, .nt.gelu_erf_row = avx2_gelu_erf_row_nt, \
	.relu_row = avx2_relu_row, .nt.relu_row = avx2_relu_row_nt, \
	.tanh_row = avx2_tanh_row, .nt.tanh_row = avx2_tanh_row_nt, \
	.exp_row = avx2_exp_row, .nt.exp_row = avx2_exp_row_nt, \
	.sigmoid_row = avx2_sigmoid_row, .nt.sigmoid_row = avx2_sigmoid_row_nt, \
	.clamp_row = avx2_clamp_row, .nt.clamp_row = avx2_clamp_row_nt, \
	.softcap_row = avx2_softcap_row, .nt.softcap_row = avx2_softcap_row_nt, \
	.geglu_row = avx2_geglu_row, .nt.geglu_row = avx2_geglu_row_nt, \
	.geglu_erf_row = avx2_geglu_erf_row, .nt.geglu_erf_row = avx2_geglu_erf_row_nt, \
	.reglu_row = avx2_reglu_row, .nt.reglu_row = avx2_reglu_row_nt, \
	.swiglu_oai_row = avx2_swiglu_oai_row, .nt.swiglu_oai_row = avx2_swiglu_oai_row_nt, \
	.rms_norm_row = avx2_rms_norm_row, .nt.rms_norm_row = avx2_rms_norm_row_nt, \
	.layer_norm_row = avx2_layer_norm_row, .nt.layer_norm_row = avx2_layer_norm_row_nt, \
	.softmax_write_row = avx2_softmax_write_row, .nt.softmax_write_row = avx2_softmax_write_row_nt, \
	.rope_row = avx2_rope_row, .nt.rope_row = avx2_rope_row_nt, \
	.dot_f32 = avx2_dot_f32, \
	.softmax_max_row = avx2_softmax_max_row, \
	.softmax_exp_row = avx2_softmax_exp_row, \
	.softmax_sum_row = avx2_softmax_sum_row, \
	.dequant_row[GLLMK_F16] = avx2_dequant_row_f16, .quant_row[GLLMK_F16] = avx2_quant_row_f16, \
	.dequant_row[GLLMK_BF16] = avx2_dequant_row_bf16, .quant_row[GLLMK_BF16] = avx2_quant_row_bf16, \
	.axpy_f32 = avx2_axpy_f32, .axpy_f16 = avx2_axpy_f16, .dot_f32_f16 = avx2_dot_f32_f16, \
	.attn[GLLMK_F32] = SIMD_ATTN_KERNELS(avx2, f32), \
	.attn[GLLMK_F16] = SIMD_ATTN_KERNELS(avx2, f16), \
	.attn[GLLMK_BF16] = SIMD_ATTN_KERNELS(avx2, bf16), \
	.attn[GLLMK_Q8_0] = SIMD_ATTN_KERNELS(avx2, q8_0), \
	.attn[GLLMK_Q4_0] = SIMD_ATTN_KERNELS(avx2, q4_0), \
	.matmul[GLLMK_F32] = { GLLMK_F32, avx2_vec_dot_f32, avx2_vec_dot_rows_f32, DOT_FLOAT_ROWS,         \
			       avx2_vec_dot_tile_f32, DOT_FLOAT_X_ROWS_avx2 },                         \
	.matmul[GLLMK_F16] = { GLLMK_F32, avx2_vec_dot_f16, avx2_vec_dot_rows_f16, DOT_FLOAT_ROWS,         \
			       avx2_vec_dot_tile_f16, DOT_FLOAT_X_ROWS_avx2 },                         \
	.matmul[GLLMK_BF16] = { GLLMK_F32, avx2_vec_dot_bf16, avx2_vec_dot_rows_bf16, DOT_FLOAT_ROWS,      \
				avx2_vec_dot_tile_bf16, DOT_FLOAT_X_ROWS_avx2 },                       \
	.dequant_row[GLLMK_Q8_0] = avx2_dequant_row_q8_0,                                            \
	.dequant_row[GLLMK_Q4_0] = avx2_dequant_row_q4_0,                                            \
	.dequant_row[GLLMK_Q4_K] = avx2_dequant_row_q4_K,                                            \
	.dequant_row[GLLMK_Q6_K] = avx2_dequant_row_q6_K,                                            \
	.quant_row[GLLMK_Q8_0] = avx2_quant_row_q8_0,                                                \
	.quant_row[GLLMK_Q8_K] = avx2_quant_row_q8_K,                                                \
	.matmul[GLLMK_Q2_K] = { GLLMK_Q8_K, avx2_vec_dot_q2_K, avx2_vec_dot_rows_q2_K, AVX2_DOT_ROWS }, \
	.matmul[GLLMK_Q3_K] = { GLLMK_Q8_K, avx2_vec_dot_q3_K, avx2_vec_dot_rows_q3_K, AVX2_DOT_ROWS }, \
	.matmul[GLLMK_Q4_K] = { GLLMK_Q8_K, avx2_vec_dot_q4_K, avx2_vec_dot_rows_q4_K, AVX2_DOT_ROWS }, \
	.matmul[GLLMK_Q5_K] = { GLLMK_Q8_K, avx2_vec_dot_q5_K, avx2_vec_dot_rows_q5_K, AVX2_DOT_ROWS }, \
	.matmul[GLLMK_Q6_K] = { GLLMK_Q8_K, avx2_vec_dot_q6_K, avx2_vec_dot_rows_q6_K, AVX2_DOT_ROWS }, \
	.matmul[GLLMK_TQ1_0] = { GLLMK_Q8_K, avx2_vec_dot_tq1_0, avx2_vec_dot_rows_tq1_0, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_tq1_0, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_TQ2_0] = { GLLMK_Q8_K, avx2_vec_dot_tq2_0, avx2_vec_dot_rows_tq2_0, AVX2_DOT_ROWS }, \
	.matmul[GLLMK_IQ2_XXS] = { GLLMK_Q8_K, avx2_vec_dot_iq2_xxs, avx2_vec_dot_rows_iq2_xxs, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq2_xxs, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ2_XS] = { GLLMK_Q8_K, avx2_vec_dot_iq2_xs, avx2_vec_dot_rows_iq2_xs, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq2_xs, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ2_S] = { GLLMK_Q8_K, avx2_vec_dot_iq2_s, avx2_vec_dot_rows_iq2_s, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq2_s, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ3_XXS] = { GLLMK_Q8_K, avx2_vec_dot_iq3_xxs, avx2_vec_dot_rows_iq3_xxs, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq3_xxs, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ3_S] = { GLLMK_Q8_K, avx2_vec_dot_iq3_s, avx2_vec_dot_rows_iq3_s, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq3_s, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ1_S] = { GLLMK_Q8_K, avx2_vec_dot_iq1_s, avx2_vec_dot_rows_iq1_s, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq1_s, AVX2_KQ_X_ROWS }, \
	.matmul[GLLMK_IQ1_M] = { GLLMK_Q8_K, avx2_vec_dot_iq1_m, avx2_vec_dot_rows_iq1_m, AVX2_DOT_ROWS, \
				avx2_vec_dot_tile_iq1_m, AVX2_KQ_X_ROWS }, \
	.decode_one_row = 1,                                                                         \
	.mr = AVX2_SGEMM_MR,                                                                         \
	.nr = AVX2_SGEMM_NR,                                                                         \
	.sgemm_ukernel = avx2_sgemm_ukernel,                                                          \
	.sgemm_pack_b = { [GLLMK_F16] = avx2_sgemm_pack_b_f16, [GLLMK_BF16] = avx2_sgemm_pack_b_bf16 }

#define AVX2_QGEMM_NARROW(j)                                                    \
	{ { avx2_qgemm_u8_4x16_sb32_u##j, avx2_qgemm_u8_4x16_sb32_min_u##j }, \
	  { avx2_qgemm_u8_4x16_sb16_u##j, avx2_qgemm_u8_4x16_sb16_min_u##j } }

/* The B packers of the unsigned packing (the framework's for the signed
 * one: q8_0 and the iq4 on the plain table). */
#define AVX2_QGEMM_PACK_ENTRY(t, T, sb, has_min) CPU_QGEMM_PACKER_ENTRY(avx2, t, T)
#define AVX2_QGEMM_PACKERS { CPU_QGEMM_ISA_PACKERS(AVX2_QGEMM_PACK_ENTRY) }
#define AVX2_QGEMM_PACK_ISC_ENTRY(t, T, sb, has_min, j, shift) CPU_QGEMM_ISC_PACKER_ENTRY(avx2, t, T)
#define AVX2_QGEMM_ISC_ENTRY(t, T, sb, has_min, j, shift) [GLLMK_##T] = avx2_qgemm_u8_4x16_isc_##t,
#define AVX2_QGEMM_ISC_SIGNED_ENTRY(t, T, sb) [GLLMK_##T] = avx2_qgemm_s8_4x16_isc_##t,

/* The 32-element formats pair with q8_0 activations (iq4_xs with q8_K). */
const struct cpu_cntx avx2_cntx = {
	.isa = "avx2",
	CNTX_COMMON,
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, avx2_vec_dot_q8_0, avx2_vec_dot_rows_q8_0, AVX2_DOT_ROWS },
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, avx2_vec_dot_q4_0, avx2_vec_dot_rows_q4_0, AVX2_DOT_ROWS },
	.dot_group[CPU_LAYOUT_Q4_0X8] = avx2_dot_q4_0x8,
	.dot_group[CPU_LAYOUT_Q4_KX8] = avx2_dot_q4_Kx8,
	.dot_group[CPU_LAYOUT_Q5_KX8] = avx2_dot_q5_Kx8,
	.dot_group[CPU_LAYOUT_IQ4_XSX8] = avx2_dot_iq4_xsx8,
	.dot_group[CPU_LAYOUT_Q2_KX8] = avx2_dot_q2_Kx8,
	.dot_group[CPU_LAYOUT_Q3_KX8] = avx2_dot_q3_Kx8,
	.matmul[GLLMK_Q4_1] = { GLLMK_Q8_0, avx2_vec_dot_q4_1, avx2_vec_dot_rows_q4_1, AVX2_DOT_ROWS },
	.matmul[GLLMK_Q5_0] = { GLLMK_Q8_0, avx2_vec_dot_q5_0, avx2_vec_dot_rows_q5_0, AVX2_DOT_ROWS },
	.matmul[GLLMK_Q5_1] = { GLLMK_Q8_0, avx2_vec_dot_q5_1, avx2_vec_dot_rows_q5_1, AVX2_DOT_ROWS },
	.matmul[GLLMK_IQ4_NL] = { GLLMK_Q8_0, avx2_vec_dot_iq4_nl, avx2_vec_dot_rows_iq4_nl, AVX2_DOT_ROWS },
	.matmul[GLLMK_IQ4_XS] = { GLLMK_Q8_K, avx2_vec_dot_iq4_xs, avx2_vec_dot_rows_iq4_xs, AVX2_DOT_ROWS },
	.matmul[GLLMK_MXFP4] = { GLLMK_Q8_0, avx2_vec_dot_mxfp4, avx2_vec_dot_rows_mxfp4, AVX2_DOT_ROWS },
	/* The int8 GEMM at large M (plugins/cpu/gemm/qgemm.c): vpmaddubsw on
	 * the signed packing. */
	.qgemm = CPU_QGEMM_KERNELS(AVX2_QGEMM_MR, 1, avx2_qgemm_s8_4x16_sb32, avx2_qgemm_s8_4x16_sb32_min,
				   avx2_qgemm_s8_4x16_sb16, avx2_qgemm_s8_4x16_sb16_min),
	/* ... except the weights whose bytes are small enough to stay
	 * unsigned (all but q8_0 and the iq4): vpmaddubsw without the sign
	 * trick, pairs summed in i16 (qgemm_avx2.c). */
	.qgemm.ukernel_narrow = { AVX2_QGEMM_NARROW(0), AVX2_QGEMM_NARROW(1), AVX2_QGEMM_NARROW(2),
				  AVX2_QGEMM_NARROW(3) },
	/* ... and the K-quants and iq4_xs in the isc mode: their integer
	 * scales in the widening vpmaddwd, one conversion per 256
	 * (qgemm_avx2.c; iq4_xs on the signed packing). */
	.qgemm.ukernel_isc = { CPU_QGEMM_ISC_FORMATS(AVX2_QGEMM_ISC_ENTRY)
				CPU_QGEMM_ISC_SIGNED_FORMATS(AVX2_QGEMM_ISC_SIGNED_ENTRY) },
	.qgemm.pack_b = AVX2_QGEMM_PACKERS,
	.qgemm.pack_b_isc = { CPU_QGEMM_ISC_FORMATS(AVX2_QGEMM_PACK_ISC_ENTRY) },
	/* Where that GEMM overtakes the vec_dot rows (SPEC/CPU.md "Small M"),
	 * measured on Zen 3 running this plugin, 2 threads, the 1B model's
	 * layer (7 matrices), rows and GEMM alternated in one process
	 * (BENCHMARKS.md "Session 16", the K-quants "Session 18", the others
	 * again in "Session 19"): with the SIMD packers (prefetching the next
	 * panel) the GEMM wins from M = 6 for q4_0 and iq4_nl, 7 for iq4_xs,
	 * 9 for q8_0; in the isc mode with its one-pass packers from 9 for q5_K,
	 * 10 for q3_K, 11 for q6_K, 12 for q4_K, 15 for q2_K (whose rows run
	 * at 95 GFLOP/s); the formats the framework's C packer decodes (q4_1,
	 * q5_0, q5_1, mxfp4) from 24-32; the codebook i-quants from 10 (iq2_xxs),
	 * 12 (iq3_s) and at 16 already 1.4x (iq1_m); tq2_0 ties at 32 and
	 * wins at 48. The AVX-VNNI table below keeps the defaults: not
	 * measured. */
	.qgemm.small_m = { [GLLMK_Q4_0] = 5, [GLLMK_Q4_1] = 24, [GLLMK_Q5_0] = 28, [GLLMK_Q5_1] = 28,
			   [GLLMK_Q8_0] = 8, [GLLMK_IQ4_NL] = 5, [GLLMK_IQ4_XS] = 6, [GLLMK_MXFP4] = 24,
			   [GLLMK_Q4_K] = 11, [GLLMK_Q5_K] = 8, [GLLMK_Q2_K] = 14, [GLLMK_Q3_K] = 9,
			   [GLLMK_Q6_K] = 10, [GLLMK_TQ1_0] = 48, [GLLMK_TQ2_0] = 48,
			   [GLLMK_IQ2_XXS] = 9, [GLLMK_IQ2_XS] = 9, [GLLMK_IQ2_S] = 9, [GLLMK_IQ3_XXS] = 11,
			   [GLLMK_IQ3_S] = 11, [GLLMK_IQ1_S] = 15, [GLLMK_IQ1_M] = 15 },
};

/* The same with AVX-VNNI's vpdpbusd. */
const struct cpu_cntx avx2vnni_cntx = {
	.isa = "avx2",
	CNTX_COMMON,
	.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, avx2vnni_vec_dot_q8_0, avx2vnni_vec_dot_rows_q8_0, AVX2_DOT_ROWS },
	.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, avx2vnni_vec_dot_q4_0, avx2vnni_vec_dot_rows_q4_0, AVX2_DOT_ROWS },
	.dot_group[CPU_LAYOUT_Q4_0X8] = avx2vnni_dot_q4_0x8,
	.dot_group[CPU_LAYOUT_Q4_KX8] = avx2vnni_dot_q4_Kx8,
	.dot_group[CPU_LAYOUT_Q5_KX8] = avx2vnni_dot_q5_Kx8,
	.dot_group[CPU_LAYOUT_IQ4_XSX8] = avx2vnni_dot_iq4_xsx8,
	.dot_group[CPU_LAYOUT_Q2_KX8] = avx2vnni_dot_q2_Kx8,
	.dot_group[CPU_LAYOUT_Q3_KX8] = avx2vnni_dot_q3_Kx8,
	.matmul[GLLMK_Q4_1] = { GLLMK_Q8_0, avx2vnni_vec_dot_q4_1, avx2vnni_vec_dot_rows_q4_1, AVX2_DOT_ROWS },
	.matmul[GLLMK_Q5_0] = { GLLMK_Q8_0, avx2vnni_vec_dot_q5_0, avx2vnni_vec_dot_rows_q5_0, AVX2_DOT_ROWS },
	.matmul[GLLMK_Q5_1] = { GLLMK_Q8_0, avx2vnni_vec_dot_q5_1, avx2vnni_vec_dot_rows_q5_1, AVX2_DOT_ROWS },
	.matmul[GLLMK_IQ4_NL] = { GLLMK_Q8_0, avx2vnni_vec_dot_iq4_nl, avx2vnni_vec_dot_rows_iq4_nl, AVX2_DOT_ROWS },
	.matmul[GLLMK_IQ4_XS] = { GLLMK_Q8_K, avx2vnni_vec_dot_iq4_xs, avx2vnni_vec_dot_rows_iq4_xs, AVX2_DOT_ROWS },
	.matmul[GLLMK_MXFP4] = { GLLMK_Q8_0, avx2vnni_vec_dot_mxfp4, avx2vnni_vec_dot_rows_mxfp4, AVX2_DOT_ROWS },
	/* vpdpbusd on the unsigned packing. */
	.qgemm = CPU_QGEMM_KERNELS(AVX2_QGEMM_MR, 0, avxvnni_qgemm_u8_4x16_sb32, avxvnni_qgemm_u8_4x16_sb32_min,
				   avxvnni_qgemm_u8_4x16_sb16, avxvnni_qgemm_u8_4x16_sb16_min),
	.qgemm.pack_b = AVX2_QGEMM_PACKERS,
};
