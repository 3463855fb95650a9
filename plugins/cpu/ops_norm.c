/* rms_norm and layer_norm: the ISA's row kernel on every row, rows spread
 * over the pool when the tensor is big enough to pay for it. */
#include "cpu_plugin.h"
#include "cpu_rows.h"

struct norm_job {
	const struct cpu_kernels *k;
	const gllmk_tensor *y, *x;
	const float *w, *b;     /* NULL: none */
	int64_t n;
	float eps;
	int layer;              /* layer_norm rather than rms_norm */
};

static void norm_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct norm_job *j = arg;

	(void)tid;
	for (int64_t r = begin; r < end; r++) {
		float *y = cpu_row(j->y, r);
		const float *x = cpu_row(j->x, r);

		if (j->layer)
			j->k->layer_norm_row(y, x, j->w, j->b, j->n, j->eps);
		else
			j->k->rms_norm_row(y, x, j->w, j->n, j->eps);
	}
}

static gllmk_status norm_run(const struct cpu_state *s, struct norm_job *j)
{
	int64_t rows = cpu_rows(j->x);

	j->k = s->k;
	j->n = cpu_row_len(j->x);
	cpu_pool_run(s->pool, rows, cpu_row_grain(rows, j->n), norm_rows, j);
	return GLLMK_OK;
}

static const float *host_or_null(gllmk_t t)
{
	return t ? gllmk_tensor_host(t) : NULL;
}

gllmk_status cpu_rms_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps)
{
	struct norm_job j = { .y = y, .x = x, .w = host_or_null(w), .eps = eps };

	return norm_run(st, &j);
}

gllmk_status cpu_layer_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps)
{
	struct norm_job j = { .y = y, .x = x, .w = host_or_null(w), .b = host_or_null(b), .eps = eps,
			      .layer = 1 };

	return norm_run(st, &j);
}
