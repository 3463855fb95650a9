/* Naive double-precision softmax attention for the conformance suite,
 * written from SPEC/OPERATORS.md ("attention"), not from any plugin: every
 * score in memory, the max subtracted, exp, normalise.
 */
#ifndef GLLMK_REF_ATTENTION_H
#define GLLMK_REF_ATTENTION_H

#include <stdint.h>

struct ref_attn {
	int64_t tq, hq, hkv, d, dv;
	int64_t kv_len; /* tokens seen: k and v hold at least this many */
	int causal;
	double scale;   /* already resolved: never 0 */
};

/* q [tq, hq, d]; k [kv_len, hkv, d]; v [kv_len, hkv, dv] (logical token
 * order, contiguous); mask NULL or [tq, mask_cols] with mask_cols >= kv_len.
 * out [tq, hq, dv]. mag [tq, hq, dv] gets each output's natural scale,
 * Σ_t p_t·|v_t| (0 for a query that sees nothing, whose output is 0). */
void ref_attention(const struct ref_attn *a, const float *q, const float *k, const float *v, const float *mask,
		   int64_t mask_cols, double *out, double *mag);

#endif
