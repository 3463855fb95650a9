/* The int8 GEMM for block weights at large M (matmul, M > SMALL_M), shared
 * by every CPU plugin whose context table has a qgemm microkernel
 * (struct cpu_cntx.qgemm).
 *
 * y[M,N] = x[M,K] · w[N,K]ᵀ. Each weight sub-block (sb = 16 or 32
 * elements of one row) is written as w = scale·u + offset with u unsigned
 * bytes (qgemm_pack.c decodes every supported format so); each activation
 * sub-block as x ≈ xs·xq, xq signed bytes (q8_0's encoder: one scale per
 * 32 elements). Then
 *   Σ w·x = scale·xs·Σ u·xq + offset·xs·Σ xq
 * where Σ u·xq is the integer dot (vpdpbusd on AVX512-VNNI). For formats
 * whose offset is −c·scale (c a constant: q4_0 8, q8_0 and the iq4 128,
 * q5_0 16, q6_K 32, q3_K 4, mxfp4 12, tq1_0 and tq2_0 1, the iq2 and iq3
 * formats 64, the iq1 16) the offset term is folded into the integer
 * sum, which starts at −c·Σxq.
 *
 * Packed layouts (every sub-block in K order, 4-byte groups of K):
 *   A, an mr-row panel, per sub-block: sb·mr bytes xq as [sb/4][mr][4];
 *      mr f32 xs; mr 32-bit xo: int32 −c·Σxq, or (weights with a min)
 *      f32 xs·Σxq. Rows past M are zero.
 *   B, a CPU_QGEMM_NR-row weight panel, per sub-block: 16·sb bytes u as
 *      [sb/4][16][4]; 16 f32 scales; with a min, 16 f32 offsets. Rows
 *      past N are zero.
 * The signed packing (cpu_qgemm_kernels.signed_w, for s8×s8 dots) stores
 * the weights as s8 bytes u − c instead and xo = 0 (no min) or xs·Σxq
 * (with a min, c = 0): the same sums, Σ w·x = scale·xs·Σ (u − c)·xq.
 * Every format's u − c is in [−128, 127]: c = 128 for the u in [0, 255]
 * (q8_0, iq4), u ≤ 31 where c = 0, u < 2·c for the others.
 *
 * The xs256 mode (a table with cpu_qgemm_kernels.ukernel_xs256, for
 * weight dtypes of 256-element blocks: the K-quants, iq*, tq*): x is
 * encoded to q8_K instead, one xs per 256 elements, which SPEC/OPERATORS.md
 * allows for those formats, so
 *   Σ w·x over 256 = xs·Σ_sub-blocks (scale·Σ u·xq + offset·Σ xq)
 * and the microkernel converts to f32 and multiplies by xs once per 256.
 * A keeps its layout: xs repeats in each sub-block of the 256 (the
 * microkernel reads the first), and with a min xo is f32 Σxq without xs.
 * Depth blocks (kc) are whole 256s, so a panel starts at a 256 boundary.
 *
 * The isc mode (integer scales; a table with cpu_qgemm_kernels.ukernel_isc
 * for the dtype: the K-quants, whose sub-block scales are small integers
 * sc under one f16 d per 256 and, with a min, integers m under dmin):
 *   Σ w·x over 256 = xs·d·(Σ_s sc_s·Σ u·xq − c·Σ_s sc_s·Σxq)       no min
 *                  = xs·(d·Σ_s sc_s·Σ u·xq − dmin·Σ_s m_s·Σxq)    a min
 * so the microkernel keeps both sums in int32 over the 256 (the scale
 * multiplies in the vpmaddwd that widens the pair sums, where the other
 * modes multiplied by 1) and converts to f32 once per 256, where the other
 * modes convert, scale and add per sub-block. x as in xs256 (q8_K); xo
 * of each even sub-block 2j the i16 pair (Σxq of 2j, Σxq of 2j + 1), of
 * the odd ones 0 (|Σxq| ≤ 32·127). B on the unsigned packing, each
 * sub-block's scale slot 16 32-bit lanes (sc, sc) of i16 (the offset slot
 * of a format with a min 0, unused); after the panel's sub-blocks, per 256
 * (CPU_QGEMM_ISC_TRAILER): d[16] and dmin[16] as f16 (the blocks' own
 * bits; dmin 0 without a min), then per pair of sub-blocks 16 lanes
 * (k_2j, k_2j+1) of i16, k being m with a min and sc without: one
 * vpmaddwd per pair and row against xo gives Σ k·Σxq.
 * iq4_xs has isc integers too (sc = ls − 32 under d), but its u reach 255:
 * its isc microkernels (CPU_QGEMM_ISC_SIGNED_FORMATS) take the signed
 * packing, u − c, so the c term is gone and its k are 0.
 */
#ifndef GLLMK_CPU_QGEMM_H
#define GLLMK_CPU_QGEMM_H

#include <stdint.h>

#include "cpu_plugin.h"

/* Bytes of one sub-block of an mr-row A panel and of a B panel (the
 * layouts above), for the framework and every ISA's microkernels and
 * packers. */
#define CPU_QGEMM_A_SB_BYTES(sb, mr) ((sb) * (mr) + 8 * (mr))
#define CPU_QGEMM_B_SB_BYTES(sb, has_min) (CPU_QGEMM_NR * (sb) + ((has_min) ? 8 : 4) * CPU_QGEMM_NR)

/* The isc mode's integers of one 256-element block: sc[QK_K/sb],
 * k[QK_K/sb] (m with a min, else sc) and the f16 bits of d and dmin (0
 * without a min); qgemm_isc_<t> in gemm/qgemm_pack_isa.h. */
typedef void (*cpu_qgemm_isc_fn)(const void *block, int16_t *sc, int16_t *k, uint16_t *d, uint16_t *dmin);

/* How a weight dtype is packed: decode(src, n, u, scale, off) writes n
 * elements (a multiple of the block) of one row as u[n] and, per
 * sub-block, scale[n/sb] and (has_min) off[n/sb]. */
struct cpu_qgemm_format {
	int sb;
	int has_min;
	int c;                  /* without a min: offset = −c·scale */
	int umax;               /* the largest u decode writes */
	void (*decode)(const void *src, int64_t n, uint8_t *u, float *scale, float *off);
	cpu_qgemm_isc_fn isc;   /* NULL: no isc mode */
};

/* qgemm_pack.c: the format of dtype t, NULL when it has no int8 packing. */
const struct cpu_qgemm_format *cpu_qgemm_format(int32_t t);

/* qgemm_pack.c: the framework's B packer, cpu_qgemm_pack_fn's for any
 * dtype t with a format, kc up to CPU_QGEMM_KC_MAX, w_bias subtracted from
 * u (c for the signed packing, else 0); also the reference the ISAs'
 * packers (struct cpu_qgemm_kernels, pack_b) are tested against. */
#define CPU_QGEMM_KC_MAX 512    /* a multiple of QK_K */
void cpu_qgemm_pack_b(int32_t t, int w_bias, const void *w, int64_t row_bytes, int64_t rows, int64_t kc,
		      void *dst);

/* qgemm_pack.c: a packed panel of dtype t (kc whole 256s) into the isc
 * mode's: its scale slots rewritten (the offset slots 0), each 256's d,
 * dmin and k pairs written after it (CPU_QGEMM_ISC_TRAILER(sb) bytes per
 * 256). A second pass over the panel's blocks, where the table has no isc
 * packer (cpu_qgemm_kernels.pack_b_isc, which writes the same bytes in
 * one). */
#define CPU_QGEMM_ISC_TRAILER(sb) ((1 + QK_K / (sb) / 2) * CPU_QGEMM_NR * 4)
/* Byte offsets inside one 256's trailer: its 16 f16 d, its 16 f16 dmin,
 * and the 16 32-bit (k_2j, k_2j+1) lanes of sub-block pair j. */
#define CPU_QGEMM_ISC_D 0
#define CPU_QGEMM_ISC_DMIN (2 * CPU_QGEMM_NR)
#define CPU_QGEMM_ISC_KPAIRS(j) (4 * CPU_QGEMM_NR * (1 + (j)))

/* X(dtype, DTYPE, sub-block, has a min, narrow class j (u ≤ 2^(4+j) − 1),
 * log2 c (0 with a min)) for every dtype with isc integers: their
 * cpu_qgemm_format facts as constants for the ISAs' isc packers and
 * microkernels (the unit test qgemm-isc holds the two to each other). */
#define CPU_QGEMM_ISC_FORMATS(X) \
	X(q2_K, Q2_K, 16, 1, 0, 0) X(q3_K, Q3_K, 16, 0, 0, 2) X(q4_K, Q4_K, 32, 1, 0, 0) X(q5_K, Q5_K, 32, 1, 1, 0) \
	X(q6_K, Q6_K, 16, 0, 2, 5)
/* X(dtype, DTYPE, sub-block) for every dtype whose isc integers come with
 * u above 127 (no min): the isc mode on the signed packing (above). */
#define CPU_QGEMM_ISC_SIGNED_FORMATS(X) X(iq4_xs, IQ4_XS, 32)
void cpu_qgemm_isc_scales(int32_t t, const void *w, int64_t row_bytes, int64_t rows, int64_t kc, void *dst);

struct cpu_qgemm {
	int64_t m, n, k;
	const float *x;
	int64_t ldx;            /* floats between rows of x (0: rows repeat) */
	const void *w;
	int32_t w_dtype;
	int64_t w_row_bytes;
	uint32_t w_layout;      /* w prepared (prepared.h; 0: plain), rows of w_row_bytes */
	float *y;
	int64_t ldy;
};

/* Whether the plugin runs the int8 GEMM for weights of dtype t. */
int cpu_qgemm_supports(const struct cpu_cntx *k, int32_t t);

/* GLLMK_E_NO_MEMORY (through the host's set_error) when the packed
 * activations or the packing buffers cannot be allocated. */
gllmk_status cpu_qgemm_run(struct cpu_state *s, const struct cpu_qgemm *g);

#endif
