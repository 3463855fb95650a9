/* Elementwise ops (SPEC/OPERATORS.md "Elementwise"): add and mul with every
 * broadcast form, scale, the unary activations and swiglu, each against a
 * double-precision reference. Tolerances: SPEC/TOLERANCES.md "Elementwise".
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

/* The f32 result of an exact value: finite values as they are (checked with
 * a tolerance), values past FLT_MAX as the infinity f32 rounds them to. */
static double f32_range(double v)
{
	return isinf((float)v) ? (double)(float)v : v;
}

/* ------------------------------------------------------------- unary */

typedef gllmk_status (*unary_fn)(gllmk_context *, const gllmk_tensor *, const gllmk_tensor *);

struct unary_op {
	const char *name;
	unary_fn fn;
	double (*ref)(double x);
	double lo, hi;  /* random inputs */
	/* tol = floor + per_x·|x| + rtol·|want| */
	double floor, per_x, rtol;
};

static double ref_silu(double x)
{
	return x / (1 + exp(-x));
}

static double ref_gelu_tanh(double x)
{
	return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double ref_gelu_erf(double x)
{
	return 0.5 * x * (1 + erf(x / sqrt(2)));
}

static double ref_relu(double x)
{
	return x > 0 ? x : 0;
}

static const struct unary_op unary_ops[] = {
	/* 1e-30: a backend may flush subnormal results to zero. */
	{ "silu", gllmk_silu, ref_silu, -20, 20, 1e-30, 0, CONF_TOL_TRANSC },
	/* per_x 2^-22: 0.5x(1 + tanh/erf) cancels for x < 0, leaving two
	 * ulps of 1 scaled by x. */
	{ "gelu_tanh", gllmk_gelu_tanh, ref_gelu_tanh, -10, 10, 1e-30, 0x1p-22, CONF_TOL_TRANSC },
	{ "gelu_erf", gllmk_gelu_erf, ref_gelu_erf, -10, 10, 1e-30, 0x1p-22, CONF_TOL_TRANSC },
	{ "relu", gllmk_relu, ref_relu, -10, 10, 0, 0, 0 },
	/* 2^-22: tanh formed from exp cancels near 0 (two ulps of 1). */
	{ "tanh", gllmk_tanh, tanh, -10, 10, 0x1p-22, 0, CONF_TOL_TRANSC },
	{ "exp", gllmk_exp, exp, -20, 20, 1e-30, 0, CONF_TOL_TRANSC },
};

/* Beyond the random range: zeros, tiny and huge inputs, exp's overflow. */
static const float unary_specials[] = {
	0.0f, -0.0f, 1.0f, -1.0f, 1e-8f, -1e-8f, 0.5f, -0.5f, 3.0f, -3.0f,
	30.0f, -30.0f, 80.0f, -80.0f, 89.0f, -100.0f, 100.0f, 1e30f, -1e30f,
};

static void unary_reference(const struct unary_op *op, const float *x, double *want, double *tol, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		want[i] = f32_range(op->ref(x[i]));
		tol[i] = op->floor + op->per_x * fabs(x[i]) + op->rtol * fabs(want[i]);
	}
}

/* One call of op on x of `shape`, out of place or in place (y = x). */
static void unary_case(const struct unary_op *op, const float *x, int32_t ndim, const int64_t *shape,
		       int in_place)
{
	size_t n = conf_numel(ndim, shape);
	double *want = conf_xmalloc(n * sizeof(double)), *tol = conf_xmalloc(n * sizeof(double));
	float *got = conf_xmalloc(n * sizeof(float));
	struct conf_tensor tx = conf_upload(GLLMK_F32, ndim, shape, x);
	struct conf_tensor ty = { 0 };
	char what[96], dims[48];

	snprintf(what, sizeof(what), "%s %s%s", op->name, conf_shape_str(dims, sizeof(dims), ndim, shape),
		 in_place ? " in place" : "");
	if (!in_place)
		ty = conf_output(GLLMK_F32, ndim, shape);
	conf_ok(op->fn(conf.ctx, in_place ? &tx.t : &ty.t, &tx.t));
	conf_download(in_place ? &tx : &ty, got);
	unary_reference(op, x, want, tol, n);
	conf_check_within(what, got, want, tol, n);
	conf_free(&tx);
	conf_free(&ty);
	free(want);
	free(tol);
	free(got);
}

static void run_unary(const struct unary_op *op)
{
	struct conf_rng rng;
	float *x;

	conf_begin(op->name);
	conf_rng_init(&rng, op->name);
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l];
		int64_t s1[] = { n }, s3[] = { 2, 3, n }, s9[] = { 9, n };

		x = conf_xmalloc(9 * (size_t)n * sizeof(float));
		conf_fill_uniform(&rng, x, 9 * (size_t)n, op->lo, op->hi);
		unary_case(op, x, 1, s1, 0);
		unary_case(op, x, 1, s1, 1);
		if (n <= 4097) { /* past the L2, one row is enough */
			unary_case(op, x, 3, s3, 0);
			unary_case(op, x, 3, s3, 1);
		} else { /* more than 8 MiB: the streaming kernels */
			unary_case(op, x, 2, s9, 0);
		}
		free(x);
	}
	unary_case(op, unary_specials, 1,
		   (int64_t[]){ sizeof(unary_specials) / sizeof(unary_specials[0]) }, 0);
	conf_covered(op->name);
}

#define UNARY_TEST(i, name)                                             \
	static void test_##name(void **state)                           \
	{                                                               \
		(void)state;                                            \
		run_unary(&unary_ops[i]);                               \
	}
UNARY_TEST(0, silu)
UNARY_TEST(1, gelu_tanh)
UNARY_TEST(2, gelu_erf)
UNARY_TEST(3, relu)
UNARY_TEST(4, tanh)
UNARY_TEST(5, exp)

/* ------------------------------------------------------ add and mul */

typedef gllmk_status (*binary_fn)(gllmk_context *, const gllmk_tensor *, const gllmk_tensor *,
				  const gllmk_tensor *);

struct binary_op {
	const char *name;
	binary_fn fn;
	int is_mul;
};

/* a's shape and b's, with n standing for the row length. y is a's shape. */
struct bcast_form {
	int32_t a_ndim, b_ndim;
	int64_t a[4], b[4];    /* -1 is n */
	int in_place;          /* 0, 'a' or 'b' */
};

#define N (-1)
static const struct bcast_form bcast_forms[] = {
	{ 1, 1, { N }, { N }, 0 },
	{ 2, 1, { 3, N }, { N }, 0 },              /* b with fewer dims */
	{ 2, 2, { 3, N }, { 1, N }, 0 },
	{ 2, 2, { 3, N }, { 3, 1 }, 0 },           /* one value per row */
	{ 2, 1, { 3, N }, { 1 }, 0 },              /* a scalar */
	{ 3, 2, { 2, 3, N }, { 3, 1 }, 0 },
	{ 4, 4, { 2, 3, 2, N }, { 2, 1, 2, 1 }, 0 },
	{ 4, 4, { 2, 3, 2, N }, { 1, 3, 1, N }, 0 },
	{ 4, 3, { 3, 2, 3, N }, { 2, 3, N }, 0 },
	{ 3, 3, { 2, 3, N }, { 2, 3, N }, 'a' },
	{ 3, 3, { 2, 3, N }, { 2, 3, N }, 'b' },
	{ 3, 2, { 2, 3, N }, { 1, N }, 'a' },
	/* 9 rows: at the longest length more than 8 MiB of output, so the
	 * streaming-store kernels run (cpu_view.h's CPU_STREAM_MIN_BYTES) */
	{ 2, 2, { 9, N }, { 9, N }, 0 },
	{ 2, 2, { 9, N }, { 1, N }, 0 },
	{ 2, 2, { 9, N }, { 9, 1 }, 0 },
};
#undef N

/* Resolves n in a form's shape. */
static void form_shape(int32_t ndim, const int64_t *f, int64_t n, int64_t *out)
{
	for (int d = 0; d < ndim; d++)
		out[d] = f[d] < 0 ? n : f[d];
}

/* b's flat index for a's flat index i: numpy broadcasting, right-aligned. */
static size_t bcast_index(size_t i, int32_t an, const int64_t *as, int32_t bn, const int64_t *bs)
{
	size_t bi = 0, bstride = 1;

	for (int d = an - 1, e = bn - 1; d >= 0; d--, e--) {
		size_t idx = i % (size_t)as[d];

		i /= (size_t)as[d];
		if (e < 0)
			continue;
		if (bs[e] != 1)
			bi += idx * bstride;
		bstride *= (size_t)bs[e];
	}
	return bi;
}

static void binary_case(const struct binary_op *op, struct conf_rng *rng, const struct bcast_form *f,
			int64_t n)
{
	int64_t as[4], bs[4];
	size_t na, nb;
	float *a, *b, *got;
	double *want;
	struct conf_tensor ta, tb, ty = { 0 };
	const struct conf_tensor *out;
	char what[128], da[48], db[48];

	form_shape(f->a_ndim, f->a, n, as);
	form_shape(f->b_ndim, f->b, n, bs);
	na = conf_numel(f->a_ndim, as);
	nb = conf_numel(f->b_ndim, bs);
	a = conf_xmalloc(na * sizeof(float));
	b = conf_xmalloc(nb * sizeof(float));
	got = conf_xmalloc(na * sizeof(float));
	want = conf_xmalloc(na * sizeof(double));
	conf_fill_uniform(rng, a, na, -10, 10);
	conf_fill_uniform(rng, b, nb, -10, 10);
	snprintf(what, sizeof(what), "%s a%s b%s%s%c", op->name, conf_shape_str(da, sizeof(da), f->a_ndim, as),
		 conf_shape_str(db, sizeof(db), f->b_ndim, bs), f->in_place ? " in place on " : "",
		 f->in_place ? f->in_place : ' ');

	ta = conf_upload(GLLMK_F32, f->a_ndim, as, a);
	tb = conf_upload(GLLMK_F32, f->b_ndim, bs, b);
	if (f->in_place == 'a')
		out = &ta;
	else if (f->in_place == 'b')
		out = &tb;
	else {
		ty = conf_output(GLLMK_F32, f->a_ndim, as);
		out = &ty;
	}
	conf_ok(op->fn(conf.ctx, &out->t, &ta.t, &tb.t));
	conf_download(out, got);

	for (size_t i = 0; i < na; i++) {
		double bv = b[bcast_index(i, f->a_ndim, as, f->b_ndim, bs)];

		want[i] = op->is_mul ? (double)a[i] * bv : (double)a[i] + bv;
	}
	conf_check_close(what, got, want, na, 0, CONF_TOL_ROUNDED);
	conf_free(&ta);
	conf_free(&tb);
	conf_free(&ty);
	free(a);
	free(b);
	free(got);
	free(want);
}

static void run_binary(const struct binary_op *op)
{
	struct conf_rng rng;

	conf_begin(op->name);
	conf_rng_init(&rng, op->name);
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		for (size_t f = 0; f < sizeof(bcast_forms) / sizeof(bcast_forms[0]); f++) {
			/* Past 4097, the forms of at most 3 rows keep the run short. */
			if (conf_lengths[l] > 4097 && bcast_forms[f].a_ndim > 2)
				continue;
			binary_case(op, &rng, &bcast_forms[f], conf_lengths[l]);
		}
	}
	conf_covered(op->name);
}

static void test_add(void **state)
{
	(void)state;
	run_binary(&(struct binary_op){ "add", gllmk_add, 0 });
}

static void test_mul(void **state)
{
	(void)state;
	run_binary(&(struct binary_op){ "mul", gllmk_mul, 1 });
}

/* ------------------------------------------------------------- scale */

static void scale_case(struct conf_rng *rng, int32_t ndim, const int64_t *shape, float s, int in_place)
{
	size_t n = conf_numel(ndim, shape);
	float *x = conf_xmalloc(n * sizeof(float)), *got = conf_xmalloc(n * sizeof(float));
	double *want = conf_xmalloc(n * sizeof(double));
	struct conf_tensor tx, ty = { 0 };
	char what[96], dims[48];

	conf_fill_uniform(rng, x, n, -10, 10);
	tx = conf_upload(GLLMK_F32, ndim, shape, x);
	if (!in_place)
		ty = conf_output(GLLMK_F32, ndim, shape);
	conf_ok(gllmk_scale(conf.ctx, in_place ? &tx.t : &ty.t, &tx.t, s));
	conf_download(in_place ? &tx : &ty, got);
	for (size_t i = 0; i < n; i++)
		want[i] = (double)x[i] * s;
	snprintf(what, sizeof(what), "scale %s s=%g%s", conf_shape_str(dims, sizeof(dims), ndim, shape), s,
		 in_place ? " in place" : "");
	conf_check_close(what, got, want, n, 0, CONF_TOL_ROUNDED);
	conf_free(&tx);
	conf_free(&ty);
	free(x);
	free(got);
	free(want);
}

static void test_scale(void **state)
{
	static const float scales[] = { 0.5f, -3.25f, 0.0f, 1e-3f, 1.0f };
	struct conf_rng rng;

	(void)state;
	conf_begin("scale");
	conf_rng_init(&rng, "scale");
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l];

		for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++)
			scale_case(&rng, 2, (int64_t[]){ 3, n }, scales[s], 0);
		scale_case(&rng, 3, (int64_t[]){ 2, 3, n }, 1.7f, 1);
		scale_case(&rng, 1, (int64_t[]){ n }, -0.3f, 0);
		if (n > 4097) /* more than 8 MiB: the streaming kernels */
			scale_case(&rng, 2, (int64_t[]){ 9, n }, 0.75f, 0);
	}
	conf_covered("scale");
}

/* ------------------------------------------------------------ swiglu */

/* in_place: 0, 'g' (y = gate) or 'u' (y = up). */
static void swiglu_case(struct conf_rng *rng, int32_t ndim, const int64_t *shape, int in_place)
{
	size_t n = conf_numel(ndim, shape);
	float *g = conf_xmalloc(n * sizeof(float)), *u = conf_xmalloc(n * sizeof(float));
	float *got = conf_xmalloc(n * sizeof(float));
	double *want = conf_xmalloc(n * sizeof(double)), *tol = conf_xmalloc(n * sizeof(double));
	struct conf_tensor tg, tu, ty = { 0 };
	const struct conf_tensor *out;
	char what[96], dims[48];

	conf_fill_uniform(rng, g, n, -20, 20);
	conf_fill_uniform(rng, u, n, -5, 5);
	tg = conf_upload(GLLMK_F32, ndim, shape, g);
	tu = conf_upload(GLLMK_F32, ndim, shape, u);
	if (in_place == 'g')
		out = &tg;
	else if (in_place == 'u')
		out = &tu;
	else {
		ty = conf_output(GLLMK_F32, ndim, shape);
		out = &ty;
	}
	conf_ok(gllmk_swiglu(conf.ctx, &out->t, &tg.t, &tu.t));
	conf_download(out, got);
	for (size_t i = 0; i < n; i++) {
		want[i] = ref_silu(g[i]) * u[i];
		/* silu's tolerance carried through one rounded product. */
		tol[i] = 1e-30 + (CONF_TOL_TRANSC + CONF_TOL_ROUNDED) * fabs(want[i]);
	}
	snprintf(what, sizeof(what), "swiglu %s%s%c", conf_shape_str(dims, sizeof(dims), ndim, shape),
		 in_place ? " in place on " : "", in_place ? in_place : ' ');
	conf_check_within(what, got, want, tol, n);
	conf_free(&tg);
	conf_free(&tu);
	conf_free(&ty);
	free(g);
	free(u);
	free(got);
	free(want);
	free(tol);
}

static void test_swiglu(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("swiglu");
	conf_rng_init(&rng, "swiglu");
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l];

		swiglu_case(&rng, 1, (int64_t[]){ n }, 0);
		swiglu_case(&rng, 2, (int64_t[]){ 3, n }, 0);
		if (n > 4097) /* more than 8 MiB: the streaming kernels */
			swiglu_case(&rng, 2, (int64_t[]){ 9, n }, 0);
		swiglu_case(&rng, 3, (int64_t[]){ 2, 2, n }, 'g');
		swiglu_case(&rng, 4, (int64_t[]){ 1, 2, 1, n }, 'u');
	}
	conf_covered("swiglu");
}

CONF_GROUP(elementwise) = {
	cmocka_unit_test(test_add),
	cmocka_unit_test(test_mul),
	cmocka_unit_test(test_scale),
	cmocka_unit_test(test_silu),
	cmocka_unit_test(test_gelu_tanh),
	cmocka_unit_test(test_gelu_erf),
	cmocka_unit_test(test_relu),
	cmocka_unit_test(test_tanh),
	cmocka_unit_test(test_exp),
	cmocka_unit_test(test_swiglu),
};
CONF_GROUP_END(elementwise);
