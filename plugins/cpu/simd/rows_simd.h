/* The row kernels of rows_simd.c, one set per ISA it is compiled for:
 * avx2_* (AVX2 + FMA + F16C), avx512_* (AVX-512 F/BW/VL/DQ on top),
 * neon_* (AArch64 AdvSIMD), declared here; each is defined under its
 * three names (SIMD_NAME) and named in each plugin's context table
 * (cntx_<isa>.c). Contracts: cpu_cntx.h.
 */
#ifndef GLLMK_SIMD_ROWS_H
#define GLLMK_SIMD_ROWS_H

#include <stdint.h>

#include "gllmk.h"

/* The kernels that write a row of y, each as <isa>_<slot> (ordinary
 * stores) and <isa>_<slot>_nt (streaming stores, struct cpu_cntx' nt):
 * X(isa, slot, parameters). */
#define SIMD_ROW_WRITERS(X, isa)                                                                        \
	X(isa, add_row, (float *y, const float *a, const float *b, int64_t n))                         \
	X(isa, mul_row, (float *y, const float *a, const float *b, int64_t n))                         \
	X(isa, swiglu_row, (float *y, const float *gate, const float *up, int64_t n))                  \
	X(isa, scale_row, (float *y, const float *x, float s, int64_t n))                              \
	X(isa, silu_row, (float *y, const float *x, int64_t n))                                        \
	X(isa, gelu_tanh_row, (float *y, const float *x, int64_t n))                                   \
	X(isa, gelu_erf_row, (float *y, const float *x, int64_t n))                                    \
	X(isa, relu_row, (float *y, const float *x, int64_t n))                                        \
	X(isa, tanh_row, (float *y, const float *x, int64_t n))                                        \
	X(isa, exp_row, (float *y, const float *x, int64_t n))                                         \
	X(isa, sigmoid_row, (float *y, const float *x, int64_t n))                                     \
	X(isa, clamp_row, (float *y, const float *x, float lo, float hi, int64_t n))                   \
	X(isa, softcap_row, (float *y, const float *x, float c, float inv_c, int64_t n))               \
	X(isa, geglu_row, (float *y, const float *gate, const float *up, int64_t n))                   \
	X(isa, geglu_erf_row, (float *y, const float *gate, const float *up, int64_t n))               \
	X(isa, reglu_row, (float *y, const float *gate, const float *up, int64_t n))                   \
	X(isa, swiglu_oai_row, (float *y, const float *gate, const float *up, float alpha, float limit, \
				int64_t n))                                                             \
	X(isa, rms_norm_row, (float *y, const float *x, const float *w, int64_t n, float eps))         \
	X(isa, layer_norm_row, (float *y, const float *x, const float *w, const float *b, int64_t n,   \
				float eps))                                                             \
	X(isa, softmax_write_row, (float *y, const float *x, const float *mask, float scale, float max, \
				   float inv_sum, int64_t n))                                           \
	X(isa, rope_row, (float *y, const float *x, const float *cs, const float *sn, int64_t n_rot,   \
			  int neox))

#define SIMD_DECLARE_WRITER(isa, slot, params) void isa##_##slot params; void isa##_##slot##_nt params;

#define SIMD_ROWS_DECLARE(isa)                                                                   \
	SIMD_ROW_WRITERS(SIMD_DECLARE_WRITER, isa)                                               \
	float isa##_dot_f32(int64_t n, const float *a, const float *b);                         \
	float isa##_softmax_max_row(const float *x, const float *mask, float scale, int64_t n);  \
	double isa##_softmax_exp_row(float *y, const float *x, const float *mask, float scale,  \
				     float max, int64_t n);                                     \
	double isa##_softmax_sum_row(const float *x, const float *mask, float scale, int64_t n, \
				     float *max);                                               \
	void isa##_dequant_row_f16(const void *src, float *dst, int64_t n);                     \
	void isa##_quant_row_f16(const float *src, void *dst, int64_t n);                       \
	void isa##_dequant_row_bf16(const void *src, float *dst, int64_t n);                    \
	void isa##_quant_row_bf16(const float *src, void *dst, int64_t n);

SIMD_ROWS_DECLARE(avx2)
SIMD_ROWS_DECLARE(avx512)
SIMD_ROWS_DECLARE(neon)

#endif
