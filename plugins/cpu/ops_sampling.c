/* argmax and sample, exactly as SPEC/OPERATORS.md ("Sampling") orders it.
 *
 * sample ranks candidates by logit (the same order as z = logit/T for any
 * T > 0), ties to the lower index, NaN last. With top_k only the best k are
 * selected (a heap) and sorted; otherwise the whole row is sorted. The
 * probabilities and the walk are accumulated in double.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_plugin.h"
#include "cpu_rank.h"
#include "cpu_view.h"

#define PAR_MIN_ELEMS (64 * 1024)
#define PIECE_MIN_ELEMS (16 * 1024)

static int32_t argmax_row(const float *x, int64_t n)
{
	int64_t best = -1;

	for (int64_t j = 0; j < n; j++) {
		if (isnan(x[j]))
			continue;
		if (best < 0 || x[j] > x[best])
			best = j;
	}
	return best < 0 ? 0 : (int32_t)best;
}

static int32_t *id_slot(gllmk_t ids, int64_t r)
{
	return (int32_t *)gllmk_tensor_host(ids) + r;
}

/* ------------------------------------------------------------ argmax */

struct argmax_job {
	const gllmk_tensor *ids, *x;
	int64_t n;
};

static void argmax_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct argmax_job *j = arg;

	(void)tid;
	for (int64_t r = begin; r < end; r++)
		*id_slot(j->ids, r) = argmax_row(cpu_row(j->x, r), j->n);
}

static int64_t grain_for(int64_t rows, int64_t n)
{
	if (rows * n <= PAR_MIN_ELEMS)
		return rows;
	return PIECE_MIN_ELEMS / n > 1 ? PIECE_MIN_ELEMS / n : 1;
}

gllmk_status cpu_argmax(void *st, gllmk_t ids, gllmk_t x)
{
	const struct cpu_state *s = st;
	struct argmax_job j = { .ids = ids, .x = x, .n = cpu_row_len(x) };
	int64_t rows = cpu_rows(x);

	cpu_pool_run(s->pool, rows, grain_for(rows, j.n), argmax_rows, &j);
	return GLLMK_OK;
}

/* ------------------------------------------------------------ sample */

/* The candidate order and cpu_rank_top: cpu_rank.h (shared with top_k and
 * moe_route, ops_routing.c). */

struct sample_job {
	const gllmk_tensor *ids, *logits;
	const float *uniform;
	const gllmk_sample_params *p;
	int64_t n;
	struct cpu_cand *cands;     /* n per thread */
	double *probs;          /* n per thread */
};

static int32_t sample_row(const struct sample_job *j, const float *x, float u, struct cpu_cand *c, double *p)
{
	const gllmk_sample_params *sp = j->p;
	int64_t n = j->n, kept = sp->top_k > 0 && sp->top_k < n ? sp->top_k : n;
	double inv_t = 1.0 / (double)sp->temperature, sum = 0.0, total = 0.0, acc = 0.0;

	cpu_rank_top(c, x, n, kept);
	double z_max = (double)c[0].logit * inv_t;

	if (!isfinite(z_max))
		return c[0].idx; /* no finite best: nothing to weigh */
	for (int64_t i = 0; i < kept; i++) {
		double z = (double)c[i].logit * inv_t;

		p[i] = isnan(z) ? 0.0 : exp(z - z_max);
		sum += p[i];
	}
	for (int64_t i = 0; i < kept; i++)
		p[i] /= sum;
	if (sp->top_p < 1.0f) {
		double cum = 0.0;

		for (int64_t i = 0; i < kept; i++) {
			cum += p[i];
			if (cum >= (double)sp->top_p) {
				kept = i + 1;
				break;
			}
		}
		for (int64_t i = 0; i < kept; i++)
			total += p[i];
		for (int64_t i = 0; i < kept; i++)
			p[i] /= total;
	}
	total = 0.0;
	for (int64_t i = 0; i < kept; i++)
		total += p[i];

	double target = (double)u * total;

	for (int64_t i = 0; i < kept; i++) {
		acc += p[i];
		if (acc > target)
			return c[i].idx;
	}
	return c[kept - 1].idx;
}

static void sample_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct sample_job *j = arg;
	struct cpu_cand *c = j->cands + (int64_t)tid * j->n;
	double *p = j->probs + (int64_t)tid * j->n;

	for (int64_t r = begin; r < end; r++) {
		const float *x = cpu_row(j->logits, r);

		*id_slot(j->ids, r) = sample_row(j, x, j->uniform[r], c, p);
	}
}

gllmk_status cpu_sample(void *st, gllmk_t ids, gllmk_t logits, const float *uniform, const gllmk_sample_params *p)
{
	const struct cpu_state *s = st;
	struct sample_job j = { .ids = ids, .logits = logits, .uniform = uniform, .p = p,
				.n = cpu_row_len(logits) };
	int64_t rows = cpu_rows(logits);
	size_t per_thread = (size_t)j.n * (size_t)s->n_threads;

	if (p->temperature <= 0.0f)
		return cpu_argmax(st, ids, logits);
	j.cands = malloc(per_thread * sizeof(*j.cands));
	j.probs = malloc(per_thread * sizeof(*j.probs));
	if (!j.cands || !j.probs) {
		free(j.cands);
		free(j.probs);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s sample: no memory to rank %lld candidates",
					  s->k->isa, (long long)j.n);
	}
	/* Every row sorts: worth threading as soon as there are a few rows. */
	cpu_pool_run(s->pool, rows, rows * j.n <= PIECE_MIN_ELEMS ? rows : 1, sample_rows, &j);
	free(j.cands);
	free(j.probs);
	return GLLMK_OK;
}
