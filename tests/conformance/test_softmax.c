/* softmax (SPEC/OPERATORS.md "softmax"): scale, additive mask with -inf
 * entries, causal rows (including rows that see nothing), 1-D to 4-D x,
 * magnitudes that overflow exp unless the row max is subtracted, in place.
 * Tolerances: SPEC/TOLERANCES.md "softmax".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf_extra.h"

enum mask_kind {
	MASK_NONE,
	MASK_RANDOM,   /* uniform in [-3, 3], one entry in 10 -inf, row 1 all -inf */
};

struct sm_case {
	int32_t ndim;
	int64_t shape[4];  /* the innermost is N, shape[ndim-2] is R */
	float scale;
	enum mask_kind mask;
	int causal;
	/* Rows at ±3e4 on a grid of 1/8: scale·x + mask is exact in f32, so
	 * any inaccuracy is the algorithm's (overflow without the max). */
	int huge;
	int in_place;
};

struct sm_dims {
	int64_t n, r, mats; /* row length, rows per matrix, matrices */
};

static struct sm_dims dims_of(const struct sm_case *c)
{
	struct sm_dims d = { .n = c->shape[c->ndim - 1], .r = 1, .mats = 1 };

	if (c->ndim >= 2)
		d.r = c->shape[c->ndim - 2];
	for (int i = 0; i < c->ndim - 2; i++)
		d.mats *= c->shape[i];
	return d;
}

static void draw_x(struct conf_rng *rng, const struct sm_case *c, float *x, size_t count, int64_t n)
{
	if (!c->huge) {
		conf_fill_uniform(rng, x, count, -8, 8);
		return;
	}
	for (size_t row = 0; row * (size_t)n < count; row++) {
		double base = (double)(conf_rng_int(rng, 0, 2) - 1) * 3e4;

		for (int64_t j = 0; j < n; j++)
			x[row * (size_t)n + (size_t)j] = (float)(base + (double)conf_rng_int(rng, -512, 512) / 8);
	}
}

static void draw_mask(struct conf_rng *rng, float *m, const struct sm_dims *d)
{
	for (int64_t i = 0; i < d->r; i++) {
		for (int64_t j = 0; j < d->n; j++) {
			float v = (float)conf_rng_int(rng, -24, 24) / 8;

			if (conf_rng_int(rng, 0, 9) == 0 || (i == 1 && d->r > 2))
				v = -INFINITY;
			m[i * d->n + j] = v;
		}
	}
}

/* One row: z_j = scale·x_j + mask_j, causal columns past `last` excluded. */
static void reference_row(const struct sm_case *c, const float *x, const float *mask, int64_t n, int64_t last,
			  double *want, double *tol)
{
	double zmax = -INFINITY, sum = 0, err_max = 0, rt = conf_reduce_tol(n);

	for (int64_t j = 0; j < n; j++) {
		double z = (double)c->scale * x[j] + (mask ? mask[j] : 0);

		want[j] = j > last ? -INFINITY : z;
		if (want[j] > zmax)
			zmax = want[j];
		/* f32 rounding of scale·x and of + mask moves the exponent. */
		tol[j] = c->huge || isinf(z) ? 0 : 0x1p-23 * (fabs((double)c->scale * x[j]) + fabs(z));
		if (want[j] > -INFINITY && tol[j] > err_max)
			err_max = tol[j];
	}
	if (zmax == -INFINITY) { /* nothing visible: all zeros */
		for (int64_t j = 0; j < n; j++)
			want[j] = tol[j] = 0;
		return;
	}
	for (int64_t j = 0; j < n; j++) {
		want[j] = exp(want[j] - zmax);
		sum += want[j];
	}
	for (int64_t j = 0; j < n; j++) {
		want[j] /= sum;
		/* 1e-30: subnormal probabilities may flush to zero. */
		tol[j] = 1e-30 + want[j] * (CONF_TOL_TRANSC + rt + tol[j] + err_max + 0x1p-23 * fabs(zmax) * !c->huge);
	}
}

static void softmax_reference(const struct sm_case *c, const float *x, const float *mask, double *want,
			      double *tol)
{
	struct sm_dims d = dims_of(c);

	for (int64_t m = 0; m < d.mats; m++) {
		for (int64_t i = 0; i < d.r; i++) {
			size_t at = (size_t)((m * d.r + i) * d.n);
			int64_t last = c->causal ? i + (d.n - d.r) : d.n - 1;

			reference_row(c, x + at, mask ? mask + i * d.n : NULL, d.n, last, want + at, tol + at);
		}
	}
}

static void softmax_case(struct conf_rng *rng, const struct sm_case *c)
{
	struct sm_dims d = dims_of(c);
	size_t count = conf_numel(c->ndim, c->shape);
	float *x = conf_xmalloc(count * sizeof(float)), *got = conf_xmalloc(count * sizeof(float));
	float *mask = c->mask ? conf_xmalloc((size_t)(d.r * d.n) * sizeof(float)) : NULL;
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	gllmk_softmax_params p = { .scale = c->scale, .causal = c->causal };
	struct conf_tensor tx, ty = { 0 }, tm = { 0 };
	const struct conf_tensor *out;
	char what[128], dims[48];

	draw_x(rng, c, x, count, d.n);
	if (mask) {
		draw_mask(rng, mask, &d);
		tm = conf_upload(GLLMK_F32, 2, (int64_t[]){ d.r, d.n }, mask);
	}
	tx = conf_upload(GLLMK_F32, c->ndim, c->shape, x);
	if (c->in_place) {
		out = &tx;
	} else {
		ty = conf_output(GLLMK_F32, c->ndim, c->shape);
		out = &ty;
	}
	conf_ok(gllmk_softmax(conf.ctx, &out->t, &tx.t, mask ? &tm.t : NULL, &p));
	conf_download(out, got);
	softmax_reference(c, x, mask, want, tol);
	snprintf(what, sizeof(what), "softmax %s scale=%g%s%s%s%s",
		 conf_shape_str(dims, sizeof(dims), c->ndim, c->shape),
		 c->scale, mask ? " mask" : "", c->causal ? " causal" : "", c->huge ? " |x|~3e4" : "",
		 c->in_place ? " in place" : "");
	conf_check_within(what, got, want, tol, count);
	conf_free(&tx);
	conf_free(&ty);
	conf_free(&tm);
	free(x);
	free(got);
	free(mask);
	free(want);
	free(tol);
}

static void test_softmax(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("softmax");
	conf_rng_init(&rng, "softmax");
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l];
		const struct sm_case cases[] = {
			{ 1, { n }, 1.0f, MASK_NONE, 0, 0, 0 },
			{ 1, { n }, 0.125f, MASK_RANDOM, 1, 0, 0 },
			{ 2, { 3, n }, 0.3f, MASK_RANDOM, 0, 0, 0 },
			{ 2, { 2, n }, 1.0f, MASK_NONE, 0, 1, 0 },
			{ 2, { 3, n }, 1.0f, MASK_NONE, 0, 0, 1 },
			/* more than 8 MiB (streaming stores) at 4097 columns (rows that
			 * fit a buffer) and at the longest length (rows that do not) */
			{ 2, { n == 4097 ? 520 : 9, n }, 0.5f, MASK_RANDOM, 1, 0, 0 },
			/* Below: at most 4097 columns, to keep the run short. */
			{ 3, { 2, 3, n }, -0.5f, MASK_RANDOM, 1, 0, 0 },
			{ 2, { 5, n }, 1.0f, MASK_NONE, 1, 0, 0 },   /* R > N: rows that see nothing */
			{ 2, { 4, n }, 0.5f, MASK_RANDOM, 0, 1, 0 },
			{ 4, { 2, 1, 3, n }, 2.0f, MASK_RANDOM, 1, 0, 0 },
			{ 2, { n < 64 ? n : 64, n }, 1.0f, MASK_NONE, 1, 0, 0 }, /* square causal */
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			if (n > 4097 && i >= 6)
				break;
			softmax_case(&rng, &cases[i]);
		}
	}
	conf_covered("softmax");
}

CONF_GROUP(softmax) = {
	cmocka_unit_test(test_softmax),
};
CONF_GROUP_END(softmax);
