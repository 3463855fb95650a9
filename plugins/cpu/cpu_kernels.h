/* The ISA-specific part of a CPU plugin: inner loops over one row or one
 * register block. Each CPU plugin fills one `static const struct
 * cpu_kernels` (generic: plugins/cpu-generic/kernels_generic.c) and the
 * framework in plugins/cpu/ calls through it; nothing else differs between
 * CPU plugins. Kernels never validate: the core did, and the framework only
 * hands them whole rows and whole blocks.
 */
#ifndef GLLMK_CPU_KERNELS_H
#define GLLMK_CPU_KERNELS_H

#include <stdint.h>

#include "gllmk.h"

/* Decode n elements (a multiple of the block) of a row of dtype t to f32. */
typedef void (*cpu_dequant_row_fn)(const void *src, float *dst, int64_t n);
/* Encode n f32 elements (a multiple of the block) into a row of dtype t. */
typedef void (*cpu_quant_row_fn)(const float *src, void *dst, int64_t n);
/* Dot product of n elements: one weight row w (its dtype) with one
 * activation row xq already encoded in vec_dtype (see below). */
typedef float (*cpu_vec_dot_fn)(int64_t n, const void *w, const void *xq);

/* Elementwise, over n contiguous f32. y may equal x (in place). */
typedef void (*cpu_unary_row_fn)(float *y, const float *x, int64_t n);
typedef void (*cpu_binary_row_fn)(float *y, const float *a, const float *b, int64_t n);

/* How matmul treats weight dtype t: activation rows are encoded once per call
 * into vec_dtype (F32 = used as is; Q8_0 or Q8_K = quantized, as ggml does)
 * and each output is vec_dot(K, w_row, x_row). A NULL vec_dot means the
 * framework dequantizes weight rows to f32 and uses the f32 path. */
struct cpu_matmul_kernel {
	int32_t vec_dtype;
	cpu_vec_dot_fn vec_dot;
};

/* The f32 GEMM microkernel (BLIS): C[mr×nr] = alpha·Apanel·Bpanel + beta·C
 * where Apanel is k×mr (packed column of mr), Bpanel k×nr (packed row of nr).
 * beta == 0 must not read C. */
typedef void (*cpu_sgemm_ukernel_fn)(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
				     float alpha, float beta);

struct cpu_kernels {
	const char *isa;                /* "generic", "avx2", "avx512", "neon" */

	/* --- quantization and matmul (indexed by gllmk_dtype) --- */
	cpu_dequant_row_fn dequant_row[GLLMK_DTYPE_LIMIT]; /* every dtype but i32 */
	cpu_quant_row_fn quant_row[GLLMK_DTYPE_LIMIT];     /* f32, f16, bf16, q8_0, q8_K */
	struct cpu_matmul_kernel matmul[GLLMK_DTYPE_LIMIT];
	int mr, nr;                     /* register block of sgemm_ukernel */
	cpu_sgemm_ukernel_fn sgemm_ukernel;
	/* Optional (NULL: the framework's baseline loop). y += a·x over n
	 * contiguous elements: gemm with small M (rows of B), attention (V rows). */
	void (*axpy_f32)(float *y, float a, const float *x, int64_t n);
	/* f16 (IEEE half, as uint16_t) variants for attention's f16 K and V rows,
	 * read without decoding them first. dot_f32_f16 may accumulate in f32. */
	float (*dot_f32_f16)(int64_t n, const float *a, const uint16_t *b);
	void (*axpy_f16)(float *y, float a, const uint16_t *x, int64_t n);

	/* --- row kernels for the memory-bound ops --- */
	cpu_binary_row_fn add_row;
	cpu_binary_row_fn mul_row;
	void (*scale_row)(float *y, const float *x, float s, int64_t n);
	cpu_unary_row_fn silu_row;
	cpu_unary_row_fn gelu_tanh_row;
	cpu_unary_row_fn gelu_erf_row;
	cpu_unary_row_fn relu_row;
	cpu_unary_row_fn tanh_row;
	cpu_unary_row_fn exp_row;
	cpu_binary_row_fn swiglu_row;   /* y = silu(a) · b */
	/* w may be NULL (no weight). */
	void (*rms_norm_row)(float *y, const float *x, const float *w, int64_t n, float eps);
	void (*layer_norm_row)(float *y, const float *x, const float *w, const float *b, int64_t n, float eps);
	float (*dot_f32)(int64_t n, const float *a, const float *b);

	/* softmax of one row of n visible entries, z_j = scale·x_j + mask_j
	 * (mask NULL: + 0), in three passes the skeleton composes (ops_softmax.c):
	 * max = softmax_max_row(); sum = softmax_exp_row() writing y = e^(z − max);
	 * scale_row(y, y, 1/sum). Both kernels must form z the same way (so the
	 * largest z − max is exactly 0); −inf entries give 0; scale is finite.
	 * The sum may be accumulated in f32 (tolerance rt(n), SPEC/TOLERANCES.md). */
	float (*softmax_max_row)(const float *x, const float *mask, float scale, int64_t n);
	double (*softmax_exp_row)(float *y, const float *x, const float *mask, float scale, float max,
				  int64_t n);
	/* Rotates the first n_rot elements of a row (y may equal x); the skeleton
	 * copies the rest. neox: pair i is (x[i], x[i + n_rot/2]), cs[i] and sn[i]
	 * its cos and sin (n_rot/2 entries each). normal: pair i is (x[2i],
	 * x[2i+1]) and cs, sn have n_rot entries laid out like the row:
	 * cs = (c0, c0, c1, c1, ...), sn = (−s0, s0, −s1, s1, ...), so that
	 * y = x·cs + swap_pairs(x)·sn. */
	void (*rope_row)(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox);
};

#endif
