/* cpu-avx2's kernel tables: the reference kernels, overridden by the AVX2
 * ones (a later designated initialiser wins; -Wno-override-init). Two
 * tables that differ only in the integer dot of the 32-element formats'
 * matmul: vpmaddubsw (any AVX2 CPU) and AVX-VNNI's vpdpbusd; open picks
 * one. The K-quants' (matmul_kquant_avx2.c, with the ternary and the
 * i-quants below 4 bits) are vpmaddubsw in both. The int8 GEMM's
 * microkernels differ the same way (qgemm_avx2.c). */
#include "cpu_kernels.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "avx2_kernels.h"
#include "dot_rows.h"
#include "dot_float_simd.h"
#include "rows_simd.h"
#include "attn_simd.h"

/* matmul of block weight dtype t: activations in vdt, AVX2_DOT_ROWS rows a
 * call; the float weights' from dot_float_simd.c (f32 weights: that path at
 * small M, the GEMM at large M). */
#define AVX2_MATMUL(vdt, isa, t) DOT_ROWS_MATMUL(vdt, isa, t, AVX2_DOT_ROWS)
/* ... with a vec_dot_tile of AVX2_KQ_X_ROWS activation rows (small M > 1) */
#define AVX2_KQ_TILE_MATMUL(t) DOT_ROWS_TILE_MATMUL(Q8_K, avx2, t, AVX2_DOT_ROWS, AVX2_KQ_X_ROWS)

/* The int8 GEMM at large M (plugins/cpu/ops_qgemm.c): vpmaddubsw on the
 * signed packing, or AVX-VNNI's vpdpbusd on the unsigned one. */
#define AVX2_QGEMM                                                                              \
	CPU_QGEMM_KERNELS(AVX2_QGEMM_MR, 1, avx2_qgemm_s8_4x16_sb32, avx2_qgemm_s8_4x16_sb32_min,    \
			  avx2_qgemm_s8_4x16_sb16, avx2_qgemm_s8_4x16_sb16_min)
#define AVXVNNI_QGEMM                                                                           \
	CPU_QGEMM_KERNELS(AVX2_QGEMM_MR, 0, avxvnni_qgemm_u8_4x16_sb32, avxvnni_qgemm_u8_4x16_sb32_min, \
			  avxvnni_qgemm_u8_4x16_sb16, avxvnni_qgemm_u8_4x16_sb16_min)

#define AVX2_KERNELS(dot, qgemm_kernels)                                                                       \
	{                                                                                       \
		.isa = "avx2",                                                                  \
		.dequant_row = REF_DEQUANT_ROWS,                                                \
		.quant_row = REF_QUANT_ROWS,                                                    \
		.matmul = REF_MATMUL_KERNELS,                                                   \
		REF_ROW_KERNELS,                                                                \
		AVX2_ROW_KERNELS,                                                               \
		AVX2_ATTN_KERNELS,                                                              \
		.dequant_row[GLLMK_Q8_0] = avx2_dequant_row_q8_0,                               \
		.dequant_row[GLLMK_Q4_0] = avx2_dequant_row_q4_0,                               \
		.dequant_row[GLLMK_Q4_K] = avx2_dequant_row_q4_K,                               \
		.dequant_row[GLLMK_Q6_K] = avx2_dequant_row_q6_K,                               \
		.quant_row[GLLMK_Q8_0] = avx2_quant_row_q8_0,                                   \
		.quant_row[GLLMK_Q8_K] = avx2_quant_row_q8_K,                                   \
		DOT_FLOAT_MATMULS(avx2),                                                        \
		.matmul[GLLMK_Q8_0] = AVX2_MATMUL(Q8_0, dot, q8_0),                             \
		.matmul[GLLMK_Q4_0] = AVX2_MATMUL(Q8_0, dot, q4_0),                             \
		.matmul[GLLMK_Q4_1] = AVX2_MATMUL(Q8_0, dot, q4_1),                             \
		.matmul[GLLMK_Q5_0] = AVX2_MATMUL(Q8_0, dot, q5_0),                             \
		.matmul[GLLMK_Q5_1] = AVX2_MATMUL(Q8_0, dot, q5_1),                             \
		.matmul[GLLMK_IQ4_NL] = AVX2_MATMUL(Q8_0, dot, iq4_nl),                         \
		.matmul[GLLMK_IQ4_XS] = AVX2_MATMUL(Q8_K, dot, iq4_xs),                         \
		.matmul[GLLMK_MXFP4] = AVX2_MATMUL(Q8_0, dot, mxfp4),                           \
		.matmul[GLLMK_Q2_K] = AVX2_MATMUL(Q8_K, avx2, q2_K),                            \
		.matmul[GLLMK_Q3_K] = AVX2_MATMUL(Q8_K, avx2, q3_K),                            \
		.matmul[GLLMK_Q4_K] = AVX2_MATMUL(Q8_K, avx2, q4_K),                            \
		.matmul[GLLMK_Q5_K] = AVX2_MATMUL(Q8_K, avx2, q5_K),                            \
		.matmul[GLLMK_Q6_K] = AVX2_MATMUL(Q8_K, avx2, q6_K),                            \
		.matmul[GLLMK_TQ1_0] = AVX2_KQ_TILE_MATMUL(tq1_0),                              \
		.matmul[GLLMK_TQ2_0] = AVX2_MATMUL(Q8_K, avx2, tq2_0),                          \
		.matmul[GLLMK_IQ2_XXS] = AVX2_KQ_TILE_MATMUL(iq2_xxs),                          \
		.matmul[GLLMK_IQ2_XS] = AVX2_KQ_TILE_MATMUL(iq2_xs),                            \
		.matmul[GLLMK_IQ2_S] = AVX2_KQ_TILE_MATMUL(iq2_s),                              \
		.matmul[GLLMK_IQ3_XXS] = AVX2_KQ_TILE_MATMUL(iq3_xxs),                          \
		.matmul[GLLMK_IQ3_S] = AVX2_KQ_TILE_MATMUL(iq3_s),                              \
		.matmul[GLLMK_IQ1_S] = AVX2_KQ_TILE_MATMUL(iq1_s),                              \
		.matmul[GLLMK_IQ1_M] = AVX2_KQ_TILE_MATMUL(iq1_m),                              \
		.mr = AVX2_SGEMM_MR,                                                            \
		.nr = AVX2_SGEMM_NR,                                                            \
		.sgemm_ukernel = avx2_sgemm_ukernel,                                            \
		.qgemm = qgemm_kernels,                                                         \
	}

const struct cpu_kernels avx2_kernels = AVX2_KERNELS(avx2, AVX2_QGEMM);
const struct cpu_kernels avx2_vnni_kernels = AVX2_KERNELS(avx2vnni, AVXVNNI_QGEMM);
