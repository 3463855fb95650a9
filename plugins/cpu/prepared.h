/* Prepared weights of the CPU plugins (gllmk_weights_prepare; SPEC/CPU.md,
 * "Prepared weights"): one layout, q4_0x8, for q4_0 matrices whose rows
 * come in whole groups of 8, offered where the ISA's context table has its
 * group kernel (cpu_cntx.dot_q4_0x8).
 *
 * The tensor's rows (outer dims flattened) in groups of 8: group g fills
 * the bytes the plain tensor gives rows 8g..8g+7, so a view of rows or of
 * an expert that starts on a group lies where the plain one would, and the
 * copy has the plain size. Inside a group, block b of the 8 rows is one
 * struct cpu_q4_0x8 at b·144 bytes: the 8 f16 scales, then the 16 quant
 * bytes of each row in 4 chunks of 4, chunk-major: one 256-bit load gives
 * bytes 4c..4c+3 of all 8 rows, row r's in the i32 lane its dot sums in
 * (the low nibbles are elements 4c..4c+3, the high ones 16 + 4c..).
 */
#ifndef GLLMK_CPU_PREPARED_H
#define GLLMK_CPU_PREPARED_H

#include <stdint.h>

#include "cpu_plugin.h"

#define CPU_LAYOUT_Q4_0X8 1u
#define CPU_Q4_0X8_ROWS 8

/* The largest M that matmul keeps on the group kernel before the int8
 * GEMM takes it (decoding the groups back to q4_0 rows into its packer). 8
 * matrices of 8192 × 2048, 2 threads, Zen 3 (cpu-avx2), ms a matrix, group
 * kernel / GEMM on the prepared weights / the plain weights' best path:
 * M = 8 0.99 / – / 1.63, 16 2.10 / – / 2.40, 24 2.87 / 3.40 / 3.06-3.12,
 * 32 3.80 / 4.16 / 3.82, 40 4.81 / 4.90 / 4.55, 48 5.68 / 5.54 / 5.19,
 * 128 15.35 / 13.22 / 12.69-12.96. Above M = 24 the prepared weights run
 * 0.92-0.98x the plain ones (the decoding; even at 512). */
#define CPU_PREPARED_SMALL_M 40

struct cpu_q4_0x8 {
	uint16_t d[CPU_Q4_0X8_ROWS];
	uint8_t qs[4][CPU_Q4_0X8_ROWS][4]; /* [chunk][row][byte]: row's qs[4·chunk + byte] */
};
_Static_assert(sizeof(struct cpu_q4_0x8) == 144, "q4_0x8 unit: 8 q4_0 blocks");

/* Rows [r0, r0 + rows) of the prepared tensor at w (plain rows of
 * row_bytes, r0 counted from w, which starts a group), elements
 * [k0, k0 + kc) of each (whole blocks), as plain q4_0 rows of kc elements
 * at dst, cpu_row_bytes(q4_0, kc) apart. */
void cpu_q4_0x8_unpack(const void *w, int64_t row_bytes, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
		       void *dst);

/* An ISA's cpu_dot_q4_0x8_fn from its always-inline body(n, w, xq, xsum,
 * out, xrows), xrows a constant in each instance. */
#define CPU_DEFINE_DOT_Q4_0X8(name, body)                                                            \
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
			body(n, w, xq, xsum, out, CPU_Q4_0X8_X_ROWS);                                 \
			break;                                                                        \
		}                                                                                     \
	}

/* The portable group kernel: cpu-generic's, and the reference the ISA
 * kernels are tested against (conformance, through the public API). */
cpu_dot_q4_0x8_fn cpu_ref_dot_q4_0x8;

/* gllmk_matmul on prepared weights at small M (or rows a GEMM cannot
 * take): x encoded to q8_0 once, each group of 8 rows through the ISA's
 * group kernel for every activation row. */
gllmk_status cpu_matmul_prepared(struct cpu_state *s, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias);
/* cpu_matmul_parts (cpu_plugin.h) on prepared weights: every part one
 * activation row, one dtype and shape, its rows evenly spaced; the parts'
 * groups in one pass of the pool, each distinct activation encoded once. */
gllmk_status cpu_matmul_parts_prepared(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count);

#endif
