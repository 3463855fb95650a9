/* The GEMM framework shared by every CPU plugin (BLIS's five loops): packs
 * A into mr-row panels and B into nr-column panels, blocks for the caches
 * the CPU reports, threads over the M and N loops, and leaves the inner
 * mr×nr block to the ISA's microkernel (struct cpu_cntx.sgemm_ukernel).
 * gllmk_gemm and the large-M matmul both run on it. Its pieces, in
 * plugins/cpu/gemm/: caches.c (cache sizes), sgemm.c (blocking, threads,
 * the loop nest), pack.c (packing), sgemm_small_m.c (M below the register
 * block); the int8 GEMM of block weights beside it (qgemm.h).
 */
#ifndef GLLMK_CPU_SGEMM_H
#define GLLMK_CPU_SGEMM_H

#include <stdint.h>

#include "cpu_plugin.h"
#include "cpu_view.h"

/* C[m,n] = alpha·A[m,k]·B[k,n] + beta·C (beta == 0: C is not read).
 * Strides are in elements, so transposes are stride choices:
 *   A(i, p) = a[i·a_rs + p·a_cs]
 *   B(p, j) = b[p·b_rs + j·b_cs]                    when b_dequant is NULL
 *   B(p, j) = b_dequant(row j)[p], row j at (char *)b + j·b_row_bytes,
 *             a row of dtype b_dtype                  (matmul's weights w[N,K])
 * b_pack (optional with b_dequant, cpu_cntx.sgemm_pack_b): packs B's
 * panels 8 weight rows at a time, the framework the rows left over.
 *   C(i, j) = c[i·ldc + j]
 */
struct cpu_sgemm {
	int64_t m, n, k;
	const float *a;
	int64_t a_rs, a_cs;
	const void *b;
	int64_t b_rs, b_cs;
	cpu_dequant_row_fn b_dequant;
	cpu_sgemm_pack_fn b_pack;
	int32_t b_dtype;
	int64_t b_row_bytes;
	uint32_t b_layout;      /* b prepared (prepared.h; 0: plain): decoded, never b_pack */
	float *c;
	int64_t ldc;
	float alpha, beta;
	/* bf16 pairs (matmul's bf16 weights in a context that permits bf16
	 * activations; the ISA's cpu_cntx.bf16_ukernel): a as above, in f32,
	 * its rows contiguous (a_cs 1); B bf16 weight rows (b, b_row_bytes;
	 * b_dequant NULL). The driver rounds
	 * A to bf16 once per call (round to nearest even) and both operands go
	 * through the GEMM as 32-bit words of two consecutive depths, 2p in the
	 * low half, 2p + 1 in the high one (0 past an odd K): the f32 GEMM's
	 * blocking, packing and loop nest on K/2 words, with the bf16
	 * microkernel. alpha, beta and C stay f32. */
	int bf16_pairs;
};

/* GLLMK_E_NO_MEMORY (through the host's set_error) when the packing
 * buffers cannot be allocated; they are allocated per call. */
gllmk_status cpu_sgemm_run(struct cpu_state *s, const struct cpu_sgemm *g);

/* The tm × tn thread grid over C (row_blocks mr-blocks of rows, panels
 * nr-panels of columns): N split first, into the largest divisor of
 * threads that leaves every thread two panels, then M. */
void cpu_gemm_grid(int64_t row_blocks, int64_t panels, int threads, int64_t *tm, int64_t *tn);

/* The L2 cache size the blocking derives from (bytes, read once). */
int64_t cpu_l2_bytes(void);

#endif
