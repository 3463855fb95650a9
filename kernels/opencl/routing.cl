/* Selection ops (SPEC/OPERATORS.md "Selection"), one work-item per row:
 *  -DTOP_K      the k best of a row of x, best first;
 *  -DMOE_ROUTE  a token's experts and weights.
 * The order: larger first, ties to the lower index, NaN after every number.
 * Both keep the best k so far as a heap of indices in the output row ids
 * (no scratch), worst at the root, and heap-sort it at the end. */
#include "common.h"

/* (av, ai) ranks before (bv, bi) */
static inline int ranks_before(float av, int ai, float bv, int bi)
{
	int an = isnan(av), bn = isnan(bv);

	if (an != bn)
		return bn;
	if (!an && av != bv)
		return av > bv;
	return ai < bi;
}

#ifdef TOP_K
#define SCORE(i) x[i]
#define SCORE_ARGS __global const float *x
#define SCORE_PASS x
#else
/* a token's selection score: the gating's probability + bias; NaN for an
 * expert of a group left out (it then ranks last) */
struct moe {
	__global const float *l, *bias;
	int gating, per;
	float max, inv_sum;
	uint eligible[8]; /* one bit per group: 256 groups, the core's limit */
};

#define GATING_SOFTMAX 0
#define GATING_SIGMOID 1
#define GATING_SOFTMAX_AFTER 2

static inline float prob(const struct moe *m, int i)
{
	float x = m->l[i];

	if (m->gating == GATING_SOFTMAX)
		return exp(x - m->max) * m->inv_sum;
	if (m->gating == GATING_SIGMOID) {
		float e = exp(-fabs(x)), r = 1.0f / (1.0f + e);

		return x >= 0.0f ? r : e * r;
	}
	return x;
}

static inline float selection(const struct moe *m, int i)
{
	return prob(m, i) + (m->bias ? m->bias[i] : 0.0f);
}

static inline float score(const struct moe *m, int i)
{
	int g = i / m->per;

	return (m->eligible[g >> 5] >> (g & 31)) & 1u ? selection(m, i) : NAN;
}

#define SCORE(i) score(m, i)
#define SCORE_ARGS const struct moe *m
#define SCORE_PASS m
#endif

/* h[0 .. k) a heap with the worst at the root: moves h[i] down to its place */
static void sift_down(__global int *h, int k, int i, SCORE_ARGS)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, w = i;

		if (l < k && ranks_before(SCORE(h[w]), h[w], SCORE(h[l]), h[l]))
			w = l;
		if (r < k && ranks_before(SCORE(h[w]), h[w], SCORE(h[r]), h[r]))
			w = r;
		if (w == i)
			return;
		int t = h[i];

		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

/* ids[0 .. k) = the best k of 0 .. n-1 by SCORE, best first */
static void select_top(__global int *ids, int n, int k, SCORE_ARGS)
{
	for (int j = 0; j < k; j++)
		ids[j] = j;
	for (int i = k / 2 - 1; i >= 0; i--)
		sift_down(ids, k, i, SCORE_PASS);
	for (int j = k; j < n; j++) {
		if (ranks_before(SCORE(j), j, SCORE(ids[0]), ids[0])) {
			ids[0] = j;
			sift_down(ids, k, 0, SCORE_PASS);
		}
	}
	/* heap sort: the worst goes to the end, so the row ends best first */
	for (int end = k - 1; end > 0; end--) {
		int t = ids[0];

		ids[0] = ids[end];
		ids[end] = t;
		sift_down(ids, end, 0, SCORE_PASS);
	}
}

#ifdef TOP_K
__kernel void KNAME(gbytes *ib, ulong i_off, long i_s0, gbytes *vb, ulong v_off, long v_s0, int has_values,
		    cbytes *xb, ulong x_off, long x_s0, int n, int k, long rows)
{
	long r = get_global_id(0);

	if (r >= rows)
		return;
	__global const float *x = (__global const float *)(xb + x_off + r * x_s0);
	__global int *ids = (__global int *)(ib + i_off + r * i_s0);

	select_top(ids, n, k, x);
	if (has_values) {
		__global float *v = (__global float *)(vb + v_off + r * v_s0);

		for (int j = 0; j < k; j++)
			v[j] = x[ids[j]];
	}
}
#endif

#ifdef MOE_ROUTE
#define NORM_MIN_SUM 6.103515625e-5f /* llama.cpp's floor under the sum */

/* the sum of group g's two best selection scores */
static float group_score(const struct moe *m, int g)
{
	float v0 = 0.0f, v1 = 0.0f;
	int i0 = -1, i1 = -1;

	for (int i = g * m->per; i < (g + 1) * m->per; i++) {
		float v = selection(m, i);

		if (i0 < 0 || ranks_before(v, i, v0, i0)) {
			v1 = v0;
			i1 = i0;
			v0 = v;
			i0 = i;
		} else if (i1 < 0 || ranks_before(v, i, v1, i1)) {
			v1 = v;
			i1 = i;
		}
	}
	return v0 + v1;
}

/* eligible: the topk_group best groups by group_score (ties: lower group) */
static void rank_groups(struct moe *m, int groups, int topk_group)
{
	for (int g = 0; g < groups; g++) {
		float s = group_score(m, g);
		int better = 0;

		for (int h = 0; h < groups; h++)
			better += ranks_before(group_score(m, h), h, s, g);
		if (better >= topk_group)
			m->eligible[g >> 5] &= ~(1u << (g & 31));
	}
}

__kernel void KNAME(gbytes *ib, ulong i_off, long i_s0, gbytes *wb, ulong w_off, long w_s0, cbytes *lb,
		    ulong l_off, long l_s0, cbytes *bb, ulong b_off, int has_bias, int e, int k, int gating,
		    int n_group, int topk_group, int norm, float scale, long tokens)
{
	long t = get_global_id(0);

	if (t >= tokens)
		return;
	__global int *ids = (__global int *)(ib + i_off + t * i_s0);
	__global float *w = (__global float *)(wb + w_off + t * w_s0);
	struct moe m = {
		.l = (__global const float *)(lb + l_off + t * l_s0),
		.bias = has_bias ? (__global const float *)(bb + b_off) : 0,
		.gating = gating,
		.per = n_group > 1 ? e / n_group : e,
	};

	for (int i = 0; i < 8; i++)
		m.eligible[i] = ~0u;
	if (gating == GATING_SOFTMAX) {
		float mx = -INFINITY, s = 0.0f;

		for (int i = 0; i < e; i++)
			mx = fmax(mx, m.l[i]);
		for (int i = 0; i < e; i++)
			s += exp(m.l[i] - mx);
		m.max = mx;
		m.inv_sum = 1.0f / s;
	}
	if (n_group > 1)
		rank_groups(&m, n_group, topk_group);
	select_top(ids, e, k, &m);

	float f = scale, s = 0.0f, mx = -INFINITY;

	for (int j = 0; j < k; j++) {
		w[j] = prob(&m, ids[j]);
		mx = fmax(mx, w[j]);
	}
	if (gating == GATING_SOFTMAX_AFTER) {
		for (int j = 0; j < k; j++)
			s += w[j] = exp(w[j] - mx);
		for (int j = 0; j < k; j++)
			w[j] /= s;
	}
	if (norm) {
		s = 0.0f;
		for (int j = 0; j < k; j++)
			s += w[j];
		f = scale / fmax(s, NORM_MIN_SUM);
	}
	for (int j = 0; j < k; j++)
		w[j] *= f;
}
#endif
