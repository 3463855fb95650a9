/* cpu-avx2's kernels (contracts: cpu_kernels.h). All of them are compiled
 * with -mavx2 -mfma -mf16c; the vec_dot kernels of matmul_quant_avx2.c are
 * compiled twice, as avx2_* (vpmaddubsw, any Haswell-class CPU) and as
 * avx2vnni_* (-mavxvnni: vpdpbusd), and open picks the table by CPUID.
 */
#ifndef GLLMK_CPU_AVX2_KERNELS_H
#define GLLMK_CPU_AVX2_KERNELS_H

#include <stdint.h>

/* sgemm_avx2.c */
#define AVX2_SGEMM_MR 6
#define AVX2_SGEMM_NR 16
void avx2_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
			float beta);

/* quant_avx2.c: the q8_0 and q8_K activation encoders, bit for bit the
 * reference encoders (ref_quant_row_q8_0, ref_quant_row_q8_K). */
void avx2_quant_row_q8_0(const float *src, void *dst, int64_t n);
void avx2_quant_row_q8_K(const float *src, void *dst, int64_t n);

/* dequant_avx2.c: bit for bit the reference decoders. */
void avx2_dequant_row_q8_0(const void *src, float *dst, int64_t n);
void avx2_dequant_row_q4_0(const void *src, float *dst, int64_t n);
void avx2_dequant_row_q4_K(const void *src, float *dst, int64_t n);
void avx2_dequant_row_q6_K(const void *src, float *dst, int64_t n);

/* Weight rows per vec_dot_rows call (the tables' dot_rows) of the block
 * formats and of the float ones, whose vec_dot_tile also takes
 * AVX2_FLOAT_X_ROWS activation rows (x_rows). */
#define AVX2_DOT_ROWS 4
#define AVX2_FLOAT_ROWS 4
#define AVX2_FLOAT_X_ROWS 2

/* matmul_half_avx2.c: f32, f16 and bf16 weight rows against f32
 * activations, products and sums in f32 (x is never rounded to 16 bits). */
#define AVX2_DECLARE_DOT(isa, t)                                                        \
	float isa##_vec_dot_##t(int64_t n, const void *w, const void *x);               \
	void isa##_vec_dot_rows_##t(int64_t n, const void *w, int64_t w_stride, const void *x, float *out);
#define AVX2_DECLARE_FLOAT_DOT(t)                                                       \
	AVX2_DECLARE_DOT(avx2, t)                                                       \
	void avx2_vec_dot_tile_##t(int64_t n, const void *w, int64_t w_stride, const void *x, int64_t x_stride, \
				   float *out);
AVX2_DECLARE_FLOAT_DOT(f32)
AVX2_DECLARE_FLOAT_DOT(f16)
AVX2_DECLARE_FLOAT_DOT(bf16)

/* matmul_quant_avx2.c, per integer-dot flavour: weight rows of q8_0 and
 * q4_0 against q8_0 activations, q4_K and q6_K against q8_K. */
#define AVX2_DECLARE_VEC_DOTS(isa)                                                      \
	AVX2_DECLARE_DOT(isa, q8_0) AVX2_DECLARE_DOT(isa, q4_0)                         \
	AVX2_DECLARE_DOT(isa, q4_K) AVX2_DECLARE_DOT(isa, q6_K)
AVX2_DECLARE_VEC_DOTS(avx2)
AVX2_DECLARE_VEC_DOTS(avx2vnni)

#endif
