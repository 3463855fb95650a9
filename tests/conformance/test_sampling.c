/* argmax and sample (SPEC/OPERATORS.md "Sampling").
 *
 * argmax is exact: ties to the lowest index, NaN never chosen unless the row
 * is all NaN (then 0).
 *
 * sample follows the SPEC's procedure in double. A plugin works in f32, so
 * its cumulative sums differ from the reference's by rounding; its token is
 * accepted when u·total falls within `tol` of that token's cumulative
 * interval in the reference (and, for top-p, for any prefix length whose
 * mass is within `tol` of top_p). Every other token fails. Tolerances:
 * SPEC/TOLERANCES.md "Sampling".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

/* ------------------------------------------------------------- argmax */

static int32_t ref_argmax(const float *x, int64_t n)
{
	int32_t best = -1;

	for (int64_t j = 0; j < n; j++)
		if (!isnan(x[j]) && (best < 0 || x[j] > x[best]))
			best = (int32_t)j;
	return best < 0 ? 0 : best;
}

enum row_kind {
	ROW_RANDOM,
	ROW_TIES,      /* the maximum repeated, the first copy somewhere inside */
	ROW_NAN,       /* NaNs sprinkled, one at index 0 and one above the max */
	ROW_ALL_NAN,
	ROW_NEG_INF,   /* every entry -inf */
	ROW_MAX_LAST,  /* the maximum in the last column */
};

static void draw_argmax_row(struct conf_rng *rng, float *x, int64_t n, enum row_kind kind)
{
	int64_t at = conf_rng_int(rng, 0, n - 1);

	conf_fill_uniform(rng, x, (size_t)n, -100, 100);
	switch (kind) {
	case ROW_TIES:
		x[at] = 1000;
		for (int64_t j = at; j < n; j += 1 + conf_rng_int(rng, 0, 5))
			x[j] = 1000;
		break;
	case ROW_NAN:
		for (int64_t j = 0; j < n; j += 1 + conf_rng_int(rng, 0, 3))
			x[j] = NAN;
		if (n > 1)
			x[n - 1] = 500; /* the max, after NaNs */
		break;
	case ROW_ALL_NAN:
		for (int64_t j = 0; j < n; j++)
			x[j] = NAN;
		break;
	case ROW_NEG_INF:
		for (int64_t j = 0; j < n; j++)
			x[j] = -INFINITY;
		break;
	case ROW_MAX_LAST:
		x[n - 1] = 1000;
		break;
	case ROW_RANDOM:
		break;
	}
}

static void argmax_case(struct conf_rng *rng, int64_t r, int64_t n, int one_d)
{
	size_t count = (size_t)(r * n);
	float *x = conf_xmalloc(count * sizeof(float));
	int32_t *want = conf_xmalloc((size_t)r * sizeof(int32_t)), *got = conf_xmalloc((size_t)r * sizeof(int32_t));
	struct conf_tensor tx, tids;
	char what[64];

	for (int64_t i = 0; i < r; i++) {
		draw_argmax_row(rng, x + i * n, n, (enum row_kind)(i % 6));
		want[i] = ref_argmax(x + i * n, n);
	}
	tx = one_d ? conf_upload(GLLMK_F32, 1, &n, x) : conf_upload(GLLMK_F32, 2, (int64_t[]){ r, n }, x);
	tids = conf_output(GLLMK_I32, 1, &r);
	conf_ok(gllmk_argmax(conf.ctx, &tids.t, &tx.t));
	conf_download(&tids, got);
	snprintf(what, sizeof(what), "argmax [%lld,%lld]%s", (long long)r, (long long)n, one_d ? " as 1-D" : "");
	conf_check_equal_i32(what, got, want, (size_t)r);
	conf_free(&tx);
	conf_free(&tids);
	free(x);
	free(want);
	free(got);
}

static void test_argmax(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("argmax");
	conf_rng_init(&rng, "argmax");
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l];

		argmax_case(&rng, 12, n, 0);
		argmax_case(&rng, 1, n, 1);
		argmax_case(&rng, 1, n, 0);
	}
	conf_covered("argmax");
}

/* ------------------------------------------------------------- sample */

struct cand {
	int32_t idx;
	double z;
};

static int by_z_then_index(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->z != y->z)
		return x->z > y->z ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* What the reference knows about one row after steps 1-4: candidates in
 * order, the kept count and the cumulative mass through each of them. */
struct sample_ref {
	struct cand *c;
	double *cum;   /* cum[k]: mass of c[0..k] */
	int64_t kept;
};

static void sample_prepare(const float *logits, int64_t n, const gllmk_sample_params *p, struct sample_ref *s)
{
	double zmax, sum = 0;

	for (int64_t j = 0; j < n; j++)
		s->c[j] = (struct cand){ (int32_t)j, (double)logits[j] / p->temperature };
	qsort(s->c, (size_t)n, sizeof(*s->c), by_z_then_index);
	s->kept = p->top_k > 0 && p->top_k < n ? p->top_k : n;
	zmax = s->c[0].z;
	for (int64_t k = 0; k < s->kept; k++) {
		sum += exp(s->c[k].z - zmax);
		s->cum[k] = sum;
	}
	for (int64_t k = 0; k < s->kept; k++)
		s->cum[k] /= sum;
}

/* Is `got` the token of step 6 for some prefix of length len in [lo, hi],
 * within tol of its cumulative interval? */
static int sample_accepts(const struct sample_ref *s, int64_t lo, int64_t hi, double u, int32_t got,
			  double tol)
{
	int64_t k;

	for (k = 0; k < s->kept && s->c[k].idx != got; k++)
		;
	for (int64_t len = lo; len <= hi; len++) {
		double total = s->cum[len - 1], target = u * total;
		double before = k ? s->cum[k - 1] : 0;

		if (k < len && before <= target + tol && (s->cum[k] >= target - tol || k == len - 1))
			return 1;
	}
	return 0;
}

/* The prefix lengths step 5 may keep: the shortest whose mass reaches
 * top_p, give or take tol. */
static void top_p_range(const struct sample_ref *s, float top_p, double tol, int64_t *lo, int64_t *hi)
{
	*lo = *hi = s->kept;
	if (!(top_p < 1))
		return;
	for (int64_t k = s->kept; k-- > 0;) {
		if (s->cum[k] >= top_p - tol)
			*lo = k + 1;
		if (s->cum[k] >= top_p + tol)
			*hi = k + 1;
	}
}

struct sample_io {
	int64_t r, n;
	float *logits, *u;
	int32_t *got;
};

static void check_sample_row(const struct sample_io *io, int64_t row, const gllmk_sample_params *p,
			     struct sample_ref *s, const char *what)
{
	const float *logits = io->logits + row * io->n;
	int32_t got = io->got[row];
	double tol = 2 * CONF_TOL_TRANSC + conf_reduce_tol(io->n);
	int64_t lo, hi;

	if (p->temperature <= 0) {
		if (got != ref_argmax(logits, io->n))
			conf_fail("%s row %lld: got token %d, want the argmax %d", what, (long long)row, got,
				  ref_argmax(logits, io->n));
		return;
	}
	if (got < 0 || got >= io->n)
		conf_fail("%s row %lld: token %d is not in [0, %lld)", what, (long long)row, got,
			  (long long)io->n);
	sample_prepare(logits, io->n, p, s);
	top_p_range(s, p->top_p, tol, &lo, &hi);
	if (!sample_accepts(s, lo, hi, io->u[row], got, tol)) {
		int64_t k;

		for (k = 0; k < io->n && s->c[k].idx != got; k++)
			;
		conf_fail("%s row %lld: u = %.9g, got token %d (rank %lld, cumulative interval [%.9g, %.9g]), "
			  "kept %lld, top-p prefix %lld..%lld",
			  what, (long long)row, (double)io->u[row], got, (long long)k,
			  k && k - 1 < s->kept ? s->cum[k - 1] : 0.0, k < s->kept ? s->cum[k] : NAN,
			  (long long)s->kept, (long long)lo, (long long)hi);
	}
}

/* Distinct logits on a grid spread over [-8, 8], shuffled; with `ties`,
 * some values copied to other places, the top one among them. */
static void draw_logits(struct conf_rng *rng, float *x, int64_t n, int ties)
{
	double step = n > 1 ? 16.0 / (double)n : 1;

	if (step > 0.5)
		step = 0.5;
	for (int64_t j = 0; j < n; j++)
		x[j] = (float)((double)(j - n / 2) * step);
	for (int64_t j = n - 1; j > 0; j--) {
		int64_t k = conf_rng_int(rng, 0, j);
		float t = x[j];

		x[j] = x[k];
		x[k] = t;
	}
	if (!ties || n < 2)
		return;
	for (int64_t c = 0; c < 1 + n / 8; c++) {
		int64_t from = conf_rng_int(rng, 0, n - 1), to = conf_rng_int(rng, 0, n - 1);

		x[to] = x[from];
	}
	x[n - 1] = x[ref_argmax(x, n)];
}

/* Row 0 draws u = 0, row 1 just above it, row 2 the largest float below 1,
 * the others at random. */
static void draw_uniforms(struct conf_rng *rng, float *u, int64_t r)
{
	for (int64_t i = 0; i < r; i++)
		u[i] = (float)conf_rng_uniform(rng, 0, 1);
	u[0] = 0.0f;
	if (r > 1)
		u[1] = 1e-7f;
	if (r > 2)
		u[2] = nextafterf(1.0f, 0.0f);
}

static void sample_case(struct conf_rng *rng, int64_t r, int64_t n, const gllmk_sample_params *p, int ties)
{
	struct sample_io io = { .r = r, .n = n };
	struct sample_ref s;
	struct conf_tensor tl, tids;
	char what[128];

	io.logits = conf_xmalloc((size_t)(r * n) * sizeof(float));
	io.u = conf_xmalloc((size_t)r * sizeof(float));
	io.got = conf_xmalloc((size_t)r * sizeof(int32_t));
	s.c = conf_xmalloc((size_t)n * sizeof(*s.c));
	s.cum = conf_xmalloc((size_t)n * sizeof(double));
	for (int64_t i = 0; i < r; i++)
		draw_logits(rng, io.logits + i * n, n, ties);
	draw_uniforms(rng, io.u, r);
	tl = conf_upload(GLLMK_F32, 2, (int64_t[]){ r, n }, io.logits);
	tids = conf_output(GLLMK_I32, 1, &r);
	conf_ok(gllmk_sample(conf.ctx, &tids.t, &tl.t, io.u, p));
	conf_download(&tids, io.got);
	snprintf(what, sizeof(what), "sample [%lld,%lld] T=%g top_k=%d top_p=%g%s", (long long)r, (long long)n,
		 p->temperature, p->top_k, p->top_p, ties ? " ties" : "");
	for (int64_t i = 0; i < r; i++)
		check_sample_row(&io, i, p, &s, what);
	conf_free(&tl);
	conf_free(&tids);
	free(io.logits);
	free(io.u);
	free(io.got);
	free(s.c);
	free(s.cum);
}

static void test_sample(void **state)
{
	static const gllmk_sample_params params[] = {
		{ .temperature = 0.0f, .top_k = 0, .top_p = 1.0f },     /* argmax */
		{ .temperature = -1.0f, .top_k = 40, .top_p = 0.5f },   /* argmax */
		{ .temperature = 1.0f, .top_k = 1, .top_p = 1.0f },     /* the top candidate */
		{ .temperature = 0.7f, .top_k = 0, .top_p = 1.0f },
		{ .temperature = 1.0f, .top_k = 5, .top_p = 1.0f },     /* top-k only */
		{ .temperature = 1.3f, .top_k = 0, .top_p = 0.9f },     /* top-p only */
		{ .temperature = 0.8f, .top_k = 20, .top_p = 0.95f },   /* both */
		{ .temperature = 2.0f, .top_k = -1, .top_p = 2.0f },    /* neither limits */
		{ .temperature = 1.0f, .top_k = 1 << 30, .top_p = 1e-3f }, /* top-p keeps one */
		{ .temperature = 0.25f, .top_k = 3, .top_p = 0.3f },
	};
	struct conf_rng rng;

	(void)state;
	conf_begin("sample");
	conf_rng_init(&rng, "sample");
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l], r = n > 4097 ? 1 : n > 33 ? 8 : 32;

		for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			if (n > 4097 && i != 6) /* past the L2: top-k and top-p combined */
				continue;
			sample_case(&rng, r, n, &params[i], 0);
			sample_case(&rng, r, n, &params[i], 1);
		}
	}
	conf_covered("sample");
}

CONF_GROUP(sampling) = {
	cmocka_unit_test(test_argmax),
	cmocka_unit_test(test_sample),
};
CONF_GROUP_END(sampling);
