/* The activations of ABI 1.1 (SPEC/OPERATORS.md "Activations (ABI 1.1)"):
 * sigmoid, clamp, softcap and glu (every act, split and fused, swapped),
 * each against a double-precision reference written here. Inputs come
 * contiguous and as strided views; outputs contiguous, in place and padded.
 * Tolerances: SPEC/TOLERANCES.md "Activations (ABI 1.1)".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

/* How a case lays out its tensors. */
enum layout {
	LAYOUT_PLAIN,    /* contiguous input, fresh output */
	LAYOUT_IN_PLACE, /* y is the input's view */
	LAYOUT_STRIDED,  /* inputs with a lead and padded rows, output padded */
};

static const char *layout_name(enum layout l)
{
	return l == LAYOUT_IN_PLACE ? " in place" : l == LAYOUT_STRIDED ? " strided" : "";
}

static struct conf_tensor upload(enum layout l, int32_t ndim, const int64_t *shape, const float *host)
{
	if (l == LAYOUT_STRIDED)
		return conf_upload_strided(GLLMK_F32, ndim, shape, host, 36, 20);
	return conf_upload(GLLMK_F32, ndim, shape, host);
}

static struct conf_tensor output(enum layout l, int32_t ndim, const int64_t *shape)
{
	if (l == LAYOUT_STRIDED)
		return conf_output_padded(GLLMK_F32, ndim, shape, 12);
	return conf_output(GLLMK_F32, ndim, shape);
}

/* ------------------------------------------------------------- unary */

/* One op with its scalars: y = ref(x) within tol(x, want). */
struct act_op {
	const char *name;
	double lo, hi; /* random inputs */
	float a, b;    /* clamp's lo and hi, softcap's c */
	gllmk_status (*call)(const struct act_op *op, const gllmk_tensor *y, const gllmk_tensor *x);
	double (*ref)(const struct act_op *op, double x);
	double (*tol)(const struct act_op *op, double x, double want);
};

static gllmk_status call_sigmoid(const struct act_op *op, const gllmk_tensor *y, const gllmk_tensor *x)
{
	(void)op;
	return gllmk_sigmoid(conf.ctx, y, x);
}

static gllmk_status call_clamp(const struct act_op *op, const gllmk_tensor *y, const gllmk_tensor *x)
{
	return gllmk_clamp(conf.ctx, y, x, op->a, op->b);
}

static gllmk_status call_softcap(const struct act_op *op, const gllmk_tensor *y, const gllmk_tensor *x)
{
	return gllmk_softcap(conf.ctx, y, x, op->a);
}

static double ref_sigmoid(const struct act_op *op, double x)
{
	(void)op;
	return 1 / (1 + exp(-x));
}

static double ref_clamp(const struct act_op *op, double x)
{
	return x < op->a ? op->a : x > op->b ? op->b : x;
}

static double ref_softcap(const struct act_op *op, double x)
{
	return op->a * tanh(x / op->a);
}

/* 1e-30: a backend may flush subnormal results to zero. */
static double tol_transc(const struct act_op *op, double x, double want)
{
	(void)op;
	(void)x;
	return 1e-30 + CONF_TOL_TRANSC * fabs(want);
}

static double tol_exact(const struct act_op *op, double x, double want)
{
	(void)op;
	(void)x;
	(void)want;
	return 0;
}

/* tanh formed from exp cancels near 0 (two ulps of 1, scaled by c). */
static double tol_softcap(const struct act_op *op, double x, double want)
{
	(void)x;
	return 0x1p-22 * op->a + CONF_TOL_TRANSC * fabs(want);
}

static const struct act_op act_ops[] = {
	{ "sigmoid", -30, 30, 0, 0, call_sigmoid, ref_sigmoid, tol_transc },
	{ "clamp", -10, 10, -2.5f, 3.0f, call_clamp, ref_clamp, tol_exact },
	{ "clamp", -10, 10, 0.0f, 0.0f, call_clamp, ref_clamp, tol_exact },      /* lo == hi */
	{ "clamp", -10, 10, -INFINITY, 1.0f, call_clamp, ref_clamp, tol_exact }, /* one side open */
	{ "softcap", -100, 100, 30.0f, 0, call_softcap, ref_softcap, tol_softcap }, /* Gemma 2's final */
	{ "softcap", -200, 200, 50.0f, 0, call_softcap, ref_softcap, tol_softcap }, /* and attention */
	{ "softcap", -3, 3, 0.125f, 0, call_softcap, ref_softcap, tol_softcap },
};

/* Beyond the random range: zeros, tiny and huge inputs, infinities. */
static const float act_specials[] = {
	0.0f, -0.0f, 1.0f, -1.0f, 1e-8f, -1e-8f, 0.5f, -0.5f, 3.0f, -3.0f, 30.0f, -30.0f,
	80.0f, -80.0f, 89.0f, -100.0f, 100.0f, 1e30f, -1e30f, INFINITY, -INFINITY,
};

static void act_case(const struct act_op *op, const float *x, int32_t ndim, const int64_t *shape, enum layout l)
{
	size_t n = conf_numel(ndim, shape);
	double *want = conf_xmalloc(n * sizeof(double)), *tol = conf_xmalloc(n * sizeof(double));
	float *got = conf_xmalloc(n * sizeof(float));
	struct conf_tensor tx = upload(l, ndim, shape, x), ty = { 0 };
	const struct conf_tensor *out = l == LAYOUT_IN_PLACE ? &tx : &ty;
	char what[128], dims[48];

	snprintf(what, sizeof(what), "%s(%g, %g) %s%s", op->name, op->a, op->b,
		 conf_shape_str(dims, sizeof(dims), ndim, shape), layout_name(l));
	if (l != LAYOUT_IN_PLACE)
		ty = output(l, ndim, shape);
	conf_ok(op->call(op, &out->t, &tx.t));
	conf_download(out, got);
	for (size_t i = 0; i < n; i++) {
		want[i] = op->ref(op, x[i]);
		tol[i] = op->tol(op, x[i], want[i]);
	}
	conf_check_within(what, got, want, tol, n);
	if (l == LAYOUT_STRIDED)
		conf_check_padding(&ty);
	conf_free(&tx);
	conf_free(&ty);
	free(want);
	free(tol);
	free(got);
}

static void run_act(const char *name)
{
	struct conf_rng rng;

	conf_begin(name);
	conf_rng_init(&rng, name);
	for (size_t o = 0; o < sizeof(act_ops) / sizeof(act_ops[0]); o++) {
		const struct act_op *op = &act_ops[o];

		if (strcmp(op->name, name) != 0)
			continue;
		for (size_t i = 0; i < conf_lengths_active(); i++) {
			int64_t n = conf_lengths[i];
			float *x = conf_xmalloc(9 * (size_t)n * sizeof(float));

			conf_fill_uniform(&rng, x, 9 * (size_t)n, op->lo, op->hi);
			act_case(op, x, 1, (int64_t[]){ n }, LAYOUT_PLAIN);
			act_case(op, x, 1, (int64_t[]){ n }, LAYOUT_IN_PLACE);
			if (n <= 4097) {
				act_case(op, x, 3, (int64_t[]){ 2, 3, n }, LAYOUT_PLAIN);
				act_case(op, x, 3, (int64_t[]){ 3, 1, n }, LAYOUT_IN_PLACE);
				act_case(op, x, 2, (int64_t[]){ 5, n }, LAYOUT_STRIDED);
			} else { /* more than 8 MiB: the streaming kernels */
				act_case(op, x, 2, (int64_t[]){ 9, n }, LAYOUT_PLAIN);
			}
			free(x);
		}
		act_case(op, act_specials, 1, (int64_t[]){ sizeof(act_specials) / sizeof(act_specials[0]) },
			 LAYOUT_PLAIN);
	}
	conf_covered(name);
}

static void test_sigmoid(void **state)
{
	(void)state;
	run_act("sigmoid");
}

static void test_clamp(void **state)
{
	(void)state;
	run_act("clamp");
}

static void test_softcap(void **state)
{
	(void)state;
	run_act("softcap");
}

/* --------------------------------------------------------------- glu */

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

#define OAI_ALPHA 1.702
#define OAI_LIMIT 7.0

/* act(g) · u, and the bound on its error: the activation's (relative, plus
 * the cancellation of 0.5x(1 + tanh/erf) for x < 0, two ulps of 1 scaled by
 * |x|) carried through the product's rounding. */
static double ref_glu(int op, double g, double u, double alpha, double limit, double *tol)
{
	double a, extra = 0;

	switch (op) {
	case GLLMK_GLU_SILU:
		a = ref_silu(g);
		break;
	case GLLMK_GLU_GELU_TANH:
		a = ref_gelu_tanh(g);
		extra = 0x1p-22 * fabs(g);
		break;
	case GLLMK_GLU_GELU_ERF:
		a = ref_gelu_erf(g);
		extra = 0x1p-22 * fabs(g);
		break;
	case GLLMK_GLU_RELU:
		a = g > 0 ? g : 0;
		break;
	default: /* SWIGLU_OAI: min, clamp, and u + 1 rounded once more */
		g = g < limit ? g : limit;
		u = u < -limit ? -limit : u > limit ? limit : u;
		u += 1;
		a = g / (1 + exp(-alpha * g));
		break;
	}
	*tol = 1e-30 + extra * fabs(u) + (CONF_TOL_TRANSC + 3 * CONF_TOL_ROUNDED) * fabs(a * u);
	return a * u;
}

static const char *const glu_names[] = { "silu", "gelu_tanh", "gelu_erf", "relu", "swiglu_oai" };

struct glu_case {
	int op, fused, swapped;
	float alpha, limit; /* as passed: 0 for the defaults */
	enum layout layout; /* in place: y = gate (split form only) */
};

static void glu_run_case(struct conf_rng *rng, const struct glu_case *c, int32_t ndim, const int64_t *shape)
{
	size_t n = conf_numel(ndim, shape), row = (size_t)shape[ndim - 1], rows = n / row;
	int64_t gshape[4];
	float *g = conf_xmalloc(2 * n * sizeof(float)), *u = g + n, *fused = NULL;
	float *got = conf_xmalloc(n * sizeof(float));
	double *want = conf_xmalloc(n * sizeof(double)), *tol = conf_xmalloc(n * sizeof(double));
	double alpha = c->alpha != 0 ? c->alpha : OAI_ALPHA, limit = c->limit != 0 ? c->limit : OAI_LIMIT;
	struct conf_tensor tg, tu = { 0 }, ty = { 0 };
	const struct conf_tensor *out = &ty;
	gllmk_glu_params p = { .struct_size = sizeof(p), .op = c->op, .swapped = c->swapped, .alpha = c->alpha,
			       .limit = c->limit };
	char what[160], dims[48];

	/* gates across silu's and the clamps' interesting range */
	conf_fill_uniform(rng, g, n, -12, 12);
	conf_fill_uniform(rng, u, n, -9, 9);
	memcpy(gshape, shape, (size_t)ndim * sizeof(int64_t));
	if (c->fused) {
		/* each row: [gate half, up half], or [up, gate] swapped */
		fused = conf_xmalloc(2 * n * sizeof(float));
		gshape[ndim - 1] = 2 * (int64_t)row;
		for (size_t r = 0; r < rows; r++) {
			memcpy(fused + (2 * r + (size_t)c->swapped) * row, g + r * row, row * sizeof(float));
			memcpy(fused + (2 * r + 1 - (size_t)c->swapped) * row, u + r * row, row * sizeof(float));
		}
		tg = upload(c->layout, ndim, gshape, fused);
	} else {
		tg = upload(c->layout, ndim, shape, g);
		tu = upload(c->layout, ndim, shape, u);
	}
	if (c->layout == LAYOUT_IN_PLACE)
		out = &tg;
	else
		ty = output(c->layout, ndim, shape);
	snprintf(what, sizeof(what), "glu %s%s%s alpha=%g limit=%g %s%s", glu_names[c->op],
		 c->fused ? " fused" : "", c->swapped ? " swapped" : "", c->alpha, c->limit,
		 conf_shape_str(dims, sizeof(dims), ndim, shape), layout_name(c->layout));
	conf_ok(gllmk_glu(conf.ctx, &out->t, &tg.t, c->fused ? NULL : &tu.t, &p));
	conf_download(out, got);
	for (size_t i = 0; i < n; i++)
		want[i] = ref_glu(c->op, g[i], u[i], alpha, limit, &tol[i]);
	conf_check_within(what, got, want, tol, n);
	if (c->layout == LAYOUT_STRIDED)
		conf_check_padding(&ty);
	conf_free(&tg);
	conf_free(&tu);
	conf_free(&ty);
	free(g);
	free(fused);
	free(got);
	free(want);
	free(tol);
}

static void test_glu(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("glu");
	conf_rng_init(&rng, "glu");
	for (int op = GLLMK_GLU_SILU; op <= GLLMK_GLU_SWIGLU_OAI; op++) {
		const struct glu_case cases[] = {
			{ op, 0, 0, 0, 0, LAYOUT_PLAIN },
			{ op, 0, 0, 0, 0, LAYOUT_IN_PLACE },
			{ op, 0, 0, 0, 0, LAYOUT_STRIDED },
			{ op, 1, 0, 0, 0, LAYOUT_PLAIN },
			{ op, 1, 1, 0, 0, LAYOUT_PLAIN },
			{ op, 1, 1, 0, 0, LAYOUT_STRIDED },
			/* swiglu_oai's own alpha and limit; the rest ignore them */
			{ op, 1, 0, 1.0f, 2.5f, LAYOUT_PLAIN },
		};

		for (size_t i = 0; i < conf_lengths_active(); i++) {
			int64_t n = conf_lengths[i];

			for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
				if (n > 4097) {
					if (k == 0 || k == 3) /* more than 8 MiB of y: streaming */
						glu_run_case(&rng, &cases[k], 2, (int64_t[]){ 9, n });
					continue;
				}
				glu_run_case(&rng, &cases[k], 1, (int64_t[]){ n });
				glu_run_case(&rng, &cases[k], 3, (int64_t[]){ 2, 3, n });
			}
		}
	}
	conf_covered("glu");
}

CONF_GROUP(activation) = {
	cmocka_unit_test(test_sigmoid),
	cmocka_unit_test(test_clamp),
	cmocka_unit_test(test_softcap),
	cmocka_unit_test(test_glu),
};
CONF_GROUP_END(activation);
