/* cpu-avx2's kernel tables: the reference kernels, overridden by the AVX2
 * ones (a later designated initialiser wins; -Wno-override-init). Two
 * tables that differ only in the integer dot of the 32-element formats'
 * matmul: vpmaddubsw (any AVX2 CPU) and AVX-VNNI's vpdpbusd; open picks
 * one. The K-quants' (matmul_kquant_avx2.c) are vpmaddubsw in both. The
 * ten formats of ABI 1.1 take the reference integer vec_dots (plugins/cpu/ref,
 * REF_MATMUL_Q8), one line each, until AVX2 kernels replace them. */
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

#define AVX2_KERNELS(dot)                                                                       \
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
		.matmul[GLLMK_Q2_K] = AVX2_MATMUL(Q8_K, avx2, q2_K),                            \
		.matmul[GLLMK_Q3_K] = AVX2_MATMUL(Q8_K, avx2, q3_K),                            \
		.matmul[GLLMK_Q4_K] = AVX2_MATMUL(Q8_K, avx2, q4_K),                            \
		.matmul[GLLMK_Q5_K] = AVX2_MATMUL(Q8_K, avx2, q5_K),                            \
		.matmul[GLLMK_Q6_K] = AVX2_MATMUL(Q8_K, avx2, q6_K),                            \
		.matmul[GLLMK_IQ2_XXS] = REF_MATMUL_Q8(Q8_K, iq2_xxs),                          \
		.matmul[GLLMK_IQ2_XS] = REF_MATMUL_Q8(Q8_K, iq2_xs),                            \
		.matmul[GLLMK_IQ2_S] = REF_MATMUL_Q8(Q8_K, iq2_s),                              \
		.matmul[GLLMK_IQ3_XXS] = REF_MATMUL_Q8(Q8_K, iq3_xxs),                          \
		.matmul[GLLMK_IQ3_S] = REF_MATMUL_Q8(Q8_K, iq3_s),                              \
		.matmul[GLLMK_IQ1_S] = REF_MATMUL_Q8(Q8_K, iq1_s),                              \
		.matmul[GLLMK_IQ1_M] = REF_MATMUL_Q8(Q8_K, iq1_m),                              \
		.matmul[GLLMK_TQ1_0] = REF_MATMUL_Q8(Q8_K, tq1_0),                              \
		.matmul[GLLMK_TQ2_0] = REF_MATMUL_Q8(Q8_K, tq2_0),                              \
		.matmul[GLLMK_MXFP4] = REF_MATMUL_Q8(Q8_0, mxfp4),                              \
		.mr = AVX2_SGEMM_MR,                                                            \
		.nr = AVX2_SGEMM_NR,                                                            \
		.sgemm_ukernel = avx2_sgemm_ukernel,                                            \
	}

const struct cpu_kernels avx2_kernels = AVX2_KERNELS(avx2);
const struct cpu_kernels avx2_vnni_kernels = AVX2_KERNELS(avx2vnni);
