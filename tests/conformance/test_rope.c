/* rope (SPEC/OPERATORS.md "rope"): normal and neox pairs, n_rot below the
 * head size (the rest copied), several heads, positions up to 1e5, theta
 * bases of LLaMA 1-3 and Qwen, linear frequency scaling, in place.
 * Tolerances: SPEC/TOLERANCES.md "rope".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

struct rope_case {
	int64_t t, h, d;
	gllmk_rope_params p;
	int32_t max_pos;
	int in_place;
};

/* The element indices of pair i in a head: normal rotates (2i, 2i+1), neox
 * (i, i + n_rot/2). */
static void pair_of(const struct rope_case *c, int64_t n_rot, int64_t i, int64_t *ia, int64_t *ib)
{
	if (c->p.mode == GLLMK_ROPE_NEOX) {
		*ia = i;
		*ib = i + n_rot / 2;
	} else {
		*ia = 2 * i;
		*ib = 2 * i + 1;
	}
}

/* One head of one token: rotate the pairs, copy the rest. The angle in f32
 * carries a relative error that grows with the pair index (θ_i formed by
 * repeated products or by a pow of a rounded exponent), so the tolerance is
 * per pair: |x|·(δθ + trig error) + rounding of the result. */
static void reference_head(const struct rope_case *c, const float *x, int32_t pos, double *want, double *tol)
{
	int64_t n_rot = c->p.n_rot ? c->p.n_rot : c->d;

	for (int64_t e = n_rot; e < c->d; e++) {
		want[e] = x[e];
		tol[e] = 0;
	}
	for (int64_t i = 0; i < n_rot / 2; i++) {
		double theta = (double)pos * c->p.freq_scale * pow(c->p.theta_base, -2.0 * (double)i / (double)n_rot);
		double dtheta = (24 + 2 * (double)i) * 0x1p-24 * fabs(theta);
		int64_t ia, ib;
		double a, b, mag;

		pair_of(c, n_rot, i, &ia, &ib);
		a = x[ia];
		b = x[ib];
		mag = fabs(a) + fabs(b);
		want[ia] = a * cos(theta) - b * sin(theta);
		want[ib] = a * sin(theta) + b * cos(theta);
		tol[ia] = mag * (dtheta + 0x1p-21) + 0x1p-23 * fabs(want[ia]);
		tol[ib] = mag * (dtheta + 0x1p-21) + 0x1p-23 * fabs(want[ib]);
	}
}

/* run: consecutive positions ending at max_pos, with a gap of 7 in the
 * middle (a prefill: CPU plugins step the angles from token to token
 * there), instead of random ones; max_pos >= t + 6. */
static void rope_case(struct conf_rng *rng, const struct rope_case *c, int run)
{
	int64_t shape[3] = { c->t, c->h, c->d };
	size_t n = conf_numel(3, shape);
	float *x = conf_xmalloc(n * sizeof(float)), *got = conf_xmalloc(n * sizeof(float));
	int32_t *pos = conf_xmalloc((size_t)c->t * sizeof(int32_t));
	double *want = conf_xmalloc(n * sizeof(double)), *tol = conf_xmalloc(n * sizeof(double));
	struct conf_tensor tx, ty = { 0 }, tp;
	const struct conf_tensor *out;
	char what[160];

	conf_fill_uniform(rng, x, n, -2, 2);
	for (int64_t t = 0; t < c->t; t++) /* the first token at 0, the last at max_pos */
		pos[t] = t == 0 ? 0 : t == c->t - 1 ? c->max_pos : (int32_t)conf_rng_int(rng, 0, c->max_pos);
	for (int64_t t = 0; run && t < c->t; t++)
		pos[t] = c->max_pos - (int32_t)(c->t - 1 - t) - (t < c->t / 2 ? 7 : 0);
	tx = conf_upload(GLLMK_F32, 3, shape, x);
	tp = conf_upload(GLLMK_I32, 1, &shape[0], pos);
	if (c->in_place) {
		out = &tx;
	} else {
		ty = conf_output(GLLMK_F32, 3, shape);
		out = &ty;
	}
	conf_ok(gllmk_rope(conf.ctx, &out->t, &tx.t, &tp.t, &c->p));
	conf_download(out, got);
	for (int64_t t = 0; t < c->t; t++)
		for (int64_t h = 0; h < c->h; h++) {
			size_t at = (size_t)((t * c->h + h) * c->d);

			reference_head(c, x + at, pos[t], want + at, tol + at);
		}
	snprintf(what, sizeof(what), "rope %s [%lld,%lld,%lld] n_rot=%d base=%g freq_scale=%g pos<=%d%s%s",
		 c->p.mode == GLLMK_ROPE_NEOX ? "neox" : "normal", (long long)c->t, (long long)c->h,
		 (long long)c->d, c->p.n_rot, c->p.theta_base, c->p.freq_scale, c->max_pos,
		 c->in_place ? " in place" : "", run ? " consecutive" : "");
	conf_check_within(what, got, want, tol, n);
	conf_free(&tx);
	conf_free(&ty);
	conf_free(&tp);
	free(x);
	free(got);
	free(pos);
	free(want);
	free(tol);
}

#define NORMAL GLLMK_ROPE_NORMAL
#define NEOX GLLMK_ROPE_NEOX

static const struct rope_case rope_cases[] = {
	/* t, h, d, { mode, n_rot, theta_base, freq_scale }, max_pos, in_place */
	{ 7, 4, 128, { NORMAL, 0, 10000.0f, 1.0f }, 4096, 0 },
	{ 7, 4, 128, { NEOX, 0, 10000.0f, 1.0f }, 4096, 0 },
	{ 33, 2, 64, { NEOX, 32, 1e6f, 0.25f }, 100000, 0 },
	{ 33, 2, 64, { NORMAL, 32, 500000.0f, 1.0f }, 100000, 0 },
	{ 5, 3, 7, { NORMAL, 6, 10000.0f, 1.0f }, 300, 0 },
	{ 5, 3, 7, { NEOX, 4, 10000.0f, 0.5f }, 300, 0 },
	{ 1, 1, 2, { NORMAL, 2, 10000.0f, 1.0f }, 100000, 0 },
	{ 1, 1, 2, { NEOX, 0, 10000.0f, 1.0f }, 77, 0 },
	{ 3, 5, 80, { NEOX, 32, 10000.0f, 1.0f }, 2048, 0 },   /* phi-2's partial rotary */
	{ 9, 4, 128, { NORMAL, 0, 10000.0f, 1.0f }, 100000, 1 },
	{ 9, 4, 128, { NEOX, 96, 1e6f, 1.0f }, 100000, 1 },
	{ 4097, 1, 64, { NEOX, 0, 10000.0f, 1.0f }, 8191, 0 },
	{ 4097, 2, 64, { NORMAL, 0, 500000.0f, 0.125f }, 100000, 0 },
	{ 2048, 8, 128, { NEOX, 0, 10000.0f, 1.0f }, 100000, 1 },     /* 8 MiB: streaming stores */
};

/* Consecutive positions (rope_case's run). */
static const struct rope_case rope_runs[] = {
	{ 2048, 8, 128, { NORMAL, 0, 10000.0f, 1.0f }, 100000, 0 },  /* 8 MiB: streaming stores */
	{ 300, 2, 64, { NEOX, 48, 1e6f, 0.25f }, 306, 0 },
	{ 77, 3, 128, { NORMAL, 0, 500000.0f, 1.0f }, 131071, 1 },
};

#undef NORMAL
#undef NEOX

static void test_rope(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("rope");
	conf_rng_init(&rng, "rope");
	for (size_t i = 0; i < sizeof(rope_cases) / sizeof(rope_cases[0]); i++)
		rope_case(&rng, &rope_cases[i], 0);
	for (size_t i = 0; i < sizeof(rope_runs) / sizeof(rope_runs[0]); i++)
		rope_case(&rng, &rope_runs[i], 1);
	/* The token count walks the lengths, positions within the sequence. */
	for (size_t l = 0; l + 1 < conf_lengths_active(); l++) {
		struct rope_case c = { conf_lengths[l], 2, 64, { GLLMK_ROPE_NEOX, 0, 10000.0f, 1.0f }, 0, 0 };

		c.max_pos = (int32_t)c.t - 1;
		rope_case(&rng, &c, 0);
	}
	conf_covered("rope");
}

CONF_GROUP(rope) = {
	cmocka_unit_test(test_rope),
};
CONF_GROUP_END(rope);
