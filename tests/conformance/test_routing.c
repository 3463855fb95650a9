/* Selection ops of ABI 1.1 (SPEC/OPERATORS.md "Selection (ABI 1.1)"):
 * top_k and moe_route, against references written here in double.
 *
 * top_k moves values without arithmetic, so ids and values must match the
 * reference exactly, ties (lower index first), NaN (last) and all. moe_route
 * computes its scores: with random logits two experts' scores may differ by
 * less than the rounding, so each slot's expert must have the reference
 * score of that slot within the scores' tolerance; with integer logits (the
 * "ties" cases) scores are either equal or far apart and the ids must match
 * exactly. Weights are checked against the reference for the experts the
 * plugin chose. Tolerances: SPEC/TOLERANCES.md "Selection (ABI 1.1)".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

/* The order of SPEC/OPERATORS.md: larger first, ties to the lower index,
 * NaN after every number. */
struct ranked {
	double v;
	int32_t i;
};

static int ranked_cmp(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;
	int an = isnan(a->v), bn = isnan(b->v);

	if (an != bn)
		return an ? 1 : -1;
	if (!an && a->v != b->v)
		return a->v > b->v ? -1 : 1;
	return a->i < b->i ? -1 : 1;
}

/* r[0 .. n) = (v[i], i) sorted best first. */
static void rank_all(struct ranked *r, const double *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		r[i] = (struct ranked){ v[i], (int32_t)i };
	qsort(r, (size_t)n, sizeof(*r), ranked_cmp);
}

/* ---------------------------------------------------------------- top_k */

enum fill {
	FILL_RANDOM,   /* distinct values */
	FILL_TIES,     /* a handful of values, ±0 among them: ties everywhere */
	FILL_SPECIALS, /* ties plus ±inf and NaN */
};

static void fill_row(struct conf_rng *rng, float *x, int64_t n, enum fill f)
{
	static const float specials[] = { INFINITY, -INFINITY, NAN, -0.0f, 0.0f };

	for (int64_t i = 0; i < n; i++) {
		if (f == FILL_RANDOM)
			x[i] = (float)conf_rng_uniform(rng, -8, 8);
		else if (f == FILL_SPECIALS && conf_rng_int(rng, 0, 3) == 0)
			x[i] = specials[conf_rng_int(rng, 0, 4)];
		else
			x[i] = (float)conf_rng_int(rng, -2, 2) * 0.5f; /* 0.0 comes out as +0 or -0 below */
		if (f != FILL_RANDOM && x[i] == 0 && conf_rng_int(rng, 0, 1))
			x[i] = -0.0f;
	}
}

static int same_value(float a, float b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void top_k_case(struct conf_rng *rng, int64_t rows, int64_t n, int64_t k, enum fill f, int with_values,
		       int strided)
{
	size_t nx = (size_t)(rows * n), nk = (size_t)(rows * k);
	float *x = conf_xmalloc(nx * sizeof(float)), *vals = conf_xmalloc(nk * sizeof(float));
	int32_t *ids = conf_xmalloc(nk * sizeof(int32_t)), *want_ids = conf_xmalloc(nk * sizeof(int32_t));
	double *row = conf_xmalloc((size_t)n * sizeof(double));
	struct ranked *r = conf_xmalloc((size_t)n * sizeof(*r));
	int64_t xs[] = { rows, n }, ks[] = { rows, k };
	struct conf_tensor tx, ti, tv = { 0 };
	char what[128];

	for (int64_t i = 0; i < rows; i++)
		fill_row(rng, x + i * n, n, f);
	tx = strided ? conf_upload_strided(GLLMK_F32, 2, xs, x, 52, 28) : conf_upload(GLLMK_F32, 2, xs, x);
	ti = strided ? conf_output_padded(GLLMK_I32, 2, ks, 8) : conf_output(GLLMK_I32, 2, ks);
	if (with_values)
		tv = strided ? conf_output_padded(GLLMK_F32, 2, ks, 4) : conf_output(GLLMK_F32, 2, ks);
	snprintf(what, sizeof(what), "top_k [%lld,%lld] k=%lld %s%s%s", (long long)rows, (long long)n, (long long)k,
		 f == FILL_RANDOM ? "random" : f == FILL_TIES ? "ties" : "ties+inf+nan",
		 with_values ? " with values" : "", strided ? " strided" : "");
	conf_ok(gllmk_top_k(conf.ctx, with_values ? &tv.t : NULL, &ti.t, &tx.t));
	conf_download(&ti, ids);
	for (int64_t i = 0; i < rows; i++) {
		for (int64_t j = 0; j < n; j++)
			row[j] = x[i * n + j];
		rank_all(r, row, n);
		for (int64_t j = 0; j < k; j++)
			want_ids[i * k + j] = r[j].i;
	}
	conf_check_equal_i32(what, ids, want_ids, nk);
	if (with_values) {
		conf_download(&tv, vals);
		for (size_t j = 0; j < nk; j++)
			if (!same_value(vals[j], x[(j / (size_t)k) * (size_t)n + (size_t)want_ids[j]])) {
				conf_fail("%s: values[%zu] = %g but x[id] = %g", what, j, vals[j],
					  x[(j / (size_t)k) * (size_t)n + (size_t)want_ids[j]]);
				break;
			}
	}
	if (strided) {
		conf_check_padding(&ti);
		if (with_values)
			conf_check_padding(&tv);
	}
	conf_free(&tx);
	conf_free(&ti);
	conf_free(&tv);
	free(x);
	free(vals);
	free(ids);
	free(want_ids);
	free(row);
	free(r);
}

static void test_top_k(void **state)
{
	/* rows, N, k: k = 1 and k = N, odd lengths, a vocabulary (Llama 2's
	 * 32000, Qwen's 151936) and a row past it */
	static const int64_t shapes[][3] = {
		{ 1, 1, 1 },     { 3, 7, 1 },      { 3, 7, 7 },       { 2, 33, 5 },      { 5, 33, 33 },
		{ 2, 257, 257 }, { 4, 4097, 40 },  { 3, 4097, 1 },    { 2, 32000, 1 },   { 2, 32000, 64 },
		{ 1, 32000, 40 }, { 1, 151936, 8 }, { 1, 262147, 100 },
	};
	struct conf_rng rng;

	(void)state;
	conf_begin("top_k");
	conf_rng_init(&rng, "top_k");
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int64_t rows = shapes[s][0], n = shapes[s][1], k = shapes[s][2];

		if (conf.quick && n > 32000)
			continue;
		for (int f = FILL_RANDOM; f <= FILL_SPECIALS; f++)
			top_k_case(&rng, rows, n, k, (enum fill)f, f != FILL_TIES, 0);
		top_k_case(&rng, rows, n, k, FILL_TIES, 1, 1);
	}
	conf_covered("top_k");
}

/* ------------------------------------------------------------ moe_route */

/* llama.cpp's floor under the sum the weights are normalised by. */
#define MOE_NORM_MIN_SUM 6.103515625e-5

struct moe_case {
	int64_t tokens, e, k;
	gllmk_moe_route_params p;
	int bias, ties;
};

/* The reference for one token: probs, selection scores (NaN for experts
 * of groups left out) and the order. */
struct moe_ref {
	double *probs, *sel, *gscore;
	struct ranked *order, *gorder;
};

static void moe_reference(const struct moe_case *c, const float *l, const float *bias, struct moe_ref *m)
{
	int64_t e = c->e, groups = c->p.n_group > 1 ? c->p.n_group : 1, per = e / groups;
	double max = -INFINITY, sum = 0;

	for (int64_t i = 0; i < e; i++)
		max = l[i] > max ? l[i] : max;
	for (int64_t i = 0; i < e; i++)
		sum += exp(l[i] - max);
	for (int64_t i = 0; i < e; i++) {
		if (c->p.gating == GLLMK_GATING_SOFTMAX)
			m->probs[i] = exp(l[i] - max) / sum;
		else if (c->p.gating == GLLMK_GATING_SIGMOID)
			m->probs[i] = 1 / (1 + exp(-(double)l[i]));
		else
			m->probs[i] = l[i];
		m->sel[i] = m->probs[i] + (bias ? bias[i] : 0);
	}
	if (groups > 1) {
		for (int64_t g = 0; g < groups; g++) {
			rank_all(m->order, m->sel + g * per, per);
			m->gscore[g] = m->order[0].v + m->order[1].v;
		}
		rank_all(m->gorder, m->gscore, groups);
		for (int64_t r = c->p.topk_group; r < groups; r++)
			for (int64_t i = 0; i < per; i++)
				m->sel[m->gorder[r].i * per + i] = NAN;
	}
	rank_all(m->order, m->sel, e);
}

/* The weights of the experts ids[0 .. k) by the reference's probs. */
static void moe_weights(const struct moe_case *c, const double *probs, const int32_t *ids, double *w)
{
	double sum = 0, max = -INFINITY, scale = c->p.scale != 0 ? c->p.scale : 1;

	for (int64_t j = 0; j < c->k; j++) {
		w[j] = probs[ids[j]];
		max = w[j] > max ? w[j] : max;
	}
	if (c->p.gating == GLLMK_GATING_SOFTMAX_AFTER) {
		for (int64_t j = 0; j < c->k; j++)
			sum += w[j] = exp(w[j] - max);
		for (int64_t j = 0; j < c->k; j++)
			w[j] /= sum;
	}
	if (c->p.norm) {
		sum = 0;
		for (int64_t j = 0; j < c->k; j++)
			sum += w[j];
		sum = sum > MOE_NORM_MIN_SUM ? sum : MOE_NORM_MIN_SUM;
		for (int64_t j = 0; j < c->k; j++)
			w[j] /= sum;
	}
	for (int64_t j = 0; j < c->k; j++)
		w[j] *= scale;
}

/* How far a plugin's selection score may be from the reference's: the
 * probability's error (a softmax over E reduced in f32, or one
 * transcendental), plus the rounding of + bias. */
static double moe_sel_tol(const struct moe_case *c, double prob, double sel)
{
	double rel = c->p.gating == GLLMK_GATING_SOFTMAX_AFTER ? 0 : conf_reduce_tol(c->e) + CONF_TOL_TRANSC;

	return 1e-30 + rel * fabs(prob) + 0x1p-23 * fabs(sel);
}

/* Checks token t's ids and weights; returns 0 after the first failure. */
static int moe_check_token(const struct moe_case *c, const char *what, int64_t t, const struct moe_ref *m,
			   const int32_t *ids, const float *w)
{
	double *want = conf_xmalloc((size_t)c->k * sizeof(double));
	int ok = 1;

	for (int64_t j = 0; j < c->k && ok; j++) {
		int32_t id = ids[j];
		const struct ranked *r = &m->order[j];

		if (id < 0 || id >= c->e) {
			conf_fail("%s: token %lld slot %lld: id %d outside [0, %lld)", what, (long long)t,
				  (long long)j, id, (long long)c->e);
			ok = 0;
		} else if (c->ties ? id != r->i
				   : !(fabs(m->sel[id] - r->v) <= moe_sel_tol(c, m->probs[r->i], r->v))) {
			conf_fail("%s: token %lld slot %lld: expert %d (score %.9g) but the reference has %d "
				  "(score %.9g)", what, (long long)t, (long long)j, id, m->sel[id], r->i, r->v);
			ok = 0;
		}
		for (int64_t i = 0; i < j && ok; i++)
			if (ids[i] == id) {
				conf_fail("%s: token %lld: expert %d in slots %lld and %lld", what, (long long)t, id,
					  (long long)i, (long long)j);
				ok = 0;
			}
	}
	if (ok) {
		moe_weights(c, m->probs, ids, want);
		for (int64_t j = 0; j < c->k && ok; j++) {
			double tol = 1e-30 + 2 * (conf_reduce_tol(c->e) + CONF_TOL_TRANSC) * fabs(want[j]);

			if (!(fabs(w[j] - want[j]) <= tol)) {
				conf_fail("%s: token %lld slot %lld (expert %d): weight %.9g, want %.9g (tol %.3g)", what,
					  (long long)t, (long long)j, ids[j], w[j], want[j], tol);
				ok = 0;
			}
		}
	}
	free(want);
	return ok;
}

static void moe_fill(struct conf_rng *rng, const struct moe_case *c, float *l, float *bias)
{
	size_t n = (size_t)(c->tokens * c->e);

	for (size_t i = 0; i < n; i++)
		l[i] = c->ties ? (float)conf_rng_int(rng, -3, 3) : (float)conf_rng_uniform(rng, -4, 4);
	for (int64_t i = 0; i < c->e && c->bias; i++)
		/* ties: multiples of 1/2 keep the sums exact (sigmoid, logits) */
		bias[i] = c->ties ? (float)conf_rng_int(rng, -1, 1) * 0.5f : (float)conf_rng_uniform(rng, -0.1, 0.1);
}

static void moe_run_case(struct conf_rng *rng, const struct moe_case *c)
{
	size_t nl = (size_t)(c->tokens * c->e), nk = (size_t)(c->tokens * c->k);
	float *l = conf_xmalloc(nl * sizeof(float)), *bias = conf_xmalloc((size_t)c->e * sizeof(float));
	float *w = conf_xmalloc(nk * sizeof(float));
	int32_t *ids = conf_xmalloc(nk * sizeof(int32_t));
	int64_t groups = c->p.n_group > 1 ? c->p.n_group : 1;
	struct moe_ref m = {
		.probs = conf_xmalloc((size_t)c->e * sizeof(double)),
		.sel = conf_xmalloc((size_t)c->e * sizeof(double)),
		.gscore = conf_xmalloc((size_t)groups * sizeof(double)),
		.order = conf_xmalloc((size_t)c->e * sizeof(struct ranked)),
		.gorder = conf_xmalloc((size_t)groups * sizeof(struct ranked)),
	};
	struct conf_tensor tl, tb = { 0 }, ti, tw;
	static const char *const gating[] = { "softmax", "sigmoid", "softmax_after" };
	char what[192];

	moe_fill(rng, c, l, bias);
	tl = conf_upload(GLLMK_F32, 2, (int64_t[]){ c->tokens, c->e }, l);
	if (c->bias)
		tb = conf_upload(GLLMK_F32, 1, (int64_t[]){ c->e }, bias);
	ti = conf_output(GLLMK_I32, 2, (int64_t[]){ c->tokens, c->k });
	tw = conf_output(GLLMK_F32, 2, (int64_t[]){ c->tokens, c->k });
	snprintf(what, sizeof(what), "moe_route T=%lld E=%lld k=%lld %s groups=%d/%d%s norm=%d scale=%g%s",
		 (long long)c->tokens, (long long)c->e, (long long)c->k, gating[c->p.gating], c->p.topk_group,
		 c->p.n_group, c->bias ? " bias" : "", c->p.norm, c->p.scale, c->ties ? " ties" : "");
	conf_ok(gllmk_moe_route(conf.ctx, &ti.t, &tw.t, &tl.t, c->bias ? &tb.t : NULL, &c->p));
	conf_download(&ti, ids);
	conf_download(&tw, w);
	for (int64_t t = 0; t < c->tokens; t++) {
		moe_reference(c, l + t * c->e, c->bias ? bias : NULL, &m);
		if (!moe_check_token(c, what, t, &m, ids + t * c->k, w + t * c->k))
			break;
	}
	conf_free(&tl);
	conf_free(&tb);
	conf_free(&ti);
	conf_free(&tw);
	free(l);
	free(bias);
	free(w);
	free(ids);
	free(m.probs);
	free(m.sel);
	free(m.gscore);
	free(m.order);
	free(m.gorder);
}

static void test_moe_route(void **state)
{
	static const int64_t experts[] = { 8, 64, 128, 256 }, ks[] = { 1, 2, 8 }, tokens[] = { 1, 7, 33 };
	struct conf_rng rng;
	int variant = 0;

	(void)state;
	conf_begin("moe_route");
	conf_rng_init(&rng, "moe_route");
	for (size_t ei = 0; ei < 4; ei++)
		for (size_t ki = 0; ki < 3; ki++)
			for (int gating = 0; gating < 3; gating++)
				for (int grouped = 0; grouped < 2; grouped++)
					for (int bias = 0; bias < 2; bias++) {
						int64_t e = experts[ei];
						struct moe_case c = {
							.tokens = tokens[variant % 3],
							.e = e,
							.k = ks[ki],
							.p = { .struct_size = sizeof(gllmk_moe_route_params),
							       .gating = gating,
							       /* DeepSeek V3: 8 groups, 4 kept */
							       .n_group = grouped ? (e == 8 ? 4 : 8) : variant % 2,
							       .topk_group = grouped ? (e == 8 ? (ks[ki] > 4 ? 4 : 2) : 4) : 0,
							       .norm = variant / 2 % 2,
							       .scale = variant % 3 == 0 ? 0.0f : 2.5f },
							.bias = bias,
						};

						variant++;
						moe_run_case(&rng, &c);
						/* ties: exact ids (softmax's probs + a bias
						 * would round, so no bias there) */
						c.ties = 1;
						c.bias = bias && gating != GLLMK_GATING_SOFTMAX;
						moe_run_case(&rng, &c);
					}
	conf_covered("moe_route");
}

CONF_GROUP(routing) = {
	cmocka_unit_test(test_top_k),
	cmocka_unit_test(test_moe_route),
};
CONF_GROUP_END(routing);
