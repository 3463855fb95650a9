/* cpu-neon's kernels (contracts: cpu_kernels.h). AdvSIMD is part of the
 * AArch64 base ISA; only matmul_quant_neon.c is built a second time, with
 * -march=armv8.2-a+dotprod, as neondot_* (sdot), and open picks the table
 * by HWCAP (probe_neon.c).
 */
#ifndef GLLMK_CPU_NEON_KERNELS_H
#define GLLMK_CPU_NEON_KERNELS_H

#include <stdint.h>

/* sgemm_neon.c: 8×12 FMA register block (24 accumulators of 4 lanes, 3 B
 * and 2 A registers: 29 of the 32 vector registers). */
#define NEON_SGEMM_MR 8
#define NEON_SGEMM_NR 12
void neon_sgemm_ukernel(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha,
			float beta);

/* quant_neon.c: the q8_0 and q8_K activation encoders, bit for bit the
 * reference encoders (ref_quant_row_q8_0, ref_quant_row_q8_K). */
void neon_quant_row_q8_0(const float *src, void *dst, int64_t n);
void neon_quant_row_q8_K(const float *src, void *dst, int64_t n);

/* matmul_quant_neon.c, per integer-dot flavour: weight rows of q8_0 and
 * q4_0 against q8_0 activations, q4_K and q6_K against q8_K. */
#define NEON_DECLARE_VEC_DOTS(isa)                                          \
	float isa##_vec_dot_q8_0(int64_t n, const void *w, const void *xq); \
	float isa##_vec_dot_q4_0(int64_t n, const void *w, const void *xq); \
	float isa##_vec_dot_q4_K(int64_t n, const void *w, const void *xq); \
	float isa##_vec_dot_q6_K(int64_t n, const void *w, const void *xq);
NEON_DECLARE_VEC_DOTS(neon)
NEON_DECLARE_VEC_DOTS(neondot)

/* probe_neon.c: what HWCAP/HWCAP2 report (baseline code). */
struct neon_features {
	int asimd;      /* AdvSIMD: required */
	int fp16;       /* half-precision arithmetic (FPHP + ASIMDHP) */
	int dotprod;    /* sdot/udot */
	int i8mm;       /* smmla */
};
void neon_features_read(struct neon_features *f);

#endif
