/* The float-weight dots of dot_float_simd.c, one set per ISA it is compiled
 * for: avx2_*, avx512_*, neon_* (as rows_simd.h). f32, f16 and bf16 weight
 * rows against f32 activations: vec_dot, vec_dot_rows (DOT_FLOAT_ROWS
 * weight rows a call) and vec_dot_tile (DOT_FLOAT_ROWS weight rows ×
 * DOT_FLOAT_X_ROWS_<isa> activation rows). Contracts: cpu_cntx.h,
 * struct cpu_matmul_kernel.
 *
 * A plugin's context table names them (cntx_avx512.c ...).
 */
#ifndef GLLMK_SIMD_DOT_FLOAT_H
#define GLLMK_SIMD_DOT_FLOAT_H

#include <stdint.h>

#include "cpu_cntx.h"

/* The register block of vec_dot_tile: 4 weight rows against 4 activation
 * rows in 32 zmm (16 accumulators), against 3 in 16 ymm (12 accumulators,
 * 3 x vectors, 1 weight vector: the 4 × 2 block ran f16, bf16 and f32 at
 * M = 4-64 1.11-1.28x slower on Zen 3, BENCHMARKS.md "Session 16"), 2 in
 * NEON's 32 q registers (8 accumulators, with the one-x-row path's second
 * set 16). */
#define DOT_FLOAT_ROWS 4
#define DOT_FLOAT_X_ROWS_avx2 3
#define DOT_FLOAT_X_ROWS_avx512 4
#define DOT_FLOAT_X_ROWS_neon 2

cpu_vec_dot_fn avx2_vec_dot_f32, avx512_vec_dot_f32, neon_vec_dot_f32;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_f32, avx512_vec_dot_rows_f32, neon_vec_dot_rows_f32;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_f32, avx512_vec_dot_tile_f32, neon_vec_dot_tile_f32;
cpu_vec_dot_fn avx2_vec_dot_f16, avx512_vec_dot_f16, neon_vec_dot_f16;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_f16, avx512_vec_dot_rows_f16, neon_vec_dot_rows_f16;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_f16, avx512_vec_dot_tile_f16, neon_vec_dot_tile_f16;
cpu_vec_dot_fn avx2_vec_dot_bf16, avx512_vec_dot_bf16, neon_vec_dot_bf16;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_bf16, avx512_vec_dot_rows_bf16, neon_vec_dot_rows_bf16;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_bf16, avx512_vec_dot_tile_bf16, neon_vec_dot_tile_bf16;

#endif
