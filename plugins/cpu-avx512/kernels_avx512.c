/* cpu-avx512's kernel tables: the reference kernels as defaults, x86rows'
 * AVX-512 row kernels over them, then this plugin's own. Two tables that
 * differ only in the integer dots: avx512_vnni_kernels (vpdpbusd) for CPUs
 * with AVX512_VNNI, avx512_kernels (vpmaddubsw) for the others, Skylake-X.
 * Data only: this file is built without ISA flags.
 */
#include "cpu_kernels.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "avx512_kernels.h"
#include "dot_rows.h"
#ifdef HAVE_X86_ROWS
#include "rows_simd.h"
#include "attn_simd.h"
#include "dot_float_simd.h"
#define ROWS_X86 AVX512_ROW_KERNELS, AVX512_ATTN_KERNELS, DOT_FLOAT_MATMULS(avx512),
#else
#define ROWS_X86
#endif

/* The 32-element formats pair with q8_0 activations, the 256-element ones
 * with q8_K, AVX512_DOT_ROWS weight rows a call; f32, f16 and bf16 keep x
 * in f32 (dot_float_simd.c, in ROWS_X86; f32 weights: the vec_dot path at
 * small M, the GEMM at large M). */
#define AVX512_MATMUL(vdt, isa, t) DOT_ROWS_MATMUL(vdt, isa, t, AVX512_DOT_ROWS)
#define AVX512_KQ_MATMUL(isa, t) DOT_ROWS_MATMUL(Q8_K, isa, t, AVX512_KQ_DOT_ROWS)
/* ... with a vec_dot_tile of AVX512_KQ_X_ROWS activation rows (small M > 1) */
#define AVX512_KQ_TILE_MATMUL(isa, t) DOT_ROWS_TILE_MATMUL(Q8_K, isa, t, AVX512_KQ_DOT_ROWS, AVX512_KQ_X_ROWS)
#define AVX512_TABLE(name, dots, ...)                                                       \
	{                                                                                  \
		.isa = name,                                                               \
		.dequant_row = REF_DEQUANT_ROWS,                                           \
		.quant_row = REF_QUANT_ROWS,                                               \
		.matmul = REF_MATMUL_KERNELS,                                              \
		REF_ROW_KERNELS,                                                           \
		ROWS_X86                                                                   \
		.dequant_row[GLLMK_Q8_0] = avx512_dequant_row_q8_0,                        \
		.dequant_row[GLLMK_Q4_0] = avx512_dequant_row_q4_0,                        \
		.dequant_row[GLLMK_Q4_K] = avx512_dequant_row_q4_K,                        \
		.dequant_row[GLLMK_Q6_K] = avx512_dequant_row_q6_K,                        \
		.quant_row[GLLMK_Q8_0] = avx512_quant_row_q8_0,                            \
		.quant_row[GLLMK_Q8_K] = avx512_quant_row_q8_K,                            \
		.matmul[GLLMK_Q8_0] = AVX512_MATMUL(Q8_0, dots, q8_0),                     \
		.matmul[GLLMK_Q4_0] = DOT_ROWS_MATMUL(Q8_0, dots, q4_0, AVX512_Q4_0_DOT_ROWS), \
		.matmul[GLLMK_Q4_K] = AVX512_KQ_MATMUL(dots, q4_K),                        \
		.matmul[GLLMK_Q6_K] = AVX512_KQ_MATMUL(dots, q6_K),                        \
		.matmul[GLLMK_Q4_1] = AVX512_MATMUL(Q8_0, dots, q4_1),                     \
		.matmul[GLLMK_Q5_0] = AVX512_MATMUL(Q8_0, dots, q5_0),                     \
		.matmul[GLLMK_Q5_1] = AVX512_MATMUL(Q8_0, dots, q5_1),                     \
		.matmul[GLLMK_IQ4_NL] = AVX512_MATMUL(Q8_0, dots, iq4_nl),                 \
		.matmul[GLLMK_IQ4_XS] = AVX512_MATMUL(Q8_K, dots, iq4_xs),                 \
		.matmul[GLLMK_MXFP4] = AVX512_MATMUL(Q8_0, dots, mxfp4),                   \
		.matmul[GLLMK_Q2_K] = AVX512_KQ_MATMUL(dots, q2_K),                        \
		.matmul[GLLMK_Q3_K] = AVX512_KQ_MATMUL(dots, q3_K),                        \
		.matmul[GLLMK_Q5_K] = AVX512_KQ_MATMUL(dots, q5_K),                        \
		.matmul[GLLMK_TQ1_0] = AVX512_KQ_TILE_MATMUL(dots, tq1_0),                 \
		.matmul[GLLMK_TQ2_0] = AVX512_KQ_TILE_MATMUL(dots, tq2_0),                 \
		.matmul[GLLMK_IQ2_XXS] = AVX512_KQ_TILE_MATMUL(dots, iq2_xxs),             \
		.matmul[GLLMK_IQ2_XS] = AVX512_KQ_TILE_MATMUL(dots, iq2_xs),               \
		.matmul[GLLMK_IQ2_S] = AVX512_KQ_TILE_MATMUL(dots, iq2_s),                 \
		.matmul[GLLMK_IQ3_XXS] = AVX512_KQ_TILE_MATMUL(dots, iq3_xxs),             \
		.matmul[GLLMK_IQ3_S] = AVX512_KQ_TILE_MATMUL(dots, iq3_s),                 \
		.matmul[GLLMK_IQ1_S] = AVX512_KQ_TILE_MATMUL(dots, iq1_s),                 \
		.matmul[GLLMK_IQ1_M] = AVX512_KQ_TILE_MATMUL(dots, iq1_m),                 \
		.mr = AVX512_SGEMM_MR,                                                     \
		.nr = AVX512_SGEMM_NR,                                                     \
		.sgemm_ukernel = avx512_sgemm_ukernel,                                     \
		__VA_ARGS__                                                                \
	}

const struct cpu_kernels avx512_kernels = AVX512_TABLE("avx512", avx512, /* no int8 GEMM */);
/* The int8 GEMM (vpdpbusd) only with VNNI. */
#define AVX512_QGEMM                                                                       \
	.qgemm = { .mr = AVX512_QGEMM_MR,                                                  \
		   .ukernel = { { avx512vnni_qgemm_ukernel_sb32, avx512vnni_qgemm_ukernel_sb32_min }, \
				{ avx512vnni_qgemm_ukernel_sb16, avx512vnni_qgemm_ukernel_sb16_min } }, \
		   .pack_b = { [GLLMK_Q4_0] = avx512_qgemm_pack_q4_0,                      \
			       [GLLMK_IQ4_NL] = avx512_qgemm_pack_iq4_nl,                  \
			       [GLLMK_Q8_0] = avx512_qgemm_pack_q8_0,                      \
			       [GLLMK_IQ4_XS] = avx512_qgemm_pack_iq4_xs,                  \
			       [GLLMK_Q4_K] = avx512_qgemm_pack_q4_K,                      \
			       [GLLMK_Q5_K] = avx512_qgemm_pack_q5_K,                      \
			       [GLLMK_Q6_K] = avx512_qgemm_pack_q6_K,                      \
			       [GLLMK_Q3_K] = avx512_qgemm_pack_q3_K,                      \
			       [GLLMK_Q2_K] = avx512_qgemm_pack_q2_K } },
const struct cpu_kernels avx512_vnni_kernels = AVX512_TABLE("avx512-vnni", avx512vnni, AVX512_QGEMM);
