/* cpu-avx512's own kernels (contracts: plugins/cpu/cpu_kernels.h). The
 * integer dots exist twice, from one source (matmul_quant_avx512.c): avx512_*
 * with vpmaddubsw + vpmaddwd (any AVX-512 BW CPU) and avx512vnni_* with
 * vpdpbusd; open picks the table. */
#ifndef GLLMK_AVX512_KERNELS_H
#define GLLMK_AVX512_KERNELS_H

#include <stdint.h>

/* sgemm_avx512.c: a 14×32 register block (28 zmm accumulators). */
#define AVX512_SGEMM_MR 14
#define AVX512_SGEMM_NR 32
void avx512_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta);

/* quant_avx512.c: activation encoders, bit for bit the reference ones, and
 * weight decoders. */
void avx512_quant_row_q8_0(const float *x, void *dst, int64_t n);
void avx512_quant_row_q8_K(const float *x, void *dst, int64_t n);
void avx512_dequant_row_q4_0(const void *src, float *y, int64_t n);
void avx512_dequant_row_q8_0(const void *src, float *y, int64_t n);
void avx512_dequant_row_q4_K(const void *src, float *y, int64_t n);
void avx512_dequant_row_q6_K(const void *src, float *y, int64_t n);

/* Weight rows per vec_dot_rows call (the tables' dot_rows) of the block
 * formats and of the float ones, whose vec_dot_tile also takes
 * AVX512_FLOAT_X_ROWS activation rows (x_rows). */
#define AVX512_DOT_ROWS 4
#define AVX512_FLOAT_ROWS 4
#define AVX512_FLOAT_X_ROWS 4

/* matmul_half_avx512.c: float weights against f32 activations. */
#define AVX512_DECLARE_FLOAT_DOTS(t)                                                    \
	float avx512_vec_dot_##t(int64_t n, const void *w, const void *x);              \
	void avx512_vec_dot_rows_##t(int64_t n, const void *w, int64_t w_stride, const void *x, float *out); \
	void avx512_vec_dot_tile_##t(int64_t n, const void *w, int64_t w_stride, const void *x, int64_t x_stride, \
				     float *out);
AVX512_DECLARE_FLOAT_DOTS(f32)
AVX512_DECLARE_FLOAT_DOTS(f16)
AVX512_DECLARE_FLOAT_DOTS(bf16)

/* matmul_quant_avx512.c: block weights against q8_0 / q8_K activations. */
#define AVX512_DECLARE_DOT(isa, t)                                                      \
	float isa##_vec_dot_##t(int64_t n, const void *w, const void *xq);              \
	void isa##_vec_dot_rows_##t(int64_t n, const void *w, int64_t w_stride, const void *xq, float *out);
#define AVX512_DECLARE_DOTS(isa)                                                        \
	AVX512_DECLARE_DOT(isa, q8_0) AVX512_DECLARE_DOT(isa, q4_0)                     \
	AVX512_DECLARE_DOT(isa, q4_K) AVX512_DECLARE_DOT(isa, q6_K)
AVX512_DECLARE_DOTS(avx512)
AVX512_DECLARE_DOTS(avx512vnni)

#endif
