/* rope_ext (SPEC/OPERATORS.md "rope_ext"): ggml_rope_ext's frequency factors
 * (Llama 3.x rope_freqs, from the llama3 formula) and YaRN (several training
 * contexts, default and explicit betas, attn_factor), normal and neox, n_rot
 * below the head size, 1, 7, 33 and 4097 tokens, positions up to 1e5, in
 * place; gllmk_rope equal bit for bit to rope_ext with the defaults, and a
 * caller's struct shorter than today's read with zeros past its size.
 * Tolerances: SPEC/TOLERANCES.md "rope_ext".
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

enum ff_kind {
	FF_NONE = 0,
	FF_LLAMA3 = 1, /* factor 8, low 1, high 4, original context 8192 */
	FF_RANDOM = 2, /* LongRoPE-like: any positive factor per pair */
};

struct rope_ext_case {
	int64_t t, h, d;
	gllmk_rope_ext_params p;
	enum ff_kind ff;
	int32_t max_pos;
	int in_place;
	int run; /* consecutive positions (a prefill) instead of random ones */
};

/* Llama 3.1's rope_freqs.weight: what Meta's apply_scaling and
 * convert_hf_to_gguf.py compute for each pair's frequency. */
static void llama3_factors(double base, int64_t n_rot, float *ff)
{
	const double factor = 8, low = 1, high = 4, orig = 8192;
	const double low_wavelen = orig / low, high_wavelen = orig / high;

	for (int64_t i = 0; i < n_rot / 2; i++) {
		double freq = pow(base, -2.0 * (double)i / (double)n_rot), wavelen = 2 * M_PI / freq;

		if (wavelen < high_wavelen) {
			ff[i] = 1.0f;
		} else if (wavelen > low_wavelen) {
			ff[i] = (float)factor;
		} else {
			double smooth = (orig / wavelen - low) / (high - low);

			ff[i] = (float)(1.0 / ((1 - smooth) / factor + smooth));
		}
	}
}

/* YaRN's correction range over pairs, as the SPEC defines it: ggml's f32
 * expression, then floor / ceil, clamped to [0, n_rot - 1]. */
static void corr_range(const gllmk_rope_ext_params *p, int64_t n_rot, double *lo, double *hi)
{
	float beta_fast = p->beta_fast != 0.0f ? p->beta_fast : 32.0f;
	float beta_slow = p->beta_slow != 0.0f ? p->beta_slow : 1.0f;
	float two_pi = 2.0f * (float)M_PI, log_base2 = 2.0f * logf(p->theta_base);
	float a = floorf((float)n_rot * logf((float)p->n_ctx_orig / (beta_fast * two_pi)) / log_base2);
	float b = ceilf((float)n_rot * logf((float)p->n_ctx_orig / (beta_slow * two_pi)) / log_base2);

	*lo = a > 0 ? a : 0;
	*hi = b < (float)(n_rot - 1) ? b : (float)(n_rot - 1);
}

/* Pair i's angle at position pos, and the magnitude m, in double. */
static double ref_angle(const gllmk_rope_ext_params *p, int64_t n_rot, const float *ff, int64_t i, int32_t pos)
{
	double theta_extrap = (double)pos * pow(p->theta_base, -2.0 * (double)i / (double)n_rot) / (ff ? ff[i] : 1.0);
	double theta_interp = p->freq_scale * theta_extrap, lo, hi, ramp;

	if (p->ext_factor == 0.0f)
		return theta_interp;
	corr_range(p, n_rot, &lo, &hi);
	ramp = ((double)i - lo) / fmax(0.001, hi - lo);
	ramp = 1.0 - fmin(1.0, fmax(0.0, ramp));
	return theta_interp * (1 - ramp * p->ext_factor) + theta_extrap * ramp * p->ext_factor;
}

static double ref_magnitude(const gllmk_rope_ext_params *p)
{
	double m = p->attn_factor != 0.0f ? p->attn_factor : 1.0;

	return p->ext_factor != 0.0f ? m * (1.0 + 0.1 * log(1.0 / p->freq_scale)) : m;
}

/* One head of one token. Per pair the bound is the f32 angle's error (a few
 * ulps of |θ| growing with the pair index: base^(-2i/n_rot) formed in f32,
 * the factor's division, YaRN's mix) plus sin/cos and the rounding of m and
 * of the result, all times the magnitude. */
static void reference_head(const struct rope_ext_case *c, const float *ff, const float *x, int32_t pos, double *want,
			   double *tol)
{
	int64_t n_rot = c->p.n_rot ? c->p.n_rot : c->d;
	double m = ref_magnitude(&c->p);

	for (int64_t e = n_rot; e < c->d; e++) {
		want[e] = x[e];
		tol[e] = 0;
	}
	for (int64_t i = 0; i < n_rot / 2; i++) {
		double theta = ref_angle(&c->p, n_rot, ff, i, pos);
		double dtheta = (32 + 2 * (double)i) * 0x1p-24 * fabs(theta);
		int64_t ia = c->p.mode == GLLMK_ROPE_NEOX ? i : 2 * i;
		int64_t ib = c->p.mode == GLLMK_ROPE_NEOX ? i + n_rot / 2 : 2 * i + 1;
		double a = x[ia], b = x[ib], mag = fabs(m) * (fabs(a) + fabs(b));

		want[ia] = m * (a * cos(theta) - b * sin(theta));
		want[ib] = m * (a * sin(theta) + b * cos(theta));
		tol[ia] = mag * (dtheta + 0x1p-20) + 0x1p-23 * fabs(want[ia]);
		tol[ib] = mag * (dtheta + 0x1p-20) + 0x1p-23 * fabs(want[ib]);
	}
}

static void make_factors(struct conf_rng *rng, const struct rope_ext_case *c, int64_t n_rot, float *ff)
{
	if (c->ff == FF_LLAMA3)
		llama3_factors(c->p.theta_base, n_rot, ff);
	else
		conf_fill_uniform(rng, ff, (size_t)(n_rot / 2), 1.0, 40.0);
}

static void make_positions(struct conf_rng *rng, const struct rope_ext_case *c, int32_t *pos)
{
	for (int64_t t = 0; t < c->t; t++) /* the first token at 0, the last at max_pos */
		pos[t] = t == 0 ? 0 : t == c->t - 1 ? c->max_pos : (int32_t)conf_rng_int(rng, 0, c->max_pos);
	for (int64_t t = 0; c->run && t < c->t; t++)
		pos[t] = c->max_pos - (int32_t)(c->t - 1 - t) - (t < c->t / 2 ? 7 : 0);
}

static void rope_ext_case(struct conf_rng *rng, const struct rope_ext_case *c)
{
	int64_t shape[3] = { c->t, c->h, c->d }, n_rot = c->p.n_rot ? c->p.n_rot : c->d, half = n_rot / 2;
	size_t n = conf_numel(3, shape);
	float *x = conf_xmalloc(n * sizeof(float)), *got = conf_xmalloc(n * sizeof(float));
	float *ff = c->ff ? conf_xmalloc((size_t)half * sizeof(float)) : NULL;
	int32_t *pos = conf_xmalloc((size_t)c->t * sizeof(int32_t));
	double *want = conf_xmalloc(n * sizeof(double)), *tol = conf_xmalloc(n * sizeof(double));
	struct conf_tensor tx, ty = { 0 }, tp, tf = { 0 };
	const struct conf_tensor *out;
	char what[256];

	conf_fill_uniform(rng, x, n, -2, 2);
	make_positions(rng, c, pos);
	if (ff) {
		make_factors(rng, c, n_rot, ff);
		tf = conf_upload(GLLMK_F32, 1, &half, ff);
	}
	tx = conf_upload(GLLMK_F32, 3, shape, x);
	tp = conf_upload(GLLMK_I32, 1, &shape[0], pos);
	if (c->in_place) {
		out = &tx;
	} else {
		ty = conf_output(GLLMK_F32, 3, shape);
		out = &ty;
	}
	conf_ok(gllmk_rope_ext(conf.ctx, &out->t, &tx.t, &tp.t, ff ? &tf.t : NULL, &c->p));
	conf_download(out, got);
	for (int64_t t = 0; t < c->t; t++)
		for (int64_t h = 0; h < c->h; h++) {
			size_t at = (size_t)((t * c->h + h) * c->d);

			reference_head(c, ff, x + at, pos[t], want + at, tol + at);
		}
	snprintf(what, sizeof(what),
		 "rope_ext %s [%lld,%lld,%lld] n_rot=%d base=%g freq_scale=%g ext=%g attn=%g beta=%g/%g n_ctx_orig=%d "
		 "ff=%s pos<=%d%s%s",
		 c->p.mode == GLLMK_ROPE_NEOX ? "neox" : "normal", (long long)c->t, (long long)c->h, (long long)c->d,
		 c->p.n_rot, c->p.theta_base, c->p.freq_scale, c->p.ext_factor, c->p.attn_factor, c->p.beta_fast,
		 c->p.beta_slow, c->p.n_ctx_orig, c->ff == FF_LLAMA3 ? "llama3" : c->ff ? "random" : "none", c->max_pos,
		 c->in_place ? " in place" : "", c->run ? " consecutive" : "");
	conf_check_within(what, got, want, tol, n);
	conf_free(&tx);
	conf_free(&ty);
	conf_free(&tp);
	conf_free(&tf);
	free(x);
	free(got);
	free(ff);
	free(pos);
	free(want);
	free(tol);
}

#define P(mode, n_rot, base, fs, ext, attn, bf, bs, orig) \
	{ sizeof(gllmk_rope_ext_params), GLLMK_ROPE_##mode, n_rot, base, fs, ext, attn, bf, bs, orig }

static const struct rope_ext_case rope_ext_cases[] = {
	/* Llama 3.1: rope_freqs, base 500000 (odd token counts, positions to 1e5) */
	{ 1, 4, 128, P(NORMAL, 0, 500000.0f, 1.0f, 0, 0, 0, 0, 0), FF_LLAMA3, 100000, 0, 0 },
	{ 7, 4, 128, P(NORMAL, 0, 500000.0f, 1.0f, 0, 0, 0, 0, 0), FF_LLAMA3, 4096, 0, 0 },
	{ 33, 3, 128, P(NEOX, 0, 500000.0f, 1.0f, 0, 0, 0, 0, 0), FF_LLAMA3, 100000, 0, 0 },
	{ 33, 2, 80, P(NORMAL, 64, 500000.0f, 1.0f, 0, 0, 0, 0, 0), FF_LLAMA3, 100000, 1, 0 },
	{ 300, 2, 64, P(NORMAL, 0, 500000.0f, 1.0f, 0, 0, 0, 0, 0), FF_LLAMA3, 131071, 0, 1 },
	/* arbitrary factors with linear scaling and attn_factor */
	{ 7, 3, 64, P(NEOX, 48, 10000.0f, 0.5f, 0, 0.75f, 0, 0, 0), FF_RANDOM, 8191, 0, 0 },
	/* YaRN: Qwen-style (base 1e6, factor 4, n_ctx_orig 32768), betas by default */
	{ 7, 4, 128, P(NEOX, 0, 1e6f, 0.25f, 1.0f, 0, 0, 0, 32768), FF_NONE, 100000, 0, 0 },
	{ 33, 2, 128, P(NORMAL, 0, 1e6f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f, 32768), FF_NONE, 100000, 0, 0 },
	/* YaRN at other training contexts, explicit betas and attn_factor */
	{ 33, 2, 64, P(NORMAL, 0, 10000.0f, 0.125f, 1.0f, 0, 0, 0, 2048), FF_NONE, 16383, 0, 0 },
	{ 1, 3, 64, P(NEOX, 0, 10000.0f, 0.5f, 1.0f, 0.9f, 24.0f, 2.0f, 4096), FF_NONE, 8191, 0, 0 },
	{ 7, 2, 96, P(NEOX, 64, 10000.0f, 0.0625f, 0.5f, 0, 0, 0, 8192), FF_NONE, 100000, 0, 0 },
	{ 77, 3, 128, P(NORMAL, 0, 500000.0f, 0.25f, 1.0f, 0, 0, 0, 8192), FF_NONE, 32767, 1, 1 },
	/* YaRN and factors together */
	{ 7, 2, 64, P(NORMAL, 32, 10000.0f, 0.25f, 1.0f, 0.8f, 0, 0, 4096), FF_LLAMA3, 20000, 0, 0 },
	/* long: 4097 tokens */
	{ 4097, 2, 64, P(NEOX, 0, 500000.0f, 1.0f, 0, 0, 0, 0, 0), FF_LLAMA3, 100000, 0, 0 },
	{ 4097, 1, 64, P(NORMAL, 0, 1e6f, 0.25f, 1.0f, 0, 0, 0, 32768), FF_NONE, 100000, 0, 1 },
};

#undef P

/* gllmk_rope and rope_ext with the defaults are one path: equal bit for bit,
 * and so is a caller struct that ends at freq_scale (fields past struct_size
 * read as 0, whatever the bytes beyond hold). */
static void rope_ext_defaults(struct conf_rng *rng, int32_t mode, int64_t t, int32_t n_rot)
{
	int64_t shape[3] = { t, 3, 64 };
	size_t n = conf_numel(3, shape);
	float *x = conf_xmalloc(n * sizeof(float)), *a = conf_xmalloc(n * sizeof(float));
	float *b = conf_xmalloc(n * sizeof(float));
	int32_t *pos = conf_xmalloc((size_t)t * sizeof(int32_t));
	struct conf_tensor tx, tp, ty;
	gllmk_rope_params rp = { mode, n_rot, 10000.0f, 0.5f };
	gllmk_rope_ext_params ep;
	char what[96];

	conf_fill_uniform(rng, x, n, -2, 2);
	for (int64_t i = 0; i < t; i++)
		pos[i] = (int32_t)conf_rng_int(rng, 0, 100000);
	tx = conf_upload(GLLMK_F32, 3, shape, x);
	tp = conf_upload(GLLMK_I32, 1, &shape[0], pos);
	ty = conf_output(GLLMK_F32, 3, shape);
	conf_ok(gllmk_rope(conf.ctx, &ty.t, &tx.t, &tp.t, &rp));
	conf_download(&ty, a);
	memset(&ep, 0x5a, sizeof(ep)); /* garbage past struct_size */
	ep.struct_size = (uint32_t)(offsetof(gllmk_rope_ext_params, freq_scale) + sizeof(float));
	ep.mode = mode;
	ep.n_rot = n_rot;
	ep.theta_base = rp.theta_base;
	ep.freq_scale = rp.freq_scale;
	conf_poison(&ty);
	conf_ok(gllmk_rope_ext(conf.ctx, &ty.t, &tx.t, &tp.t, NULL, &ep));
	conf_download(&ty, b);
	snprintf(what, sizeof(what), "rope vs rope_ext (short struct) %s t=%lld", mode ? "neox" : "normal",
		 (long long)t);
	conf_check_equal_bytes(what, b, a, n * sizeof(float));
	ep = (gllmk_rope_ext_params){ sizeof(ep), mode, n_rot, rp.theta_base, rp.freq_scale, 0, 0, 0, 0, 0 };
	conf_poison(&ty);
	conf_ok(gllmk_rope_ext(conf.ctx, &ty.t, &tx.t, &tp.t, NULL, &ep));
	conf_download(&ty, b);
	snprintf(what, sizeof(what), "rope vs rope_ext (zero YaRN) %s t=%lld", mode ? "neox" : "normal", (long long)t);
	conf_check_equal_bytes(what, b, a, n * sizeof(float));
	conf_free(&tx);
	conf_free(&tp);
	conf_free(&ty);
	free(x);
	free(a);
	free(b);
	free(pos);
}

static void test_rope_ext(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("rope_ext");
	conf_rng_init(&rng, "rope_ext");
	for (size_t i = 0; i < sizeof(rope_ext_cases) / sizeof(rope_ext_cases[0]); i++) {
		if (conf.quick && rope_ext_cases[i].t > 1000)
			continue;
		rope_ext_case(&rng, &rope_ext_cases[i]);
	}
	rope_ext_defaults(&rng, GLLMK_ROPE_NORMAL, 7, 0);
	rope_ext_defaults(&rng, GLLMK_ROPE_NEOX, 33, 48);
	/* The token count walks the lengths, Llama 3 factors throughout. */
	for (size_t l = 0; l + 1 < conf_lengths_active(); l++) {
		struct rope_ext_case c = {
			conf_lengths[l], 2, 64,
			{ sizeof(gllmk_rope_ext_params), GLLMK_ROPE_NEOX, 0, 500000.0f, 1.0f, 0, 0, 0, 0, 0 },
			FF_LLAMA3, 0, 0, 0,
		};

		c.max_pos = (int32_t)c.t - 1;
		rope_ext_case(&rng, &c);
	}
	conf_covered("rope_ext");
}

CONF_GROUP(rope_ext) = {
	cmocka_unit_test(test_rope_ext),
};
CONF_GROUP_END(rope_ext);
