/* cpu-neon's kernel tables: the reference kernels, overridden by the
 * AdvSIMD ones (a later designated initialiser wins; -Wno-override-init).
 * Two tables that differ only in the integer dot of the quantized matmul:
 * plain AdvSIMD (any AArch64 CPU) and the dot-product extension's sdot;
 * open picks one by HWCAP. */
#include "cpu_kernels.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"
#include "neon_kernels.h"
#include "dot_float_simd.h"
#include "rows_simd.h"
#include "attn_simd.h"

#define NEON_KERNELS(dot)                                                                       \
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
		.matmul[GLLMK_Q8_0] = { .vec_dtype = GLLMK_Q8_0, .vec_dot = dot##_vec_dot_q8_0 }, \
		.matmul[GLLMK_Q4_0] = { .vec_dtype = GLLMK_Q8_0, .vec_dot = dot##_vec_dot_q4_0 }, \
		.matmul[GLLMK_Q4_K] = { .vec_dtype = GLLMK_Q8_K, .vec_dot = dot##_vec_dot_q4_K }, \
		.matmul[GLLMK_Q6_K] = { .vec_dtype = GLLMK_Q8_K, .vec_dot = dot##_vec_dot_q6_K }, \
		.mr = NEON_SGEMM_MR,                                                            \
		.nr = NEON_SGEMM_NR,                                                            \
		.sgemm_ukernel = neon_sgemm_ukernel,                                            \
	}

const struct cpu_kernels neon_kernels = NEON_KERNELS(neon);
const struct cpu_kernels neon_dotprod_kernels = NEON_KERNELS(neondot);
