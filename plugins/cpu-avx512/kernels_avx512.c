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
#ifdef HAVE_X86_ROWS
#include "rows_x86.h"
#include "attn_x86.h"
#define ROWS_X86 AVX512_ROW_KERNELS, AVX512_ATTN_KERNELS,
#else
#define ROWS_X86
#endif

/* The 32-element formats pair with q8_0 activations, the 256-element ones
 * with q8_K; f16 and bf16 keep x in f32. f32 weights have no vec_dot: the
 * framework uses dot_f32 at small M and the GEMM at large M. */
#define AVX512_TABLE(name, dots)                                                            \
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
		.matmul[GLLMK_F16] = { GLLMK_F32, avx512_vec_dot_f16 },                    \
		.matmul[GLLMK_BF16] = { GLLMK_F32, avx512_vec_dot_bf16 },                  \
		.matmul[GLLMK_Q8_0] = { GLLMK_Q8_0, dots##_vec_dot_q8_0 },                 \
		.matmul[GLLMK_Q4_0] = { GLLMK_Q8_0, dots##_vec_dot_q4_0 },                 \
		.matmul[GLLMK_Q4_K] = { GLLMK_Q8_K, dots##_vec_dot_q4_K },                 \
		.matmul[GLLMK_Q6_K] = { GLLMK_Q8_K, dots##_vec_dot_q6_K },                 \
		.mr = AVX512_SGEMM_MR,                                                     \
		.nr = AVX512_SGEMM_NR,                                                     \
		.sgemm_ukernel = avx512_sgemm_ukernel,                                     \
	}

const struct cpu_kernels avx512_kernels = AVX512_TABLE("avx512", avx512);
const struct cpu_kernels avx512_vnni_kernels = AVX512_TABLE("avx512-vnni", avx512vnni);
