/* softmax over the innermost dim: y = softmax(scale·x + mask), stable.
 *
 * With causal, row i of each [R, N] matrix sees the prefix of columns
 * j <= i + (N - R); the rest are -inf, so they come out as exact zeros and
 * are never computed. A row with nothing visible (all -inf) is all zeros.
 */
#include <math.h>

#include "cpu_plugin.h"
#include "cpu_rows.h"

#define PAR_MIN_ELEMS (64 * 1024)
#define PIECE_MIN_ELEMS (16 * 1024)

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

/* y[0, n) = scale·x + mask, returning the max. */
static float scaled_logits(float *y, const float *x, const float *m, float scale, int64_t n)
{
	float max = -INFINITY;

	for (int64_t j = 0; j < n; j++) {
		float v = scale * x[j] + (m ? m[j] : 0.0f);

		y[j] = v;
		max = v > max ? v : max;
	}
	return max;
}

static double shifted_exp_sum(const struct cpu_kernels *k, float *y, float max, int64_t n)
{
	double sum = 0.0;

	for (int64_t j = 0; j < n; j++)
		y[j] -= max;
	k->exp_row(y, y, n);
	for (int64_t j = 0; j < n; j++)
		sum += y[j];
	return sum;
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

	float max = scaled_logits(y, x, m, j->scale, seen);

	if (seen == 0 || max == -INFINITY) {
		zero_row(y, n);
		return;
	}
	double sum = shifted_exp_sum(j->k, y, max, seen);

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
	int64_t grain = PIECE_MIN_ELEMS / j.n > 1 ? PIECE_MIN_ELEMS / j.n : 1;

	if (rows * j.n <= PAR_MIN_ELEMS)
		grain = rows;
	cpu_pool_run(s->pool, rows, grain, softmax_rows, &j);
	return GLLMK_OK;
}
