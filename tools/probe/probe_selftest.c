/* gllmk-probe --plugin NAME: a one-second self-test of one plugin.
 *
 * A small matmul (f32, f16 and q8_0 weights), an rms_norm and a causal
 * softmax run on the named plugin and on cpu-generic, both checked against a
 * double-precision computation written here from SPEC/OPERATORS.md. Rounds
 * with fresh random inputs repeat until a second has passed. The errors are
 * norm-wise (||got − ref|| / ||ref||); the tolerances are in SPEC/PROBE.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_report.h"
#include "probe_tensor.h"

#define SELFTEST_SECONDS 1.0
#define SELFTEST_MAX_ROUNDS 64

struct st_case;

/* Host inputs of one round and the output size. */
struct st_data {
	float *x, *w, *bias;
	void *w_enc;      /* w in the case's dtype */
	double *w_dec;    /* w decoded exactly as the plugin must decode it */
	size_t n_out;
};

struct st_case {
	const char *name;
	gllmk_dtype wdt;
	int64_t m, k, n;  /* matmul M, K, N; rows (m), columns (n) and matrices (k) otherwise */
	double tol;
	void (*make)(const struct st_case *c, struct st_data *d, struct prng *r);
	void (*ref)(const struct st_case *c, const struct st_data *d, double *out);
	const gllmk_tensor *(*call)(struct arena *a, const struct st_case *c, const struct st_data *d);
};

/* ------------------------------------------------------------- matmul */

static void matmul_make(const struct st_case *c, struct st_data *d, struct prng *r)
{
	size_t nw = (size_t)(c->n * c->k);

	d->x = malloc(sizeof(float) * (size_t)(c->m * c->k));
	d->w = malloc(sizeof(float) * nw);
	d->bias = malloc(sizeof(float) * (size_t)c->n);
	d->w_enc = malloc(nw * 4);
	d->w_dec = malloc(sizeof(double) * nw);
	d->n_out = (size_t)(c->m * c->n);
	if (!d->x || !d->w || !d->bias || !d->w_enc || !d->w_dec)
		return;
	prng_fill(r, d->x, (size_t)(c->m * c->k), -1.0, 1.0);
	prng_fill(r, d->w, nw, -1.0, 1.0);
	prng_fill(r, d->bias, (size_t)c->n, -1.0, 1.0);
	switch (c->wdt) {
	case GLLMK_F16:
		for (size_t i = 0; i < nw; i++) {
			((uint16_t *)d->w_enc)[i] = f32_to_f16(d->w[i]);
			d->w_dec[i] = f16_to_f32(((uint16_t *)d->w_enc)[i]);
		}
		break;
	case GLLMK_Q8_0:
		q8_0_encode(d->w, d->w_enc, nw);
		q8_0_decode(d->w_enc, d->w_dec, nw);
		break;
	default:
		memcpy(d->w_enc, d->w, nw * sizeof(float));
		for (size_t i = 0; i < nw; i++)
			d->w_dec[i] = d->w[i];
	}
}

static void matmul_ref(const struct st_case *c, const struct st_data *d, double *y)
{
	for (int64_t i = 0; i < c->m; i++)
		for (int64_t j = 0; j < c->n; j++) {
			double s = d->bias[j];

			for (int64_t l = 0; l < c->k; l++)
				s += (double)d->x[i * c->k + l] * d->w_dec[j * c->k + l];
			y[i * c->n + j] = s;
		}
}

static const gllmk_tensor *matmul_call(struct arena *a, const struct st_case *c, const struct st_data *d)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(c->m, c->n));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, d->x, SHAPE(c->m, c->k));
	const gllmk_tensor *w = arena_new(a, c->wdt, d->w_enc, SHAPE(c->n, c->k));
	const gllmk_tensor *b = arena_new(a, GLLMK_F32, d->bias, SHAPE(c->n));

	if (!a->st)
		arena_check(a, gllmk_matmul(a->ctx, y, x, w, b));
	return y;
}

/* ----------------------------------------------------------- rms_norm */

#define NORM_EPS 1e-6f

static void rows_make(const struct st_case *c, struct st_data *d, struct prng *r)
{
	size_t n = (size_t)(c->k * c->m * c->n);

	d->x = malloc(sizeof(float) * n);
	d->w = malloc(sizeof(float) * (size_t)c->n);
	d->n_out = n;
	if (!d->x || !d->w)
		return;
	prng_fill(r, d->x, n, -4.0, 4.0);
	prng_fill(r, d->w, (size_t)c->n, 0.5, 1.5);
}

static void rms_norm_ref(const struct st_case *c, const struct st_data *d, double *y)
{
	for (int64_t i = 0; i < c->m; i++) {
		const float *x = d->x + i * c->n;
		double ss = 0.0, inv;

		for (int64_t j = 0; j < c->n; j++)
			ss += (double)x[j] * x[j];
		inv = 1.0 / sqrt(ss / (double)c->n + NORM_EPS);
		for (int64_t j = 0; j < c->n; j++)
			y[i * c->n + j] = x[j] * inv * d->w[j];
	}
}

static const gllmk_tensor *rms_norm_call(struct arena *a, const struct st_case *c, const struct st_data *d)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(c->m, c->n));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, d->x, SHAPE(c->m, c->n));
	const gllmk_tensor *w = arena_new(a, GLLMK_F32, d->w, SHAPE(c->n));

	if (!a->st)
		arena_check(a, gllmk_rms_norm(a->ctx, y, x, w, NORM_EPS));
	return y;
}

/* ------------------------------------------------------------ softmax */

#define SOFTMAX_SCALE 0.5f

/* k matrices of m rows of n; row i sees columns j <= i + (n - m). */
static void softmax_ref(const struct st_case *c, const struct st_data *d, double *y)
{
	for (int64_t r = 0; r < c->k * c->m; r++) {
		const float *x = d->x + r * c->n;
		int64_t seen = r % c->m + (c->n - c->m) + 1;
		double mx = -INFINITY, sum = 0.0;

		for (int64_t j = 0; j < seen; j++)
			mx = fmax(mx, SOFTMAX_SCALE * (double)x[j]);
		for (int64_t j = 0; j < c->n; j++) {
			y[r * c->n + j] = j < seen ? exp(SOFTMAX_SCALE * (double)x[j] - mx) : 0.0;
			sum += y[r * c->n + j];
		}
		for (int64_t j = 0; j < c->n; j++)
			y[r * c->n + j] /= sum;
	}
}

static const gllmk_tensor *softmax_call(struct arena *a, const struct st_case *c, const struct st_data *d)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(c->k, c->m, c->n));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, d->x, SHAPE(c->k, c->m, c->n));
	gllmk_softmax_params p = { .scale = SOFTMAX_SCALE, .causal = 1 };

	if (!a->st)
		arena_check(a, gllmk_softmax(a->ctx, y, x, NULL, &p));
	return y;
}

/* ------------------------------------------------------------- driver */

static const struct st_case cases[] = {
	{ "matmul f32 33x512x129", GLLMK_F32, 33, 512, 129, 1e-5, matmul_make, matmul_ref, matmul_call },
	{ "matmul f16 7x1024x65", GLLMK_F16, 7, 1024, 65, 2e-3, matmul_make, matmul_ref, matmul_call },
	{ "matmul q8_0 4x1024x96", GLLMK_Q8_0, 4, 1024, 96, 1e-2, matmul_make, matmul_ref, matmul_call },
	{ "rms_norm 64x4097", GLLMK_F32, 64, 1, 4097, 1e-5, rows_make, rms_norm_ref, rms_norm_call },
	{ "softmax 2x33x1000 causal", GLLMK_F32, 33, 2, 1000, 1e-5, rows_make, softmax_ref, softmax_call },
};

_Static_assert(sizeof(cases) / sizeof(cases[0]) <= PROBE_MAX_CHECKS, "PROBE_MAX_CHECKS too small");

static void data_free(struct st_data *d)
{
	free(d->x);
	free(d->w);
	free(d->bias);
	free(d->w_enc);
	free(d->w_dec);
}

/* Runs the case on ctx; the output lands in out (n_out floats). */
static gllmk_status run_on(gllmk_context *ctx, const struct st_case *c, const struct st_data *d, float *out,
			   struct probe_check *chk)
{
	struct arena a = { .ctx = ctx };
	const gllmk_tensor *y = c->call(&a, c, d);

	if (!a.st)
		arena_check(&a, gllmk_sync(ctx));
	if (!a.st)
		arena_read(&a, y, out);
	if (a.st && chk->status == GLLMK_OK) {
		chk->status = a.st;
		probe_set(chk->message, "%s: %s", gllmk_context_plugin(ctx), a.err);
	}
	arena_free(&a);
	return a.st;
}

static void one_round(gllmk_context *plugin, gllmk_context *generic, const struct st_case *c,
		      struct probe_check *chk, struct prng *r)
{
	struct st_data d = { 0 };
	double *ref;
	float *got, *gen;

	c->make(c, &d, r);
	ref = malloc(sizeof(double) * d.n_out);
	got = malloc(sizeof(float) * d.n_out);
	gen = malloc(sizeof(float) * d.n_out);
	if (!d.x || !d.w || !ref || !got || !gen) {
		chk->status = GLLMK_E_NO_MEMORY;
		probe_copy(chk->message, "gllmk-probe: out of host memory");
	} else if (run_on(plugin, c, &d, got, chk) == GLLMK_OK) {
		c->ref(c, &d, ref);
		chk->err_ref = fmax(chk->err_ref, rel_error(got, ref, d.n_out));
		if (generic && run_on(generic, c, &d, gen, chk) == GLLMK_OK)
			chk->err_generic = fmax(chk->err_generic, rel_error_f(got, gen, d.n_out));
	}
	chk->ok = chk->status == GLLMK_OK && chk->err_ref <= chk->tol &&
		  (!generic || chk->err_generic <= 2.0 * chk->tol);
	free(ref);
	free(got);
	free(gen);
	data_free(&d);
}

void probe_selftest(struct probe_selftest *st, const struct probe_options *opt, const char *plugin)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	gllmk_context *ctx, *generic = NULL;
	struct prng rng = { 0x5eedULL };
	char ignored[16];
	double t0;

	*st = (struct probe_selftest){ .ran = true, .n_checks = (int)n };
	probe_copy(st->plugin, plugin);
	if (probe_open_named(opt, plugin, &ctx, st->error, sizeof(st->error)) != GLLMK_OK)
		return;
	if (strcmp(plugin, "cpu-generic") != 0)
		probe_open_named(opt, "cpu-generic", &generic, ignored, sizeof(ignored));
	st->generic = generic != NULL;
	for (size_t i = 0; i < n; i++) {
		probe_copy(st->checks[i].name, cases[i].name);
		st->checks[i].tol = cases[i].tol;
		st->checks[i].err_generic = generic ? 0.0 : -1.0;
	}
	t0 = probe_now();
	do {
		for (size_t i = 0; i < n; i++)
			one_round(ctx, generic, &cases[i], &st->checks[i], &rng);
		st->rounds++;
	} while (probe_now() - t0 < SELFTEST_SECONDS && st->rounds < SELFTEST_MAX_ROUNDS);
	st->seconds = probe_now() - t0;
	st->ok = true;
	for (size_t i = 0; i < n; i++)
		st->ok &= st->checks[i].ok;
	gllmk_close(generic);
	gllmk_close(ctx);
}
