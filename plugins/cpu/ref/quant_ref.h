/* Portable reference kernels for quantization and matmul: the row codecs of
 * every dtype (decode exactly as ggml does, SPEC/QUANT.md), the reference
 * vec_dot kernels of the quantized-activation matmul path, and the portable
 * sgemm microkernel. cpu-generic uses them all; the SIMD plugins take what
 * they do not vectorise themselves.
 *
 * Use in a kernel table:
 *   .dequant_row = REF_DEQUANT_ROWS,
 *   .quant_row = REF_QUANT_ROWS,
 *   .matmul = REF_MATMUL_KERNELS,
 *   .mr = REF_SGEMM_MR, .nr = REF_SGEMM_NR, .sgemm_ukernel = ref_sgemm_ukernel,
 */
#ifndef GLLMK_CPU_QUANT_REF_H
#define GLLMK_CPU_QUANT_REF_H

#include <stdint.h>

#include "gllmk.h"

/* Every dtype with a row decoder: X(name, GLLMK_ value, activation dtype of
 * the quantized matmul path). 32-element blocks pair with q8_0 activations,
 * 256-element blocks with q8_K, as in ggml; the float types with f32. */
#define REF_DTYPES(X) REF_DECODED_DOT_DTYPES(X) REF_CODE_DTYPES(X)

/* The formats whose reference vec_dot decodes both rows and sums in double. */
#define REF_DECODED_DOT_DTYPES(X)                    \
	X(f32, GLLMK_F32, GLLMK_F32)                 \
	X(f16, GLLMK_F16, GLLMK_F32)                 \
	X(bf16, GLLMK_BF16, GLLMK_F32)               \
	X(q4_0, GLLMK_Q4_0, GLLMK_Q8_0)              \
	X(q4_1, GLLMK_Q4_1, GLLMK_Q8_0)              \
	X(q5_0, GLLMK_Q5_0, GLLMK_Q8_0)              \
	X(q5_1, GLLMK_Q5_1, GLLMK_Q8_0)              \
	X(q8_0, GLLMK_Q8_0, GLLMK_Q8_0)              \
	X(iq4_nl, GLLMK_IQ4_NL, GLLMK_Q8_0)          \
	X(q2_K, GLLMK_Q2_K, GLLMK_Q8_K)              \
	X(q3_K, GLLMK_Q3_K, GLLMK_Q8_K)              \
	X(q4_K, GLLMK_Q4_K, GLLMK_Q8_K)              \
	X(q5_K, GLLMK_Q5_K, GLLMK_Q8_K)              \
	X(q6_K, GLLMK_Q6_K, GLLMK_Q8_K)              \
	X(q8_K, GLLMK_Q8_K, GLLMK_Q8_K)              \
	X(iq4_xs, GLLMK_IQ4_XS, GLLMK_Q8_K)

/* The codebook and ternary formats of ABI 1.1 (and mxfp4): the reference
 * unpacks a block into int8 codes with small integer multipliers
 * (quant_ref.c, "Codes"); the decoder and an integer vec_dot, ggml's
 * vec_dot_<t>_q8_K / vec_dot_mxfp4_q8_0, are both built on that. */
#define REF_CODE_DTYPES(X)                           \
	X(iq2_xxs, GLLMK_IQ2_XXS, GLLMK_Q8_K)        \
	X(iq2_xs, GLLMK_IQ2_XS, GLLMK_Q8_K)          \
	X(iq2_s, GLLMK_IQ2_S, GLLMK_Q8_K)            \
	X(iq3_xxs, GLLMK_IQ3_XXS, GLLMK_Q8_K)        \
	X(iq3_s, GLLMK_IQ3_S, GLLMK_Q8_K)            \
	X(iq1_s, GLLMK_IQ1_S, GLLMK_Q8_K)            \
	X(iq1_m, GLLMK_IQ1_M, GLLMK_Q8_K)            \
	X(tq1_0, GLLMK_TQ1_0, GLLMK_Q8_K)            \
	X(tq2_0, GLLMK_TQ2_0, GLLMK_Q8_K)            \
	X(mxfp4, GLLMK_MXFP4, GLLMK_Q8_0)

/* The dtypes with a row encoder: X(name, GLLMK_ value). */
#define REF_QUANT_DTYPES(X)      \
	X(f32, GLLMK_F32)        \
	X(f16, GLLMK_F16)        \
	X(bf16, GLLMK_BF16)      \
	X(q4_0, GLLMK_Q4_0)      \
	X(q8_0, GLLMK_Q8_0)      \
	X(q8_K, GLLMK_Q8_K)

/* ref_dequant_row_<t>(src, dst, n): n elements (a multiple of the block)
 * of a row of t decoded to f32, bit for bit as ggml's to_float. */
#define REF_DECLARE_DEQUANT(name, dt, vdt) void ref_dequant_row_##name(const void *src, float *dst, int64_t n);
REF_DTYPES(REF_DECLARE_DEQUANT)
#undef REF_DECLARE_DEQUANT

/* ref_quant_row_<t>(src, dst, n): f32 to t; q4_0, q8_0 and q8_K are ggml's
 * reference encoders (quantize_row_q4_0_ref, quantize_row_q8_0_ref,
 * quantize_row_q8_K_ref). q4_0 serves kv_store's caches. */
#define REF_DECLARE_QUANT(name, dt) void ref_quant_row_##name(const float *src, void *dst, int64_t n);
REF_QUANT_DTYPES(REF_DECLARE_QUANT)
#undef REF_DECLARE_QUANT

/* ref_vec_dot_<t>(n, w, xq): a weight row of t against an activation row
 * already encoded in t's activation dtype (REF_DTYPES' third column). The
 * reference of the quantized-activation path: both sides decoded a block
 * at a time, products summed in double; for REF_CODE_DTYPES ggml's integer
 * sums (int8 codes × int8 activations per 16, times the block's integer
 * multipliers), one float product per block, summed in f32. */
#define REF_DECLARE_VEC_DOT(name, dt, vdt) float ref_vec_dot_##name(int64_t n, const void *w, const void *xq);
REF_DTYPES(REF_DECLARE_VEC_DOT)
#undef REF_DECLARE_VEC_DOT

/* ref_vec_dot_rows_<t> and ref_vec_dot_tile_<t> for REF_CODE_DTYPES
 * (cpu_cntx.h's vec_dot_rows and vec_dot_tile): REF_DOT_ROWS weight rows
 * a call, against one or REF_DOT_X_ROWS activation rows, each weight block
 * unpacked once for all of them (small M > 1: a prompt's few rows). */
#define REF_DOT_ROWS 4
#define REF_DOT_X_ROWS 4
#define REF_DECLARE_DOT_TILES(name, dt, vdt)                                                         \
	void ref_vec_dot_rows_##name(int64_t n, const void *w, int64_t w_stride, const void *xq, float *out); \
	void ref_vec_dot_tile_##name(int64_t n, const void *w, int64_t w_stride, const void *xq,       \
				     int64_t xq_stride, float *out);
REF_CODE_DTYPES(REF_DECLARE_DOT_TILES)
#undef REF_DECLARE_DOT_TILES

/* The portable sgemm microkernel: a 6×8 register block that gcc vectorises
 * for any target (12 accumulators of 4 lanes: fits 16 SSE or NEON registers). */
#define REF_SGEMM_MR 6
#define REF_SGEMM_NR 8
void ref_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta);

/* ---------------------------------------------------- kernel-table rows */

#define REF_DEQUANT_ENTRY(name, dt, vdt) [dt] = ref_dequant_row_##name,
#define REF_DEQUANT_ROWS { REF_DTYPES(REF_DEQUANT_ENTRY) }

#define REF_QUANT_ENTRY(name, dt) [dt] = ref_quant_row_##name,
#define REF_QUANT_ROWS { REF_QUANT_DTYPES(REF_QUANT_ENTRY) }

/* cpu-generic's matmul: no vec_dot, so the framework decodes weights to f32
 * and keeps activations in f32 (closest to the float64 product). */
#define REF_MATMUL_F32_ENTRY(name, dt, vdt) [dt] = { .vec_dtype = GLLMK_F32, .vec_dot = NULL },
#define REF_MATMUL_KERNELS { REF_DTYPES(REF_MATMUL_F32_ENTRY) }

/* ggml's scheme: activations encoded to q8_0/q8_K (f32 for float weights)
 * and each output one vec_dot. The reference of what the SIMD plugins do
 * with integer dot products; the framework's vec_dot path is tested with it. */
#define REF_MATMUL_Q8_ENTRY(name, dt, vdt) [dt] = { .vec_dtype = vdt, .vec_dot = ref_vec_dot_##name },
#define REF_MATMUL_KERNELS_Q8 { REF_DTYPES(REF_MATMUL_Q8_ENTRY) }

/* The quantized path of a REF_CODE_DTYPES format with its multi-row
 * kernels, for a SIMD table's line of its own (a faster kernel replaces
 * that line): .matmul[GLLMK_IQ2_XXS] = REF_MATMUL_Q8(Q8_K, iq2_xxs). */
#define REF_MATMUL_Q8(vdt, name)                                                                    \
	{                                                                                           \
		.vec_dtype = GLLMK_##vdt, .vec_dot = ref_vec_dot_##name,                            \
		.vec_dot_rows = ref_vec_dot_rows_##name, .dot_rows = REF_DOT_ROWS,                  \
		.vec_dot_tile = ref_vec_dot_tile_##name, .x_rows = REF_DOT_X_ROWS,                  \
	}

#endif
