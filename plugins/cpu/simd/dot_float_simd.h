/* The float-weight dots of dot_float_simd.c, one set per ISA it is compiled
 * for: avx2_*, avx512_*, neon_* (as rows_simd.h). f32, f16 and bf16 weight
 * rows against f32 activations: vec_dot, vec_dot_rows (DOT_FLOAT_ROWS
 * weight rows a call) and vec_dot_tile (DOT_FLOAT_ROWS weight rows ×
 * DOT_FLOAT_X_ROWS_<isa> activation rows). Contracts: cpu_kernels.h,
 * struct cpu_matmul_kernel.
 *
 * Use in a plugin's kernel table, after .matmul = REF_MATMUL_KERNELS:
 *   DOT_FLOAT_MATMULS(avx512),   (or avx2, neon)
 */
#ifndef GLLMK_SIMD_DOT_FLOAT_H
#define GLLMK_SIMD_DOT_FLOAT_H

#include <stdint.h>

#include "dot_rows.h"

/* The register block of vec_dot_tile: 4 weight rows against 4 activation
 * rows in 32 zmm (16 accumulators), against 2 in 16 ymm or NEON's 32 q
 * registers (8 accumulators, with the one-x-row path's second set 16). */
#define DOT_FLOAT_ROWS 4
#define DOT_FLOAT_X_ROWS_avx2 2
#define DOT_FLOAT_X_ROWS_avx512 4
#define DOT_FLOAT_X_ROWS_neon 2

#define DOT_FLOAT_DECLARE_T(isa, t)                                                                     \
	DOT_ENTRIES_DECLARE(isa, t)                                                                     \
	void isa##_vec_dot_tile_##t(int64_t n, const void *w, int64_t w_stride, const void *x, int64_t x_stride, \
				    float *out);
#define DOT_FLOAT_DECLARE(isa) DOT_FLOAT_DECLARE_T(isa, f32) DOT_FLOAT_DECLARE_T(isa, f16) DOT_FLOAT_DECLARE_T(isa, bf16)

DOT_FLOAT_DECLARE(avx2)
DOT_FLOAT_DECLARE(avx512)
DOT_FLOAT_DECLARE(neon)

#define DOT_FLOAT_MATMUL(isa, t) DOT_TILE_MATMUL(isa, t, DOT_FLOAT_ROWS, DOT_FLOAT_X_ROWS_##isa)

/* Designated initialisers for struct cpu_kernels' float matmul entries. */
#define DOT_FLOAT_MATMULS(isa)                                  \
	.matmul[GLLMK_F32] = DOT_FLOAT_MATMUL(isa, f32),        \
	.matmul[GLLMK_F16] = DOT_FLOAT_MATMUL(isa, f16),        \
	.matmul[GLLMK_BF16] = DOT_FLOAT_MATMUL(isa, bf16)

#endif
