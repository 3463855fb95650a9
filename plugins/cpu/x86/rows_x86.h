/* The x86 row kernels (rows_x86.c, compiled once per ISA): avx2_* with
 * AVX2 + FMA + F16C, avx512_* with AVX-512 F/BW/VL/DQ on top. Contracts:
 * cpu_kernels.h.
 *
 * Use in a plugin's kernel table, after its .dequant_row and .quant_row
 * (the macros override their f16 and bf16 entries) and after
 * REF_ROW_KERNELS:
 *   REF_ROW_KERNELS,
 *   AVX512_ROW_KERNELS,
 * and build that file with -Wno-override-init.
 */
#ifndef GLLMK_X86_ROWS_H
#define GLLMK_X86_ROWS_H

#include <stdint.h>

#include "gllmk.h"

/* X(name) for every row kernel; each ISA declares <isa>_<name> with the
 * signature of the slot of the same name. */
#define X86_ROWS_DECLARE(isa)                                                                   \
	void isa##_add_row(float *y, const float *a, const float *b, int64_t n);                \
	void isa##_mul_row(float *y, const float *a, const float *b, int64_t n);                \
	void isa##_scale_row(float *y, const float *x, float s, int64_t n);                     \
	void isa##_silu_row(float *y, const float *x, int64_t n);                               \
	void isa##_gelu_tanh_row(float *y, const float *x, int64_t n);                          \
	void isa##_gelu_erf_row(float *y, const float *x, int64_t n);                           \
	void isa##_relu_row(float *y, const float *x, int64_t n);                               \
	void isa##_tanh_row(float *y, const float *x, int64_t n);                               \
	void isa##_exp_row(float *y, const float *x, int64_t n);                                \
	void isa##_swiglu_row(float *y, const float *gate, const float *up, int64_t n);         \
	void isa##_rms_norm_row(float *y, const float *x, const float *w, int64_t n, float eps); \
	void isa##_layer_norm_row(float *y, const float *x, const float *w, const float *b,     \
				  int64_t n, float eps);                                        \
	float isa##_dot_f32(int64_t n, const float *a, const float *b);                         \
	float isa##_softmax_max_row(const float *x, const float *mask, float scale, int64_t n);  \
	double isa##_softmax_exp_row(float *y, const float *x, const float *mask, float scale,  \
				     float max, int64_t n);                                     \
	void isa##_rope_row(float *y, const float *x, const float *cs, const float *sn,         \
			    int64_t n_rot, int neox);                                           \
	void isa##_dequant_row_f16(const void *src, float *dst, int64_t n);                     \
	void isa##_quant_row_f16(const float *src, void *dst, int64_t n);                       \
	void isa##_dequant_row_bf16(const void *src, float *dst, int64_t n);                    \
	void isa##_quant_row_bf16(const float *src, void *dst, int64_t n);

X86_ROWS_DECLARE(avx2)
X86_ROWS_DECLARE(avx512)

/* Designated initialisers for struct cpu_kernels: every row slot, and the
 * f16/bf16 entries of the row codecs (convert, get_rows, f16 matmul). */
#define X86_ROW_KERNELS(isa)                                    \
	.add_row = isa##_add_row,                               \
	.mul_row = isa##_mul_row,                               \
	.scale_row = isa##_scale_row,                           \
	.silu_row = isa##_silu_row,                             \
	.gelu_tanh_row = isa##_gelu_tanh_row,                   \
	.gelu_erf_row = isa##_gelu_erf_row,                     \
	.relu_row = isa##_relu_row,                             \
	.tanh_row = isa##_tanh_row,                             \
	.exp_row = isa##_exp_row,                               \
	.swiglu_row = isa##_swiglu_row,                         \
	.rms_norm_row = isa##_rms_norm_row,                     \
	.layer_norm_row = isa##_layer_norm_row,                 \
	.dot_f32 = isa##_dot_f32,                               \
	.softmax_max_row = isa##_softmax_max_row,               \
	.softmax_exp_row = isa##_softmax_exp_row,               \
	.rope_row = isa##_rope_row,                             \
	.dequant_row[GLLMK_F16] = isa##_dequant_row_f16,        \
	.dequant_row[GLLMK_BF16] = isa##_dequant_row_bf16,      \
	.quant_row[GLLMK_F16] = isa##_quant_row_f16,            \
	.quant_row[GLLMK_BF16] = isa##_quant_row_bf16

#define AVX2_ROW_KERNELS X86_ROW_KERNELS(avx2)
#define AVX512_ROW_KERNELS X86_ROW_KERNELS(avx512)

#endif
