/* Ranking values the way sample, top_k and moe_route order them
 * (SPEC/OPERATORS.md): larger value first, ties to the lower index, NaN
 * after every number. */
#ifndef GLLMK_CPU_RANK_H
#define GLLMK_CPU_RANK_H

#include <stdint.h>

struct cpu_cand {
	float logit;
	int32_t idx;
};

/* Fills c[0 .. k) with the best k of x[0 .. n) (each with its index), best
 * first: a min-heap of the k kept so far (O(n log k)), then a sort. */
void cpu_rank_top(struct cpu_cand *c, const float *x, int64_t n, int64_t k);

#endif
