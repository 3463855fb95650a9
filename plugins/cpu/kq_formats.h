/* The formats of the x86 plugins' K-quant dot bodies (kq_rows in
 * cpu-avx2's and cpu-avx512's matmul_kquant_*.c): the K-quants, the
 * ternary formats and the i-quants below 4 bits, all 256-element blocks
 * against q8_K whose decoded quants are unsigned bytes u, the weight
 * being d·sc_g·(u − offset) or d·sc_g·u − dmin·m_g per group g.
 */
#ifndef GLLMK_CPU_KQ_FORMATS_H
#define GLLMK_CPU_KQ_FORMATS_H

#include <stdint.h>

#include "dot_kernel.h"
#include "iq_subblocks.h"
#include "quant_blocks.h"

/* The i-quants in enum iq_format's order. */
enum kq_format {
	KQ_Q2_K, KQ_Q3_K, KQ_Q4_K, KQ_Q5_K, KQ_Q6_K, KQ_TQ1_0, KQ_TQ2_0,
	KQ_IQ2_XXS, KQ_IQ2_XS, KQ_IQ2_S, KQ_IQ3_XXS, KQ_IQ3_S, KQ_IQ1_S, KQ_IQ1_M,
};

static DOT_ALWAYS_INLINE int kq_is_iq(enum kq_format f)
{
	return f >= KQ_IQ2_XXS;
}

static DOT_ALWAYS_INLINE enum iq_format kq_iq(enum kq_format f)
{
	return (enum iq_format)(f - KQ_IQ2_XXS);
}

static DOT_ALWAYS_INLINE int64_t kq_block_bytes(enum kq_format f)
{
	static const int64_t bytes[] = {
		sizeof(struct block_q2_K), sizeof(struct block_q3_K), sizeof(struct block_q4_K),
		sizeof(struct block_q5_K), sizeof(struct block_q6_K), sizeof(struct block_tq1_0),
		sizeof(struct block_tq2_0),
	};

	return kq_is_iq(f) ? iq_block_bytes(kq_iq(f)) : bytes[f];
}

/* Where the weights are d·sc_g·(u − 2^k) (q3_K 4, q6_K 32, the ternary
 * formats 1, the i-quants' offsets 64 and 16), k: the body subtracts the
 * bias Σ_g sc_g·Σ_g x, shifted by k, in integers. −1: the bias is kept
 * apart, in floats (dmin; q2_K, q4_K, q5_K). */
static DOT_ALWAYS_INLINE int kq_fold(enum kq_format f)
{
	if (kq_is_iq(f))
		return iq_is_iq1(kq_iq(f)) ? 4 : 6;
	switch (f) {
	case KQ_Q6_K: return 5;
	case KQ_Q3_K: return 2;
	case KQ_TQ1_0: case KQ_TQ2_0: return 0;
	default: return -1;
	}
}

#endif
