/* cpu-avx512's own kernels (contracts: plugins/cpu/cpu_cntx.h). The
 * integer dots exist twice, from one source (matmul_*_avx512.c): avx512_*
 * with vpmaddubsw + vpmaddwd (any AVX-512 BW CPU) and avx512vnni_* with
 * vpdpbusd; open picks the table. */
#ifndef GLLMK_AVX512_KERNELS_H
#define GLLMK_AVX512_KERNELS_H

#include <stdint.h>

#include "cpu_cntx.h"
#include "gemm/qgemm_pack_isa.h"

/* sgemm_avx512.c: a 14×32 register block (28 zmm accumulators). */
#define AVX512_SGEMM_MR 14
#define AVX512_SGEMM_NR 32
void avx512_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta);
/* The same register block on bf16 pairs (vdpbf16ps, AVX512_BF16 only):
 * cpu_cntx.bf16_ukernel. */
void avx512bf16_gemm_ukernel_14x32(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
				   float beta);

/* quant_avx512.c: activation encoders, bit for bit the reference ones, and
 * weight decoders. */
void avx512_quant_row_q8_0(const float *x, void *dst, int64_t n);
void avx512_quant_row_q8_K(const float *x, void *dst, int64_t n);
void avx512_dequant_row_q4_0(const void *src, float *y, int64_t n);
void avx512_dequant_row_q8_0(const void *src, float *y, int64_t n);
void avx512_dequant_row_q4_K(const void *src, float *y, int64_t n);
void avx512_dequant_row_q6_K(const void *src, float *y, int64_t n);

/* qgemm_avx512.c (AVX512-VNNI only): the int8 GEMM microkernel, an
 * 8 × 16 register block per sub-block size (32, 16) and offset kind, with
 * x as q8_0 and (_xs256) as q8_K for the 256-element weight blocks. */
#define AVX512_QGEMM_MR 8
void avx512vnni_qgemm_ukernel_sb32(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate);
void avx512vnni_qgemm_ukernel_sb32_min(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
				       int accumulate);
void avx512vnni_qgemm_ukernel_sb16(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate);
void avx512vnni_qgemm_ukernel_sb16_min(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
				       int accumulate);
void avx512vnni_qgemm_ukernel_sb32_xs256(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
					 int accumulate);
void avx512vnni_qgemm_ukernel_sb32_min_xs256(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
					     int accumulate);
void avx512vnni_qgemm_ukernel_sb16_xs256(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
					 int accumulate);
void avx512vnni_qgemm_ukernel_sb16_min_xs256(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
					     int accumulate);

/* qgemm_pack_avx512.c: the int8 GEMM's B packers (cpu_qgemm_pack_fn),
 * avx512_qgemm_pack_<dtype> for each dtype of CPU_QGEMM_ISA_PACKERS
 * (gemm/qgemm_pack_isa.h), the same bytes as the framework's cpu_qgemm_pack_b. */
#define AVX512_DECLARE_QGEMM_PACK(t, T, sb, has_min) CPU_QGEMM_PACKER_PROTO(avx512, t);
CPU_QGEMM_ISA_PACKERS(AVX512_DECLARE_QGEMM_PACK)

/* Weight rows per vec_dot_rows call (the tables' dot_rows) of the block
 * formats; the float ones are plugins/cpu/simd/dot_float_simd.h's. */
#define AVX512_DOT_ROWS 4
/* q4_0's (matmul_quant_avx512.c): its activation's gathers and sums are
 * shared by more rows (+6 % in L2 at 8 rows; q8_0 lost 18 % at 8). */
#define AVX512_Q4_0_DOT_ROWS 8
/* The K-quants' (matmul_kquant_avx512.c): a row's block is a long run of
 * work, so more rows a call mean more memory streams in flight. */
#define AVX512_KQ_DOT_ROWS 8

/* Block weights against q8_0 / q8_K activations, each as avx512_* and
 * avx512vnni_*: matmul_quant_avx512.c (q8_0, q4_0), matmul_legacy_avx512.c
 * (q4_1 .. iq4_xs), matmul_kquant_avx512.c (the K-quants, ternary and
 * i-quants, with a vec_dot_tile of AVX512_KQ_X_ROWS activation rows for
 * the formats whose blocks cost most to decode). */
#define AVX512_KQ_X_ROWS 4
cpu_vec_dot_fn avx512_vec_dot_q8_0, avx512vnni_vec_dot_q8_0;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q8_0, avx512vnni_vec_dot_rows_q8_0;
cpu_vec_dot_fn avx512_vec_dot_q4_0, avx512vnni_vec_dot_q4_0;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q4_0, avx512vnni_vec_dot_rows_q4_0;
cpu_dot_group_fn avx512_dot_q4_0x8, avx512vnni_dot_q4_0x8, avx512_dot_q4_Kx8, avx512vnni_dot_q4_Kx8;
cpu_dot_group_fn avx512_dot_q5_Kx8, avx512vnni_dot_q5_Kx8, avx512_dot_iq4_xsx8, avx512vnni_dot_iq4_xsx8;
cpu_dot_group_fn avx512_dot_q2_Kx8, avx512vnni_dot_q2_Kx8, avx512_dot_q3_Kx8, avx512vnni_dot_q3_Kx8;
cpu_vec_dot_fn avx512_vec_dot_q4_1, avx512vnni_vec_dot_q4_1;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q4_1, avx512vnni_vec_dot_rows_q4_1;
cpu_vec_dot_fn avx512_vec_dot_q5_0, avx512vnni_vec_dot_q5_0;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q5_0, avx512vnni_vec_dot_rows_q5_0;
cpu_vec_dot_fn avx512_vec_dot_q5_1, avx512vnni_vec_dot_q5_1;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q5_1, avx512vnni_vec_dot_rows_q5_1;
cpu_vec_dot_fn avx512_vec_dot_iq4_nl, avx512vnni_vec_dot_iq4_nl;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq4_nl, avx512vnni_vec_dot_rows_iq4_nl;
cpu_vec_dot_fn avx512_vec_dot_mxfp4, avx512vnni_vec_dot_mxfp4;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_mxfp4, avx512vnni_vec_dot_rows_mxfp4;
cpu_vec_dot_fn avx512_vec_dot_iq4_xs, avx512vnni_vec_dot_iq4_xs;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq4_xs, avx512vnni_vec_dot_rows_iq4_xs;
cpu_vec_dot_fn avx512_vec_dot_q2_K, avx512vnni_vec_dot_q2_K;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q2_K, avx512vnni_vec_dot_rows_q2_K;
cpu_vec_dot_fn avx512_vec_dot_q3_K, avx512vnni_vec_dot_q3_K;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q3_K, avx512vnni_vec_dot_rows_q3_K;
cpu_vec_dot_fn avx512_vec_dot_q4_K, avx512vnni_vec_dot_q4_K;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q4_K, avx512vnni_vec_dot_rows_q4_K;
cpu_vec_dot_fn avx512_vec_dot_q5_K, avx512vnni_vec_dot_q5_K;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q5_K, avx512vnni_vec_dot_rows_q5_K;
cpu_vec_dot_fn avx512_vec_dot_q6_K, avx512vnni_vec_dot_q6_K;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_q6_K, avx512vnni_vec_dot_rows_q6_K;
cpu_vec_dot_fn avx512_vec_dot_tq1_0, avx512vnni_vec_dot_tq1_0;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_tq1_0, avx512vnni_vec_dot_rows_tq1_0;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_tq1_0, avx512vnni_vec_dot_tile_tq1_0;
cpu_vec_dot_fn avx512_vec_dot_tq2_0, avx512vnni_vec_dot_tq2_0;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_tq2_0, avx512vnni_vec_dot_rows_tq2_0;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_tq2_0, avx512vnni_vec_dot_tile_tq2_0;
cpu_vec_dot_fn avx512_vec_dot_iq2_xxs, avx512vnni_vec_dot_iq2_xxs;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq2_xxs, avx512vnni_vec_dot_rows_iq2_xxs;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq2_xxs, avx512vnni_vec_dot_tile_iq2_xxs;
cpu_vec_dot_fn avx512_vec_dot_iq2_xs, avx512vnni_vec_dot_iq2_xs;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq2_xs, avx512vnni_vec_dot_rows_iq2_xs;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq2_xs, avx512vnni_vec_dot_tile_iq2_xs;
cpu_vec_dot_fn avx512_vec_dot_iq2_s, avx512vnni_vec_dot_iq2_s;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq2_s, avx512vnni_vec_dot_rows_iq2_s;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq2_s, avx512vnni_vec_dot_tile_iq2_s;
cpu_vec_dot_fn avx512_vec_dot_iq3_xxs, avx512vnni_vec_dot_iq3_xxs;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq3_xxs, avx512vnni_vec_dot_rows_iq3_xxs;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq3_xxs, avx512vnni_vec_dot_tile_iq3_xxs;
cpu_vec_dot_fn avx512_vec_dot_iq3_s, avx512vnni_vec_dot_iq3_s;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq3_s, avx512vnni_vec_dot_rows_iq3_s;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq3_s, avx512vnni_vec_dot_tile_iq3_s;
cpu_vec_dot_fn avx512_vec_dot_iq1_s, avx512vnni_vec_dot_iq1_s;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq1_s, avx512vnni_vec_dot_rows_iq1_s;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq1_s, avx512vnni_vec_dot_tile_iq1_s;
cpu_vec_dot_fn avx512_vec_dot_iq1_m, avx512vnni_vec_dot_iq1_m;
cpu_vec_dot_rows_fn avx512_vec_dot_rows_iq1_m, avx512vnni_vec_dot_rows_iq1_m;
cpu_vec_dot_tile_fn avx512_vec_dot_tile_iq1_m, avx512vnni_vec_dot_tile_iq1_m;

#endif
