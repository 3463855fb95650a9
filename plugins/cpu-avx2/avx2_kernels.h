/* cpu-avx2's kernels (contracts: cpu_cntx.h). All of them are compiled
 * with -mavx2 -mfma -mf16c; the vec_dot kernels of the 32-element formats
 * are compiled twice, as avx2_* (vpmaddubsw, any Haswell-class CPU) and as
 * avx2vnni_* (-mavxvnni: vpdpbusd), and open picks the table by CPUID.
 */
#ifndef GLLMK_CPU_AVX2_KERNELS_H
#define GLLMK_CPU_AVX2_KERNELS_H

#include <stdint.h>

#include "cpu_cntx.h"
#include "gemm/qgemm_pack_isa.h"

/* sgemm_avx2.c */
#define AVX2_SGEMM_MR 6
#define AVX2_SGEMM_NR 16
void avx2_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
			float beta);

/* sgemm_pack_avx2.c: cpu_cntx.sgemm_pack_b for f16 and bf16 weights */
void avx2_sgemm_pack_b_f16(const void *w, int64_t row_bytes, int64_t cols, int64_t kc, int64_t nr, float *dst);
void avx2_sgemm_pack_b_bf16(const void *w, int64_t row_bytes, int64_t cols, int64_t kc, int64_t nr, float *dst);

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
/* avx2_qgemm_u8_4x16_*_u<j>: the narrow ones (u ≤ 2^(4+j) − 1, unsigned
 * packing, vpmaddubsw without the sign trick), cpu_qgemm_kernels.ukernel_narrow */
#define AVX2_DECLARE_QGEMM_NARROW(j)                    \
	AVX2_DECLARE_QGEMM(avx2_qgemm_u8_4x16_sb32_u##j)     \
	AVX2_DECLARE_QGEMM(avx2_qgemm_u8_4x16_sb32_min_u##j) \
	AVX2_DECLARE_QGEMM(avx2_qgemm_u8_4x16_sb16_u##j)     \
	AVX2_DECLARE_QGEMM(avx2_qgemm_u8_4x16_sb16_min_u##j)
AVX2_DECLARE_QGEMM_NARROW(0)
AVX2_DECLARE_QGEMM_NARROW(1)
AVX2_DECLARE_QGEMM_NARROW(2)
AVX2_DECLARE_QGEMM_NARROW(3)
/* avx2_qgemm_u8_4x16_isc_<t>: the isc mode's (gemm/qgemm.h), cpu_qgemm_kernels.ukernel_isc,
 * for each dtype of CPU_QGEMM_ISC_FORMATS */
#define AVX2_DECLARE_QGEMM_ISC(t, T, sb, has_min, j, shift) AVX2_DECLARE_QGEMM(avx2_qgemm_u8_4x16_isc_##t)
CPU_QGEMM_ISC_FORMATS(AVX2_DECLARE_QGEMM_ISC)
/* ... and avx2_qgemm_s8_4x16_isc_<t> on the signed packing, for each dtype of
 * CPU_QGEMM_ISC_SIGNED_FORMATS */
#define AVX2_DECLARE_QGEMM_ISC_SIGNED(t, T, sb) AVX2_DECLARE_QGEMM(avx2_qgemm_s8_4x16_isc_##t)
CPU_QGEMM_ISC_SIGNED_FORMATS(AVX2_DECLARE_QGEMM_ISC_SIGNED)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb32)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb32_min)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb16)
AVX2_DECLARE_QGEMM(avxvnni_qgemm_u8_4x16_sb16_min)

/* qgemm_pack_avx2.c: the int8 GEMM's B packers (cpu_qgemm_pack_fn),
 * avx2_qgemm_pack_<dtype> for each dtype of
 * CPU_QGEMM_ISA_PACKERS (gemm/qgemm_pack_isa.h), the same bytes as the
 * framework's cpu_qgemm_pack_b. */
#define AVX2_DECLARE_QGEMM_PACK(t, T, sb, has_min) CPU_QGEMM_PACKER_PROTO(avx2, t);
CPU_QGEMM_ISA_PACKERS(AVX2_DECLARE_QGEMM_PACK)
/* ... and the isc mode's, avx2_qgemm_pack_isc_<dtype> for each dtype of
 * CPU_QGEMM_ISC_FORMATS: the bytes of cpu_qgemm_pack_b followed by
 * cpu_qgemm_isc_scales. */
#define AVX2_DECLARE_QGEMM_PACK_ISC(t, T, sb, has_min, j, shift) CPU_QGEMM_ISC_PACKER_PROTO(avx2, t);
CPU_QGEMM_ISC_FORMATS(AVX2_DECLARE_QGEMM_PACK_ISC)

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
 * formats; the float ones are plugins/cpu/simd/dot_float_simd.h's. (At
 * M = 1 the tables take one row a call: cpu_cntx.decode_one_row.) */
#define AVX2_DOT_ROWS 4

/* Block weights against q8_0 / q8_K activations, per integer-dot flavour
 * (avx2_dot.h): matmul_quant_avx2.c and matmul_legacy_avx2.c, built as
 * avx2_* and avx2vnni_*; matmul_kquant_avx2.c, as avx2_* only, with a
 * vec_dot_tile (AVX2_KQ_X_ROWS activation rows) for the formats whose
 * blocks cost most to decode. */
#define AVX2_KQ_X_ROWS 4
cpu_vec_dot_fn avx2_vec_dot_q8_0, avx2vnni_vec_dot_q8_0;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q8_0, avx2vnni_vec_dot_rows_q8_0;
cpu_vec_dot_fn avx2_vec_dot_q4_0, avx2vnni_vec_dot_q4_0;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q4_0, avx2vnni_vec_dot_rows_q4_0;
cpu_dot_group_fn avx2_dot_q4_0x8, avx2vnni_dot_q4_0x8, avx2_dot_q4_Kx8, avx2vnni_dot_q4_Kx8;
cpu_dot_group_fn avx2_dot_q5_Kx8, avx2vnni_dot_q5_Kx8, avx2_dot_iq4_xsx8, avx2vnni_dot_iq4_xsx8;
cpu_dot_group_fn avx2_dot_q2_Kx8, avx2vnni_dot_q2_Kx8, avx2_dot_q3_Kx8, avx2vnni_dot_q3_Kx8;
cpu_vec_dot_fn avx2_vec_dot_q4_1, avx2vnni_vec_dot_q4_1;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q4_1, avx2vnni_vec_dot_rows_q4_1;
cpu_vec_dot_fn avx2_vec_dot_q5_0, avx2vnni_vec_dot_q5_0;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q5_0, avx2vnni_vec_dot_rows_q5_0;
cpu_vec_dot_fn avx2_vec_dot_q5_1, avx2vnni_vec_dot_q5_1;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q5_1, avx2vnni_vec_dot_rows_q5_1;
cpu_vec_dot_fn avx2_vec_dot_iq4_nl, avx2vnni_vec_dot_iq4_nl;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq4_nl, avx2vnni_vec_dot_rows_iq4_nl;
cpu_vec_dot_fn avx2_vec_dot_iq4_xs, avx2vnni_vec_dot_iq4_xs;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq4_xs, avx2vnni_vec_dot_rows_iq4_xs;
cpu_vec_dot_fn avx2_vec_dot_mxfp4, avx2vnni_vec_dot_mxfp4;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_mxfp4, avx2vnni_vec_dot_rows_mxfp4;
cpu_vec_dot_fn avx2_vec_dot_q2_K;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q2_K;
cpu_vec_dot_fn avx2_vec_dot_q3_K;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q3_K;
cpu_vec_dot_fn avx2_vec_dot_q4_K;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q4_K;
cpu_vec_dot_fn avx2_vec_dot_q5_K;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q5_K;
cpu_vec_dot_fn avx2_vec_dot_q6_K;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_q6_K;
cpu_vec_dot_fn avx2_vec_dot_tq2_0;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_tq2_0;
cpu_vec_dot_fn avx2_vec_dot_tq1_0;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_tq1_0;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_tq1_0;
cpu_vec_dot_fn avx2_vec_dot_iq2_xxs;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq2_xxs;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq2_xxs;
cpu_vec_dot_fn avx2_vec_dot_iq2_xs;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq2_xs;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq2_xs;
cpu_vec_dot_fn avx2_vec_dot_iq2_s;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq2_s;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq2_s;
cpu_vec_dot_fn avx2_vec_dot_iq3_xxs;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq3_xxs;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq3_xxs;
cpu_vec_dot_fn avx2_vec_dot_iq3_s;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq3_s;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq3_s;
cpu_vec_dot_fn avx2_vec_dot_iq1_s;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq1_s;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq1_s;
cpu_vec_dot_fn avx2_vec_dot_iq1_m;
cpu_vec_dot_rows_fn avx2_vec_dot_rows_iq1_m;
cpu_vec_dot_tile_fn avx2_vec_dot_tile_iq1_m;

#endif
