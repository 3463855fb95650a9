/* rms_norm and layer_norm (SPEC/OPERATORS.md "Normalization") against
 * double-precision references, with and without weight and bias, several
 * eps, magnitudes where eps dominates or vanishes, and rows whose mean is
 * large against their spread. Tolerances: SPEC/TOLERANCES.md "Normalization".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf_extra.h"

/* How a case draws its rows: uniform in [center - half, center + half]. */
struct norm_data {
	double center, half;
};

struct norm_case {
	int32_t ndim;
	int64_t shape[4];
	struct norm_data data;
	float eps;
	int with_w, with_b; /* with_b: layer_norm only */
	int in_place;
};

/* The row length and number of rows of a case's x. */
static int64_t row_len(const struct norm_case *c)
{
	return c->shape[c->ndim - 1];
}

struct norm_io {
	size_t n;        /* elements of x */
	float *x, *w, *b, *got;
	double *want, *tol;
};

static void draw_io(struct conf_rng *rng, const struct norm_case *c, struct norm_io *io)
{
	int64_t len = row_len(c);

	io->n = conf_numel(c->ndim, c->shape);
	io->x = conf_xmalloc(io->n * sizeof(float));
	io->got = conf_xmalloc(io->n * sizeof(float));
	io->want = conf_xmalloc(io->n * sizeof(double));
	io->tol = conf_xmalloc(io->n * sizeof(double));
	io->w = conf_xmalloc((size_t)len * sizeof(float));
	io->b = conf_xmalloc((size_t)len * sizeof(float));
	conf_fill_uniform(rng, io->x, io->n, c->data.center - c->data.half, c->data.center + c->data.half);
	conf_fill_uniform(rng, io->w, (size_t)len, -2, 2);
	conf_fill_uniform(rng, io->b, (size_t)len, -1, 1);
}

static void free_io(struct norm_io *io)
{
	free(io->x);
	free(io->w);
	free(io->b);
	free(io->got);
	free(io->want);
	free(io->tol);
}

static void rms_reference(const struct norm_case *c, struct norm_io *io)
{
	int64_t len = row_len(c), rows = (int64_t)io->n / len;
	double rt = conf_reduce_tol(len);

	for (int64_t r = 0; r < rows; r++) {
		const float *x = io->x + r * len;
		double ss = 0, inv;

		for (int64_t i = 0; i < len; i++)
			ss += (double)x[i] * x[i];
		inv = 1 / sqrt(ss / (double)len + (double)c->eps);
		for (int64_t i = 0; i < len; i++) {
			double v = x[i] * inv * (c->with_w ? io->w[i] : 1.0);

			io->want[r * len + i] = v;
			io->tol[r * len + i] = 1e-30 + rt * fabs(v);
		}
	}
}

static void layer_reference(const struct norm_case *c, struct norm_io *io)
{
	int64_t len = row_len(c), rows = (int64_t)io->n / len;
	double rt = conf_reduce_tol(len);

	for (int64_t r = 0; r < rows; r++) {
		const float *x = io->x + r * len;
		double mean = 0, var = 0, inv;

		for (int64_t i = 0; i < len; i++)
			mean += x[i];
		mean /= (double)len;
		for (int64_t i = 0; i < len; i++)
			var += (x[i] - mean) * (x[i] - mean);
		var /= (double)len;
		inv = 1 / sqrt(var + (double)c->eps);
		for (int64_t i = 0; i < len; i++) {
			double xhat = (x[i] - mean) * inv;
			double w = c->with_w ? io->w[i] : 1.0, b = c->with_b ? io->b[i] : 0.0;
			double v = xhat * w + b;

			io->want[r * len + i] = v;
			/* The mean's own f32 error moves every x - mean by up to
			 * rt·|mean|, which the normalisation multiplies by inv. */
			io->tol[r * len + i] =
				1e-30 + rt * (fabs(xhat) + 1 + fabs(mean) * inv) * fabs(w) + 0x1p-23 * fabs(v);
		}
	}
}

static void describe(char *what, size_t len, const char *op, const struct norm_case *c)
{
	char dims[48];

	snprintf(what, len, "%s %s x~%g±%g eps=%g%s%s%s", op, conf_shape_str(dims, sizeof(dims), c->ndim, c->shape),
		 c->data.center, c->data.half, c->eps, c->with_w ? " w" : "", c->with_b ? " b" : "",
		 c->in_place ? " in place" : "");
}

static void norm_case(struct conf_rng *rng, const struct norm_case *c, int layer)
{
	struct norm_io io;
	struct conf_tensor tx, ty = { 0 }, tw, tb;
	const struct conf_tensor *out;
	int64_t len = row_len(c);
	char what[160];

	draw_io(rng, c, &io);
	tx = conf_upload(GLLMK_F32, c->ndim, c->shape, io.x);
	tw = conf_upload(GLLMK_F32, 1, &len, io.w);
	tb = conf_upload(GLLMK_F32, 1, &len, io.b);
	if (c->in_place) {
		out = &tx;
	} else {
		ty = conf_output(GLLMK_F32, c->ndim, c->shape);
		out = &ty;
	}
	if (layer) {
		conf_ok(gllmk_layer_norm(conf.ctx, &out->t, &tx.t, c->with_w ? &tw.t : NULL, c->with_b ? &tb.t : NULL,
					 c->eps));
		layer_reference(c, &io);
	} else {
		conf_ok(gllmk_rms_norm(conf.ctx, &out->t, &tx.t, c->with_w ? &tw.t : NULL, c->eps));
		rms_reference(c, &io);
	}
	conf_download(out, io.got);
	describe(what, sizeof(what), layer ? "layer_norm" : "rms_norm", c);
	conf_check_within(what, io.got, io.want, io.tol, io.n);
	conf_free(&tx);
	conf_free(&ty);
	conf_free(&tw);
	conf_free(&tb);
	free_io(&io);
}

/* Every length with the plain form, then the variants on a few lengths. */
static void run_norm(const char *op, int layer)
{
	static const struct norm_data unit = { 0, 1 }, big = { 0, 1e3 }, tiny = { 0, 1e-4 }, offset = { 100, 1 };
	struct conf_rng rng;

	conf_begin(op);
	conf_rng_init(&rng, op);
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l], rows = n > 4097 ? 2 : 3;

		for (int wb = 0; wb < (layer ? 4 : 2); wb++)
			norm_case(&rng,
				  &(struct norm_case){ 2, { rows, n }, unit, 1e-5f, wb & 1, (wb >> 1) & 1, 0 },
				  layer);
		if (n > 4097) { /* 9 rows, more than 8 MiB: the streaming kernels */
			norm_case(&rng, &(struct norm_case){ 2, { 9, n }, unit, 1e-5f, 1, layer, 0 }, layer);
			continue;
		}
		norm_case(&rng, &(struct norm_case){ 2, { rows, n }, big, 1e-6f, 1, layer, 0 }, layer);
		/* mean(x²) ~ 3e-9: eps decides the result. */
		norm_case(&rng, &(struct norm_case){ 2, { rows, n }, tiny, 1e-5f, 0, 0, 0 }, layer);
		/* eps = 0 (rms_norm; layer_norm of one element would be 0/0). */
		norm_case(&rng, &(struct norm_case){ 2, { rows, n }, tiny, layer ? 1e-9f : 0.0f, 1, 0, 0 },
			  layer);
		norm_case(&rng, &(struct norm_case){ 2, { rows, n }, offset, 1e-2f, 1, layer, 0 }, layer);
		norm_case(&rng, &(struct norm_case){ 3, { 2, 2, n }, unit, 1e-6f, 1, layer, 1 }, layer);
		norm_case(&rng, &(struct norm_case){ 4, { 2, 1, 2, n }, unit, 0.5f, 1, 0, 0 }, layer);
	}
	conf_covered(op);
}

static void test_rms_norm(void **state)
{
	(void)state;
	run_norm("rms_norm", 0);
}

static void test_layer_norm(void **state)
{
	(void)state;
	run_norm("layer_norm", 1);
}

CONF_GROUP(norm) = {
	cmocka_unit_test(test_rms_norm),
	cmocka_unit_test(test_layer_norm),
};
CONF_GROUP_END(norm);
