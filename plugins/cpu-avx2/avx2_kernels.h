/* cpu-avx2's kernels (contracts: cpu_kernels.h). All of them are compiled
 * with -mavx2 -mfma -mf16c; the vec_dot kernels of the 32-element formats
 * are compiled twice, as avx2_* (vpmaddubsw, any Haswell-class CPU) and as
 * avx2vnni_* (-mavxvnni: vpdpbusd), and open picks the table by CPUID.
 */
#ifndef GLLMK_CPU_AVX2_KERNELS_H
#define GLLMK_CPU_AVX2_KERNELS_H

#include <stdint.h>

#include "dot_rows.h"

/* sgemm_avx2.c */
#define AVX2_SGEMM_MR 6
#define AVX2_SGEMM_NR 16
void avx2_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
			float beta);

/* qgemm_avx2.c: the int8 GEMM microkernels (cpu_qgemm_kernels), 4
 * activation rows × 16 weight rows; avx2_* take the signed packing
 * (vpmaddubsw), avxvnni_* the unsigned one (vpdpbusd, built with -mavxvnni). */
#define AVX2_QGEMM_MR 4
#define AVX2_DECLARE_QGEMM(name) \
	void name(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate);
AVX2_DECLARE_QGEMM(avx2_qgemm_s8_4x16_sb32)
AVX2_DECLARE_QGEMM(avx2_qgemm_s8_4x16_sb32_min)
AVX2_DECLARE_QGEMM(avx2_qgemm_s8_4x16_sb16)
AVX2_DECLARE_QGEMM(avx2_qgemm_s8_4x16_sb16_min)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb32)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb32_min)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb16)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb16_min)

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
 * formats; the float ones are plugins/cpu/simd/dot_float_simd.h's. */
#define AVX2_DOT_ROWS 4

/* Block weights against q8_0 / q8_K activations, per integer-dot flavour
 * (avx2_dot.h): matmul_quant_avx2.c and matmul_legacy_avx2.c, built as
 * avx2_* and avx2vnni_*; matmul_kquant_avx2.c, as avx2_* only. */
#define AVX2_DECLARE_VEC_DOTS(isa)                                                      \
	DOT_ENTRIES_DECLARE(isa, q8_0) DOT_ENTRIES_DECLARE(isa, q4_0)                   \
	DOT_ENTRIES_DECLARE(isa, q4_1) DOT_ENTRIES_DECLARE(isa, q5_0)                   \
	DOT_ENTRIES_DECLARE(isa, q5_1) DOT_ENTRIES_DECLARE(isa, iq4_nl)                 \
	DOT_ENTRIES_DECLARE(isa, iq4_xs) DOT_ENTRIES_DECLARE(isa, mxfp4)
AVX2_DECLARE_VEC_DOTS(avx2)
AVX2_DECLARE_VEC_DOTS(avx2vnni)
DOT_ENTRIES_DECLARE(avx2, q2_K) DOT_ENTRIES_DECLARE(avx2, q3_K) DOT_ENTRIES_DECLARE(avx2, q4_K)
DOT_ENTRIES_DECLARE(avx2, q5_K) DOT_ENTRIES_DECLARE(avx2, q6_K)
DOT_ENTRIES_DECLARE(avx2, tq1_0) DOT_ENTRIES_DECLARE(avx2, tq2_0)
DOT_ENTRIES_DECLARE(avx2, iq2_xxs) DOT_ENTRIES_DECLARE(avx2, iq2_xs) DOT_ENTRIES_DECLARE(avx2, iq2_s)
DOT_ENTRIES_DECLARE(avx2, iq3_xxs) DOT_ENTRIES_DECLARE(avx2, iq3_s)
DOT_ENTRIES_DECLARE(avx2, iq1_s) DOT_ENTRIES_DECLARE(avx2, iq1_m)
/* matmul_kquant_avx2.c: vec_dot_tile (AVX2_KQ_X_ROWS activation rows) of
 * the formats whose blocks cost most to decode. */
#define AVX2_KQ_X_ROWS 4
#define AVX2_DECLARE_TILE(t)                                                                    \
	void avx2_vec_dot_tile_##t(int64_t n, const void *w, int64_t w_stride, const void *x, int64_t x_stride, \
				   float *out);
AVX2_DECLARE_TILE(tq1_0) AVX2_DECLARE_TILE(iq2_xxs) AVX2_DECLARE_TILE(iq2_xs)
AVX2_DECLARE_TILE(iq2_s) AVX2_DECLARE_TILE(iq3_xxs) AVX2_DECLARE_TILE(iq3_s) AVX2_DECLARE_TILE(iq1_s)
AVX2_DECLARE_TILE(iq1_m)

#endif
