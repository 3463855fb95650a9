/* Selection: top_k and moe_route (SPEC/OPERATORS.md, "Selection"), and the
 * ranking they share with sample (cpu_rank.h).
 *
 * Both are small next to the matmuls around them (a row of a vocabulary, or
 * a token's few hundred router logits), so one thread takes whole rows: a
 * heap keeps the best k while the row streams past.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_plugin.h"
#include "cpu_rank.h"
#include "cpu_view.h"

/* The order of SPEC/OPERATORS.md: larger first, then the lower index; NaN
 * after every number. */
static int ranks_before(const struct cpu_cand *a, const struct cpu_cand *b)
{
	int a_nan = isnan(a->logit), b_nan = isnan(b->logit);

	if (a_nan != b_nan)
		return b_nan;
	if (!a_nan && a->logit != b->logit)
		return a->logit > b->logit;
	return a->idx < b->idx;
}

/* Min-heap on rank: the root is the worst of the k kept so far. */
static void heap_sift_down(struct cpu_cand *h, int64_t k, int64_t i)
{
	for (;;) {
		int64_t l = 2 * i + 1, r = l + 1, worst = i;

		if (l < k && ranks_before(&h[worst], &h[l]))
			worst = l;
		if (r < k && ranks_before(&h[worst], &h[r]))
			worst = r;
		if (worst == i)
			return;
		struct cpu_cand t = h[i];

		h[i] = h[worst];
		h[worst] = t;
		i = worst;
	}
}

#define RANK_BLOCK 32

/* Whether every x[0 .. RANK_BLOCK) < t: false as soon as a NaN is on either
 * side, so NaN always takes the full order. */
static inline int all_below(const float *x, float t)
{
	int below = 1;

	for (int i = 0; i < RANK_BLOCK; i++)
		below &= x[i] < t;
	return below;
}

void cpu_rank_top(struct cpu_cand *c, const float *x, int64_t n, int64_t k)
{
	for (int64_t j = 0; j < k; j++)
		c[j] = (struct cpu_cand){ .logit = x[j], .idx = (int32_t)j };
	for (int64_t i = k / 2; i-- > 0;)
		heap_sift_down(c, k, i);
	for (int64_t j = k; j < n;) {
		/* Most of a long row is below the worst kept: a block of them is
		 * rejected by compares with the root (a loop the compiler
		 * vectorises; a compare with NaN on either side is false, so NaN
		 * goes to the full order below). */
		if (j + RANK_BLOCK <= n && all_below(x + j, c[0].logit)) {
			j += RANK_BLOCK;
			continue;
		}
		int64_t end = j + RANK_BLOCK < n ? j + RANK_BLOCK : n;

		for (; j < end; j++) {
			struct cpu_cand e = { .logit = x[j], .idx = (int32_t)j };

			if (!(x[j] < c[0].logit) && ranks_before(&e, &c[0])) {
				c[0] = e;
				heap_sift_down(c, k, 0);
			}
		}
	}
	/* Heap sort: the worst kept goes to the end each step, leaving the best
	 * first (no qsort: it allocates for large k, and calls back per compare). */
	for (int64_t end = k - 1; end > 0; end--) {
		struct cpu_cand t = c[0];

		c[0] = c[end];
		c[end] = t;
		heap_sift_down(c, end, 0);
	}
}

/* Scratch of `per_thread` bytes for each of the pool's threads, or the
 * error the op returns. */
static gllmk_status scratch_alloc(const struct cpu_state *s, const char *op, size_t per_thread, void **p)
{
	*p = malloc(per_thread * (size_t)s->n_threads);
	if (!*p)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s %s: no memory for %zu bytes of scratch per thread",
					  s->k->isa, op, per_thread);
	return GLLMK_OK;
}

/* ---------------------------------------------------------------- top_k */

struct top_k_job {
	const gllmk_tensor *values, *ids, *x;
	int64_t n, k;
	struct cpu_cand *cands; /* k per thread */
};

static void top_k_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct top_k_job *j = arg;
	struct cpu_cand *c = j->cands + (int64_t)tid * j->k;

	for (int64_t r = begin; r < end; r++) {
		int32_t *ids = cpu_row(j->ids, r);
		float *vals = j->values ? cpu_row(j->values, r) : NULL;

		cpu_rank_top(c, cpu_row(j->x, r), j->n, j->k);
		for (int64_t i = 0; i < j->k; i++) {
			ids[i] = c[i].idx;
			if (vals)
				vals[i] = c[i].logit;
		}
	}
}

gllmk_status cpu_top_k(void *st, gllmk_t values, gllmk_t ids, gllmk_t x)
{
	const struct cpu_state *s = st;
	struct top_k_job j = { .values = values, .ids = ids, .x = x, .n = cpu_row_len(x), .k = cpu_row_len(ids) };
	int64_t rows = cpu_rows(x);
	gllmk_status st_ = scratch_alloc(s, "top_k", (size_t)j.k * sizeof(*j.cands), (void **)&j.cands);

	if (st_ != GLLMK_OK)
		return st_;
	cpu_pool_run(s->pool, rows, cpu_row_grain(rows, j.n), top_k_rows, &j);
	free(j.cands);
	return GLLMK_OK;
}

/* ------------------------------------------------------------ moe_route */

/* llama.cpp's floor under the sum the weights are normalised by. */
#define MOE_NORM_MIN_SUM 6.103515625e-5f

struct moe_job {
	const gllmk_tensor *ids, *weights, *logits, *bias;
	const gllmk_moe_route_params *p;
	int64_t e, k;
	size_t per_thread;      /* bytes of scratch */
	char *scratch;
};

/* A token's scratch: probs, selection scores and candidates for E experts,
 * group scores and candidates for the groups. */
struct moe_scratch {
	float *probs, *sel, *gscore;
	struct cpu_cand *cands, *gcands;
};

static size_t moe_scratch_bytes(int64_t e, int64_t groups)
{
	return (size_t)e * (2 * sizeof(float) + sizeof(struct cpu_cand)) +
	       (size_t)groups * (sizeof(float) + sizeof(struct cpu_cand));
}

static struct moe_scratch moe_scratch_of(const struct moe_job *j, int tid)
{
	char *p = j->scratch + (size_t)tid * j->per_thread;
	struct moe_scratch m;

	m.cands = (struct cpu_cand *)p;
	m.gcands = m.cands + j->e;
	m.probs = (float *)(m.gcands + j->p->n_group);
	m.sel = m.probs + j->e;
	m.gscore = m.sel + j->e;
	return m;
}

/* The gating's probabilities: softmax over E, sigmoid, or the logits
 * themselves (SOFTMAX_AFTER takes its softmax over the chosen k). */
static void moe_probs(float *probs, const float *l, int64_t e, int gating)
{
	if (gating == GLLMK_GATING_SOFTMAX) {
		float max = -INFINITY;
		double sum = 0.0;

		for (int64_t i = 0; i < e; i++)
			max = l[i] > max ? l[i] : max;
		for (int64_t i = 0; i < e; i++) {
			probs[i] = expf(l[i] - max);
			sum += probs[i];
		}
		for (int64_t i = 0; i < e; i++)
			probs[i] = (float)(probs[i] / sum);
	} else if (gating == GLLMK_GATING_SIGMOID) {
		for (int64_t i = 0; i < e; i++)
			probs[i] = 1.0f / (1.0f + expf(-l[i]));
	} else {
		for (int64_t i = 0; i < e; i++)
			probs[i] = l[i];
	}
}

/* Grouped routing (DeepSeek V3): a group's score is the sum of its two best
 * selection scores; experts outside the topk_group best groups get NaN, which
 * ranks after every number (the core made sure k experts stay eligible). */
static void moe_mask_groups(const struct moe_job *j, struct moe_scratch *m)
{
	const int64_t groups = j->p->n_group, per = j->e / groups;
	struct cpu_cand best2[2];

	for (int64_t g = 0; g < groups; g++) {
		cpu_rank_top(best2, m->sel + g * per, per, 2);
		m->gscore[g] = best2[0].logit + best2[1].logit;
	}
	cpu_rank_top(m->gcands, m->gscore, groups, groups);
	for (int64_t r = j->p->topk_group; r < groups; r++)
		for (int64_t i = 0; i < per; i++)
			m->sel[m->gcands[r].idx * per + i] = NAN;
}

/* w[0 .. k) = softmax(w) */
static void softmax_small(float *w, int64_t k)
{
	float max = -INFINITY;
	double sum = 0.0;

	for (int64_t i = 0; i < k; i++)
		max = w[i] > max ? w[i] : max;
	for (int64_t i = 0; i < k; i++) {
		w[i] = expf(w[i] - max);
		sum += w[i];
	}
	for (int64_t i = 0; i < k; i++)
		w[i] = (float)(w[i] / sum);
}

static void moe_token(const struct moe_job *j, struct moe_scratch *m, int64_t t)
{
	const gllmk_moe_route_params *p = j->p;
	const float *bias = j->bias ? gllmk_tensor_host(j->bias) : NULL;
	int32_t *ids = cpu_row(j->ids, t);
	float *w = cpu_row(j->weights, t);

	moe_probs(m->probs, cpu_row(j->logits, t), j->e, p->gating);
	for (int64_t i = 0; i < j->e; i++)
		m->sel[i] = m->probs[i] + (bias ? bias[i] : 0.0f);
	if (p->n_group > 1)
		moe_mask_groups(j, m);
	cpu_rank_top(m->cands, m->sel, j->e, j->k);
	for (int64_t i = 0; i < j->k; i++) {
		ids[i] = m->cands[i].idx;
		w[i] = m->probs[m->cands[i].idx];
	}
	if (p->gating == GLLMK_GATING_SOFTMAX_AFTER)
		softmax_small(w, j->k);
	if (p->norm) {
		double sum = 0.0;

		for (int64_t i = 0; i < j->k; i++)
			sum += w[i];
		float inv = 1.0f / fmaxf((float)sum, MOE_NORM_MIN_SUM);

		for (int64_t i = 0; i < j->k; i++)
			w[i] *= inv;
	}
	for (int64_t i = 0; i < j->k; i++)
		w[i] *= p->scale;
}

static void moe_tokens(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct moe_job *j = arg;
	struct moe_scratch m = moe_scratch_of(j, tid);

	for (int64_t t = begin; t < end; t++)
		moe_token(j, &m, t);
}

gllmk_status cpu_moe_route(void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
			   const gllmk_moe_route_params *p)
{
	const struct cpu_state *s = st;
	struct moe_job j = { .ids = ids, .weights = weights, .logits = logits, .bias = bias, .p = p,
			     .e = cpu_row_len(logits), .k = cpu_row_len(ids) };
	int64_t tokens = cpu_rows(logits);
	gllmk_status st_;

	j.per_thread = moe_scratch_bytes(j.e, p->n_group);
	st_ = scratch_alloc(s, "moe_route", j.per_thread, (void **)&j.scratch);
	if (st_ != GLLMK_OK)
		return st_;
	cpu_pool_run(s->pool, tokens, cpu_row_grain(tokens, 8 * j.e), moe_tokens, &j);
	free(j.scratch);
	return GLLMK_OK;
}
