/* Prepared weights of the CPU plugins (gllmk_weights_prepare; SPEC/CPU.md,
 * "Prepared weights"): layouts q4_0x8, q4_Kx8, q5_Kx8, iq4_xsx8, q2_Kx8
 * and q3_Kx8 for q4_0, q4_K, q5_K, iq4_xs, q2_K and q3_K matrices whose
 * rows come in whole groups of 8, each offered where the ISA's context table has its group kernel
 * (cpu_cntx.dot_group).
 *
 * The tensor's rows (outer dims flattened) in groups of 8: group g fills
 * the bytes the plain tensor gives rows 8g..8g+7, so a view of rows or of
 * an expert that starts on a group lies where the plain one would, and the
 * copy has the plain size. Inside a group, block b of the 8 rows is one
 * unit at b·(8 · the block's bytes): the rows' scales first, then their
 * quant bytes in chunks of 4, chunk-major, so that one 256-bit load gives
 * bytes 4c..4c+3 of all 8 rows, row r's in the i32 lane its dot sums in.
 */
#ifndef GLLMK_CPU_PREPARED_H
#define GLLMK_CPU_PREPARED_H

#include <stdint.h>

#include "cpu_plugin.h"

/* The largest M that matmul keeps on a layout's group kernel before the
 * int8 GEMM takes it (decoding the groups back to plain rows into its
 * packer): prepared.c has the measurements. */
int64_t cpu_prepared_small_m(uint32_t layout);

/* q4_0x8: the 8 f16 scales, then the 16 quant bytes of each row in 4
 * chunks of 4 (the low nibbles are elements 4c..4c+3, the high ones
 * 16 + 4c..). */
struct cpu_q4_0x8 {
	uint16_t d[CPU_GROUP_ROWS];
	uint8_t qs[4][CPU_GROUP_ROWS][4]; /* [chunk][row][byte]: row's qs[4·chunk + byte] */
};
_Static_assert(sizeof(struct cpu_q4_0x8) == 144, "q4_0x8 unit: 8 q4_0 blocks");

/* q4_Kx8 and q5_Kx8: the 8 rows' d and dmin, their 64 6-bit scales and
 * 64 6-bit mins (sub-block s = 0..7 of 32 elements) in an order a few
 * vector ops decode (struct cpu_kx8_head), then the quant bytes: pair j
 * (elements 64j..64j+63) in 8 chunks of 4 bytes, row r's qs[32j + 4c + e]
 * at qs[j][c][r][e], whose low nibbles are elements 64j + 4c + e
 * (sub-block 2j), the high ones 64j + 32 + 4c + e (sub-block 2j + 1);
 * q5_Kx8's fifth bits before them, in chunks as the quant bytes: qh[c][r]
 * is row r's qh[4c..4c+3], whose bit 2j + h is that of element
 * 64j + 32h + 4c + e (a shift and a mask put a sub-block's at bit 4 of the
 * chunk vector's bytes).
 *
 * A 6-bit field list v[0..63] is stored as lo[32] (byte i: v[i]'s low 4
 * bits, v[32 + i]'s as its high nibble) and hi[16] (byte i: the top 2
 * bits of v[i], v[16 + i], v[32 + i], v[48 + i] at bits 0, 2, 4, 6).
 * Scales: v[8s + r] = row r's scale of sub-block s (one vector of the 8
 * rows per sub-block); mins: v[16p + 2r + h] = row r's min of sub-block
 * 2p + h (the i16 pairs a vpmaddwd with two sub-blocks' Σx takes). */
struct cpu_kx8_head {
	uint16_t d[CPU_GROUP_ROWS], dmin[CPU_GROUP_ROWS];
	uint8_t scales_lo[32], mins_lo[32], scales_hi[16], mins_hi[16];
};

struct cpu_q4_Kx8 {
	struct cpu_kx8_head h;
	uint8_t qs[4][8][CPU_GROUP_ROWS][4]; /* [pair][chunk][row][byte] */
};
_Static_assert(sizeof(struct cpu_q4_Kx8) == 1152, "q4_Kx8 unit: 8 q4_K blocks");

struct cpu_q5_Kx8 {
	struct cpu_kx8_head h;
	uint8_t qh[8][CPU_GROUP_ROWS][4]; /* [chunk][row][byte]: row's qh[4·chunk + byte] */
	uint8_t qs[4][8][CPU_GROUP_ROWS][4];
};
_Static_assert(sizeof(struct cpu_q5_Kx8) == 1408, "q5_Kx8 unit: 8 q5_K blocks");

/* iq4_xsx8: the 8 rows' d, their 64 6-bit scales (v[8s + r] = row r's
 * scale of sub-block s, + 32, as q4_Kx8's), then per sub-block s 4 chunks
 * of 4 bytes, row r's qs[16s + 4c + e] at qs[s][c][r][e], whose low
 * nibbles index elements 32s + 4c + e, the high ones 32s + 16 + 4c + e
 * (iq4_xs's own order). */
struct cpu_iq4_xsx8 {
	uint16_t d[CPU_GROUP_ROWS];
	uint8_t scales_lo[32], scales_hi[16];
	uint8_t qs[8][4][CPU_GROUP_ROWS][4]; /* [sub-block][chunk][row][byte] */
};
_Static_assert(sizeof(struct cpu_iq4_xsx8) == 1088, "iq4_xsx8 unit: 8 iq4_xs blocks");

/* q2_Kx8 and q3_Kx8: their 2-bit fields (and q3_K's high bits) chunked
 * as the plain bytes are, qs[c][r][e] row r's qs[4c + e]: bits 2s, 2s + 1
 * of chunk c are elements 128(c / 8) + 32s + 4(c % 8) + e, so one shift
 * and mask give 8 rows × 4 elements that match 4 activation bytes, all of
 * group (of 16 elements, each with its own scale) 8(c / 8) + 2s +
 * (c % 8) / 4. The rows' scales come in pairs of groups: byte [p][r][h]
 * (or field v[16p + 2r + h]) is row r's of group 2p + h, so that 16 bytes
 * widened are the i16 pairs a vpmaddwd with two groups' Σx takes.
 *
 * q2_Kx8: the d and dmin of the 8 rows, their scale bytes as q2_K's (scale
 * in the low nibble, min in the high one), the quants. */
struct cpu_q2_Kx8 {
	uint16_t d[CPU_GROUP_ROWS], dmin[CPU_GROUP_ROWS];
	uint8_t scales[8][CPU_GROUP_ROWS][2]; /* [pair][row][h]: row's scales[2·pair + h] */
	uint8_t qs[16][CPU_GROUP_ROWS][4];   /* [chunk][row][byte]: row's qs[4·chunk + byte] */
};
_Static_assert(sizeof(struct cpu_q2_Kx8) == 672, "q2_Kx8 unit: 8 q2_K blocks");

/* q3_Kx8: the 8 rows' d, their 128 6-bit scales (+ 32, as q3_K stores
 * them) as two field lists (v[0..63], v[64..127]), the high bits chunked
 * as the quants (bit j of hmask[c][r][e], row r's hmask[4c + e], is that of
 * element 32j + 4c + e), the 2-bit fields as q2_Kx8's. */
struct cpu_q3_Kx8 {
	uint16_t d[CPU_GROUP_ROWS];
	uint8_t scales_lo[2][32], scales_hi[2][16];
	uint8_t hmask[8][CPU_GROUP_ROWS][4]; /* [chunk][row][byte] */
	uint8_t qs[16][CPU_GROUP_ROWS][4];
};
_Static_assert(sizeof(struct cpu_q3_Kx8) == 880, "q3_Kx8 unit: 8 q3_K blocks");

/* Bytes of plain rows the decoder below writes for n elements, at most
 * (q5_K spends 11/16 of a byte an element, q4_0 and q4_K 9/16, iq4_xs
 * 17/32, q3_K 55/128, q2_K 21/64). */
#define CPU_PREPARED_PLAIN_BYTES(n) ((n) / 32 * 22)
/* Rows [r0, r0 + rows) of the prepared tensor at w (plain rows of
 * row_bytes, r0 counted from w, which starts a group), elements
 * [k0, k0 + kc) of each (whole blocks), as plain rows of kc elements at
 * dst, cpu_row_bytes(dtype, kc) apart. */
void cpu_prepared_unpack(uint32_t layout, const void *w, int64_t row_bytes, int64_t r0, int64_t rows, int64_t k0,
			 int64_t kc, void *dst);

/* An ISA's cpu_dot_group_fn from its always-inline body(n, w, xq, xsum,
 * out, xrows), xrows a constant in each instance. */
#define CPU_DEFINE_DOT_GROUP(name, body)                                                             \
	void name(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out) \
	{                                                                                             \
		switch (xrows) {                                                                      \
		case 1:                                                                               \
			body(n, w, xq, xsum, out, 1);                                                 \
			break;                                                                        \
		case 2:                                                                               \
			body(n, w, xq, xsum, out, 2);                                                 \
			break;                                                                        \
		case 3:                                                                               \
			body(n, w, xq, xsum, out, 3);                                                 \
			break;                                                                        \
		default:                                                                              \
			body(n, w, xq, xsum, out, CPU_GROUP_X_ROWS);                                  \
			break;                                                                        \
		}                                                                                     \
	}

/* The portable group kernels: cpu-generic's, and the reference the ISA
 * kernels are tested against (conformance, through the public API). */
cpu_dot_group_fn cpu_ref_dot_q4_0x8, cpu_ref_dot_q4_Kx8, cpu_ref_dot_q5_Kx8, cpu_ref_dot_iq4_xsx8, cpu_ref_dot_q2_Kx8,
	cpu_ref_dot_q3_Kx8;

/* gllmk_matmul on prepared weights at small M (or rows a GEMM cannot
 * take): x encoded to q8_0 once, each group of 8 rows through the ISA's
 * group kernel for every activation row. */
gllmk_status cpu_matmul_prepared(struct cpu_state *s, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias);
/* cpu_matmul_parts (cpu_plugin.h) on prepared weights: every part one
 * activation row, one dtype and shape, its rows evenly spaced; the parts'
 * groups in one pass of the pool, each distinct activation encoded once. */
gllmk_status cpu_matmul_parts_prepared(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count);

#endif
