/* Portable scalar row kernels: the reference every ISA's row kernels are
 * measured against, and what an ISA's table keeps for the rows it does not
 * override. Sums accumulate in double, so rows of any length stay within
 * float rounding of the exact result. Signatures: cpu_cntx.h. */
#ifndef GLLMK_CPU_ROWS_REF_H
#define GLLMK_CPU_ROWS_REF_H

#include <stdint.h>

void ref_add_row(float *y, const float *a, const float *b, int64_t n);
void ref_mul_row(float *y, const float *a, const float *b, int64_t n);
void ref_scale_row(float *y, const float *x, float s, int64_t n);
void ref_silu_row(float *y, const float *x, int64_t n);
void ref_gelu_tanh_row(float *y, const float *x, int64_t n);
void ref_gelu_erf_row(float *y, const float *x, int64_t n);
void ref_relu_row(float *y, const float *x, int64_t n);
void ref_tanh_row(float *y, const float *x, int64_t n);
void ref_exp_row(float *y, const float *x, int64_t n);
void ref_swiglu_row(float *y, const float *gate, const float *up, int64_t n);
void ref_sigmoid_row(float *y, const float *x, int64_t n);
void ref_clamp_row(float *y, const float *x, float lo, float hi, int64_t n);
void ref_softcap_row(float *y, const float *x, float c, float inv_c, int64_t n);
void ref_geglu_row(float *y, const float *gate, const float *up, int64_t n);
void ref_geglu_erf_row(float *y, const float *gate, const float *up, int64_t n);
void ref_reglu_row(float *y, const float *gate, const float *up, int64_t n);
void ref_swiglu_oai_row(float *y, const float *gate, const float *up, float alpha, float limit, int64_t n);
void ref_rms_norm_row(float *y, const float *x, const float *w, int64_t n, float eps);
void ref_layer_norm_row(float *y, const float *x, const float *w, const float *b, int64_t n, float eps);
float ref_dot_f32(int64_t n, const float *a, const float *b);
float ref_softmax_max_row(const float *x, const float *mask, float scale, int64_t n);
double ref_softmax_exp_row(float *y, const float *x, const float *mask, float scale, float max, int64_t n);
double ref_softmax_sum_row(const float *x, const float *mask, float scale, int64_t n, float *max);
void ref_softmax_write_row(float *y, const float *x, const float *mask, float scale, float max, float inv_sum,
			   int64_t n);
void ref_rope_row(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox);

/* The row slots of struct cpu_cntx, all references (their nt twins
 * stay NULL: the framework then uses these). An ISA's table lists
 * REF_ROW_KERNELS first and then its own kernels for the slots it speeds up
 * (a later designated initialiser wins; build that file with
 * -Wno-override-init, which -Wextra would otherwise flag). */
#define REF_ROW_KERNELS                                 \
	.add_row = ref_add_row,                         \
	.mul_row = ref_mul_row,                         \
	.scale_row = ref_scale_row,                     \
	.silu_row = ref_silu_row,                       \
	.gelu_tanh_row = ref_gelu_tanh_row,             \
	.gelu_erf_row = ref_gelu_erf_row,               \
	.relu_row = ref_relu_row,                       \
	.tanh_row = ref_tanh_row,                       \
	.exp_row = ref_exp_row,                         \
	.swiglu_row = ref_swiglu_row,                   \
	.sigmoid_row = ref_sigmoid_row,                 \
	.clamp_row = ref_clamp_row,                     \
	.softcap_row = ref_softcap_row,                 \
	.geglu_row = ref_geglu_row,                     \
	.geglu_erf_row = ref_geglu_erf_row,             \
	.reglu_row = ref_reglu_row,                     \
	.swiglu_oai_row = ref_swiglu_oai_row,           \
	.rms_norm_row = ref_rms_norm_row,               \
	.layer_norm_row = ref_layer_norm_row,           \
	.dot_f32 = ref_dot_f32,                         \
	.softmax_max_row = ref_softmax_max_row,         \
	.softmax_exp_row = ref_softmax_exp_row,         \
	.softmax_sum_row = ref_softmax_sum_row,         \
	.softmax_write_row = ref_softmax_write_row,     \
	.rope_row = ref_rope_row

#endif
