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

/* matmul_half_avx2.c: f16 and bf16 weight rows against f32 activations,
 * products and sums in f32 (x is never rounded to 16 bits). */
float avx2_vec_dot_f16(int64_t n, const void *w, const void *x);
float avx2_vec_dot_bf16(int64_t n, const void *w, const void *x);

/* matmul_quant_avx2.c, per integer-dot flavour: weight rows of q8_0 and
 * q4_0 against q8_0 activations, q4_K and q6_K against q8_K. */
#define AVX2_DECLARE_VEC_DOTS(isa)                                          \
	float isa##_vec_dot_q8_0(int64_t n, const void *w, const void *xq); \
	float isa##_vec_dot_q4_0(int64_t n, const void *w, const void *xq); \
	float isa##_vec_dot_q4_K(int64_t n, const void *w, const void *xq); \
	float isa##_vec_dot_q6_K(int64_t n, const void *w, const void *xq);
AVX2_DECLARE_VEC_DOTS(avx2)
AVX2_DECLARE_VEC_DOTS(avx2vnni)

#endif
