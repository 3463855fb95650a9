/* softmax over the innermost dim: y = softmax(scale·x + mask), stable.
 *
 * With causal, row i of each [R, N] matrix sees the prefix of columns
 * j <= i + (N - R); the rest are -inf, so they come out as exact zeros and
 * are never computed. A row with nothing visible (all -inf) is all zeros.
 *
 * Each row is three passes of the ISA's kernels (max; exp and sum; scale),
 * one after the other on the same thread, so that a row read from memory
 * by the first stays in the cache for the other two.
 */
#include <math.h>

#include "cpu_plugin.h"
#include "cpu_rows.h"

struct softmax_job {
	const struct cpu_kernels *k;
	const gllmk_tensor *y, *x, *mask;
	int64_t n, r_dim;       /* row length; R, rows per [R, N] matrix */
	float scale;
	int causal;
};

static void zero_row(float *y, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		y[j] = 0.0f;
}

static void softmax_row(const struct softmax_job *j, int64_t r)
{
	int64_t i = r % j->r_dim, n = j->n, seen = n;
	float *y = cpu_row(j->y, r);
	const float *x = cpu_row(j->x, r);
	const float *m = NULL;

	if (j->mask)
		m = (const float *)((const char *)gllmk_tensor_host(j->mask) +
				    (j->mask->ndim > 1 ? i * j->mask->stride[0] : 0));
	if (j->causal) {
		seen = i + (n - j->r_dim) + 1;
		seen = seen < 0 ? 0 : seen > n ? n : seen;
	}

	float max = seen ? j->k->softmax_max_row(x, m, j->scale, seen) : -INFINITY;

	if (max == -INFINITY) {
		zero_row(y, n);
		return;
	}
	double sum = j->k->softmax_exp_row(y, x, m, j->scale, max, seen);

	j->k->scale_row(y, y, (float)(1.0 / sum), seen);
	zero_row(y + seen, n - seen);
}

static void softmax_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	(void)tid;
	for (int64_t r = begin; r < end; r++)
		softmax_row(arg, r);
}

gllmk_status cpu_softmax(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p)
{
	const struct cpu_state *s = st;
	struct softmax_job j = {
		.k = s->k,
		.y = y,
		.x = x,
		.mask = mask,
		.n = cpu_row_len(x),
		.r_dim = x->ndim > 1 ? x->shape[x->ndim - 2] : 1,
		.scale = p ? p->scale : 1.0f,
		.causal = p ? p->causal : 0,
	};
	int64_t rows = cpu_rows(x);

	cpu_pool_run(s->pool, rows, cpu_row_grain(rows, j.n), softmax_rows, &j);
	return GLLMK_OK;
}
