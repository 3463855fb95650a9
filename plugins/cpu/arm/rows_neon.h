/* The AArch64 AdvSIMD row kernels (rows_neon.c), neon_*. Contracts:
 * cpu_kernels.h.
 *
 * Use in a plugin's kernel table, after its .dequant_row and .quant_row
 * (the macro overrides their f16 and bf16 entries) and after
 * REF_ROW_KERNELS:
 *   REF_ROW_KERNELS,
 *   NEON_ROW_KERNELS,
 * and build that file with -Wno-override-init.
 */
#ifndef GLLMK_ARM_ROWS_NEON_H
#define GLLMK_ARM_ROWS_NEON_H

#include <stdint.h>

#include "gllmk.h"

void neon_add_row(float *y, const float *a, const float *b, int64_t n);
void neon_mul_row(float *y, const float *a, const float *b, int64_t n);
void neon_scale_row(float *y, const float *x, float s, int64_t n);
void neon_silu_row(float *y, const float *x, int64_t n);
void neon_gelu_tanh_row(float *y, const float *x, int64_t n);
void neon_gelu_erf_row(float *y, const float *x, int64_t n);
void neon_relu_row(float *y, const float *x, int64_t n);
void neon_tanh_row(float *y, const float *x, int64_t n);
void neon_exp_row(float *y, const float *x, int64_t n);
void neon_swiglu_row(float *y, const float *gate, const float *up, int64_t n);
void neon_rms_norm_row(float *y, const float *x, const float *w, int64_t n, float eps);
void neon_layer_norm_row(float *y, const float *x, const float *w, const float *b, int64_t n, float eps);
float neon_dot_f32(int64_t n, const float *a, const float *b);
float neon_softmax_max_row(const float *x, const float *mask, float scale, int64_t n);
double neon_softmax_exp_row(float *y, const float *x, const float *mask, float scale, float max, int64_t n);
void neon_rope_row(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox);
void neon_axpy_f32(float *y, float a, const float *x, int64_t n);
float neon_dot_f32_f16(int64_t n, const float *a, const uint16_t *b);
void neon_axpy_f16(float *y, float a, const uint16_t *x, int64_t n);
void neon_dequant_row_f16(const void *src, float *dst, int64_t n);
void neon_quant_row_f16(const float *src, void *dst, int64_t n);
void neon_dequant_row_bf16(const void *src, float *dst, int64_t n);
void neon_quant_row_bf16(const float *src, void *dst, int64_t n);

#define NEON_ROW_KERNELS                                        \
	.add_row = neon_add_row,                                \
	.mul_row = neon_mul_row,                                \
	.scale_row = neon_scale_row,                            \
	.silu_row = neon_silu_row,                              \
	.gelu_tanh_row = neon_gelu_tanh_row,                    \
	.gelu_erf_row = neon_gelu_erf_row,                      \
	.relu_row = neon_relu_row,                              \
	.tanh_row = neon_tanh_row,                              \
	.exp_row = neon_exp_row,                                \
	.swiglu_row = neon_swiglu_row,                          \
	.rms_norm_row = neon_rms_norm_row,                      \
	.layer_norm_row = neon_layer_norm_row,                  \
	.dot_f32 = neon_dot_f32,                                \
	.softmax_max_row = neon_softmax_max_row,                \
	.softmax_exp_row = neon_softmax_exp_row,                \
	.rope_row = neon_rope_row,                              \
	.axpy_f32 = neon_axpy_f32,                              \
	.dot_f32_f16 = neon_dot_f32_f16,                        \
	.axpy_f16 = neon_axpy_f16,                              \
	.dequant_row[GLLMK_F16] = neon_dequant_row_f16,         \
	.dequant_row[GLLMK_BF16] = neon_dequant_row_bf16,       \
	.quant_row[GLLMK_F16] = neon_quant_row_f16,             \
	.quant_row[GLLMK_BF16] = neon_quant_row_bf16

#endif
