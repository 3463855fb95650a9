/* Strided views (SPEC/OPERATORS.md "Tensors and views"): inputs that start
 * inside a larger buffer with gaps between rows (the gaps hold NaN, so a
 * plugin that reads them shows it), inputs that repeat a row with stride 0,
 * a head subset of a [T, H, D] tensor, and outputs whose rows sit apart in a
 * poisoned buffer: every element of the view must be right and every byte
 * outside it untouched. The references are the same formulas, in double, as
 * in the op's own test file, with the same tolerances.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_half.h"
#include "ref_quant.h"

#define ROWS 5
#define PAD 36 /* bytes between rows: not a multiple of 16 or 32 */

/* A [rows, n] f32 input at an offset, rows PAD apart, gaps poisoned. */
static struct conf_tensor strided_input(struct conf_rng *rng, float *host, int64_t rows, int64_t n)
{
	conf_fill_uniform(rng, host, (size_t)(rows * n), -4, 4);
	return conf_upload_strided(GLLMK_F32, 2, (int64_t[]){ rows, n }, host, 68, PAD);
}

/* Checks the result of a padded output: values, then the bytes around. */
static void check_output(const char *what, const struct conf_tensor *ty, const double *want,
			 const double *tol, size_t count)
{
	float *got = conf_xmalloc(count * sizeof(float));

	conf_download(ty, got);
	conf_check_within(what, got, want, tol, count);
	conf_check_padding(ty);
	free(got);
}

static double silu(double x)
{
	return x / (1 + exp(-x));
}

/* add, mul in place, scale, silu and swiglu through strided inputs, stride-0
 * rows and padded outputs. */
static void test_views_elementwise(void **state)
{
	int64_t n = 33, shape[2] = { ROWS, n };
	size_t count = ROWS * (size_t)n;
	float *a = conf_xmalloc(count * sizeof(float)), *b = conf_xmalloc((size_t)n * sizeof(float));
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	struct conf_tensor ta, tb, ty;
	struct conf_rng rng;

	(void)state;
	conf_begin("add");
	conf_begin("mul");
	conf_begin("scale");
	conf_begin("silu");
	conf_begin("swiglu");
	conf_rng_init(&rng, "views elementwise");
	ta = strided_input(&rng, a, ROWS, n);
	conf_fill_uniform(&rng, b, (size_t)n, -4, 4);
	/* b: one row repeated by a zero outer stride, at an offset. */
	tb = conf_upload_strided(GLLMK_F32, 1, &n, b, 12, 0);
	tb.t.ndim = 2;
	tb.t.shape[0] = ROWS;
	tb.t.shape[1] = n;
	tb.t.stride[0] = 0;
	tb.t.stride[1] = 4;
	ty = conf_output_padded(GLLMK_F32, 2, shape, PAD);

	conf_ok(gllmk_add(conf.ctx, &ty.t, &ta.t, &tb.t));
	for (size_t i = 0; i < count; i++) {
		want[i] = (double)a[i] + b[i % (size_t)n];
		tol[i] = CONF_TOL_ROUNDED * fabs(want[i]);
	}
	check_output("add strided a, stride-0 b, padded y", &ty, want, tol, count);

	conf_poison(&ty);
	conf_ok(gllmk_swiglu(conf.ctx, &ty.t, &ta.t, &tb.t));
	for (size_t i = 0; i < count; i++) {
		want[i] = silu(a[i]) * b[i % (size_t)n];
		tol[i] = 1e-30 + (CONF_TOL_TRANSC + CONF_TOL_ROUNDED) * fabs(want[i]);
	}
	check_output("swiglu strided gate, stride-0 up, padded y", &ty, want, tol, count);

	conf_poison(&ty);
	conf_ok(gllmk_silu(conf.ctx, &ty.t, &ta.t));
	for (size_t i = 0; i < count; i++) {
		want[i] = silu(a[i]);
		tol[i] = 1e-30 + CONF_TOL_TRANSC * fabs(want[i]);
	}
	check_output("silu strided x, padded y", &ty, want, tol, count);

	conf_poison(&ty);
	conf_ok(gllmk_scale(conf.ctx, &ty.t, &ta.t, -1.5f));
	for (size_t i = 0; i < count; i++) {
		want[i] = a[i] * -1.5;
		tol[i] = CONF_TOL_ROUNDED * fabs(want[i]);
	}
	check_output("scale strided x, padded y", &ty, want, tol, count);

	/* In place on the strided view: the gaps must stay poison. */
	conf_ok(gllmk_mul(conf.ctx, &ta.t, &ta.t, &tb.t));
	for (size_t i = 0; i < count; i++) {
		want[i] = (double)a[i] * b[i % (size_t)n];
		tol[i] = CONF_TOL_ROUNDED * fabs(want[i]);
	}
	check_output("mul in place on a strided view", &ta, want, tol, count);

	conf_free(&ta);
	conf_free(&tb);
	conf_free(&ty);
	free(a);
	free(b);
	free(want);
	free(tol);
	conf_covered("add");
	conf_covered("mul");
	conf_covered("scale");
	conf_covered("silu");
	conf_covered("swiglu");
}

/* Heads h0 .. h0+h-1 of a [t, hall, d] tensor: a view whose outer stride
 * skips the other heads. */
static gllmk_tensor head_subset(const struct conf_tensor *all, int64_t t, int64_t hall, int64_t h0, int64_t h,
				int64_t d)
{
	gllmk_tensor v = all->t;

	v.offset += (uint64_t)(h0 * d * 4);
	v.shape[0] = t;
	v.shape[1] = h;
	v.shape[2] = d;
	v.stride[2] = 4;
	v.stride[1] = d * 4;
	v.stride[0] = hall * d * 4;
	return v;
}

static void rms_rows(const float *x, int64_t rows, int64_t n, const float *w, double *want, double *tol)
{
	for (int64_t r = 0; r < rows; r++) {
		double ss = 0, inv;

		for (int64_t i = 0; i < n; i++)
			ss += (double)x[r * n + i] * x[r * n + i];
		inv = 1 / sqrt(ss / (double)n + 1e-5);
		for (int64_t i = 0; i < n; i++) {
			want[r * n + i] = x[r * n + i] * inv * w[i];
			tol[r * n + i] = 1e-30 + conf_reduce_tol(n) * fabs(want[r * n + i]);
		}
	}
}

/* rms_norm on two heads out of five; layer_norm of one row repeated with a
 * zero stride. Both into padded outputs. */
static void test_views_norm(void **state)
{
	int64_t t = 3, hall = 5, h0 = 2, h = 2, d = 64, shape[3] = { t, h, d };
	size_t all = (size_t)(t * hall * d), count = (size_t)(t * h * d);
	float *x = conf_xmalloc(all * sizeof(float)), *sub = conf_xmalloc(count * sizeof(float));
	float *w = conf_xmalloc((size_t)d * sizeof(float));
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	struct conf_tensor tx, tw, ty, tz;
	gllmk_tensor xv;
	struct conf_rng rng;

	(void)state;
	conf_begin("rms_norm");
	conf_begin("layer_norm");
	conf_rng_init(&rng, "views norm");
	conf_fill_uniform(&rng, x, all, -2, 2);
	conf_fill_uniform(&rng, w, (size_t)d, -2, 2);
	tx = conf_upload(GLLMK_F32, 3, (int64_t[]){ t, hall, d }, x);
	tw = conf_upload(GLLMK_F32, 1, &d, w);
	xv = head_subset(&tx, t, hall, h0, h, d);
	ty = conf_output_padded(GLLMK_F32, 3, shape, PAD);
	conf_ok(gllmk_rms_norm(conf.ctx, &ty.t, &xv, &tw.t, 1e-5f));
	for (int64_t i = 0; i < t; i++)
		memcpy(sub + i * h * d, x + (i * hall + h0) * d, (size_t)(h * d) * sizeof(float));
	rms_rows(sub, t * h, d, w, want, tol);
	check_output("rms_norm on heads 2-3 of 5, padded y", &ty, want, tol, count);

	/* layer_norm without w and b, x = row 0 of x repeated t·h times. */
	xv = tx.t;
	xv.ndim = 2;
	xv.shape[0] = t * h;
	xv.shape[1] = d;
	xv.stride[0] = 0;
	xv.stride[1] = 4;
	tz = conf_output_padded(GLLMK_F32, 2, (int64_t[]){ t * h, d }, PAD);
	conf_ok(gllmk_layer_norm(conf.ctx, &tz.t, &xv, NULL, NULL, 1e-5f));
	{
		double mean = 0, var = 0, inv;

		for (int64_t i = 0; i < d; i++)
			mean += x[i];
		mean /= (double)d;
		for (int64_t i = 0; i < d; i++)
			var += (x[i] - mean) * (x[i] - mean);
		inv = 1 / sqrt(var / (double)d + 1e-5);
		for (size_t i = 0; i < count; i++) {
			double xhat = (x[i % (size_t)d] - mean) * inv;

			want[i] = xhat;
			tol[i] = 1e-30 + conf_reduce_tol(d) * (fabs(xhat) + 1 + fabs(mean) * inv) + 0x1p-23 * fabs(xhat);
		}
	}
	check_output("layer_norm of a stride-0 row, padded y", &tz, want, tol, count);

	conf_free(&tx);
	conf_free(&tw);
	conf_free(&ty);
	conf_free(&tz);
	free(x);
	free(sub);
	free(w);
	free(want);
	free(tol);
	conf_covered("rms_norm");
	conf_covered("layer_norm");
}

/* softmax of a strided 3-D x with a strided mask, padded y; then in place. */
static void test_views_softmax(void **state)
{
	int64_t b = 2, r = 3, n = 37, shape[3] = { b, r, n };
	size_t count = (size_t)(b * r * n);
	float *x = conf_xmalloc(count * sizeof(float)), *mask = conf_xmalloc((size_t)(r * n) * sizeof(float));
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	gllmk_softmax_params p = { .scale = 0.5f, .causal = 1 };
	struct conf_tensor tx, tm, ty;
	struct conf_rng rng;

	(void)state;
	conf_begin("softmax");
	conf_rng_init(&rng, "views softmax");
	conf_fill_uniform(&rng, x, count, -4, 4);
	conf_fill_uniform(&rng, mask, (size_t)(r * n), -2, 2);
	tx = conf_upload_strided(GLLMK_F32, 3, shape, x, 20, PAD);
	tm = conf_upload_strided(GLLMK_F32, 2, (int64_t[]){ r, n }, mask, 8, 100);
	ty = conf_output_padded(GLLMK_F32, 3, shape, PAD);
	conf_ok(gllmk_softmax(conf.ctx, &ty.t, &tx.t, &tm.t, &p));
	for (int64_t row = 0; row < b * r; row++) {
		int64_t i = row % r, last = i + (n - r);
		double zmax = -INFINITY, sum = 0;
		double *wr = want + row * n;

		for (int64_t j = 0; j < n; j++) {
			wr[j] = j > last ? -INFINITY : 0.5 * x[row * n + j] + mask[i * n + j];
			zmax = wr[j] > zmax ? wr[j] : zmax;
		}
		for (int64_t j = 0; j < n; j++)
			sum += (wr[j] = exp(wr[j] - zmax));
		for (int64_t j = 0; j < n; j++) {
			wr[j] /= sum;
			tol[row * n + j] = 1e-30 + wr[j] * (CONF_TOL_TRANSC + conf_reduce_tol(n) + 0x1p-19);
		}
	}
	check_output("softmax strided x and mask, padded y", &ty, want, tol, count);
	conf_ok(gllmk_softmax(conf.ctx, &tx.t, &tx.t, &tm.t, &p));
	check_output("softmax in place on a strided view", &tx, want, tol, count);
	conf_free(&tx);
	conf_free(&tm);
	conf_free(&ty);
	free(x);
	free(mask);
	free(want);
	free(tol);
	conf_covered("softmax");
}

/* rope on heads 1-3 of 4 into a padded output, normal pairs. */
static void test_views_rope(void **state)
{
	int64_t t = 4, hall = 4, h0 = 1, h = 3, d = 16, shape[3] = { t, h, d };
	size_t all = (size_t)(t * hall * d), count = (size_t)(t * h * d);
	float *x = conf_xmalloc(all * sizeof(float));
	int32_t pos[4] = { 0, 1, 17, 300 };
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	gllmk_rope_params p = { .mode = GLLMK_ROPE_NORMAL, .n_rot = 0, .theta_base = 10000.0f, .freq_scale = 1.0f };
	struct conf_tensor tx, tp, ty;
	gllmk_tensor xv;
	struct conf_rng rng;

	(void)state;
	conf_begin("rope");
	conf_rng_init(&rng, "views rope");
	conf_fill_uniform(&rng, x, all, -2, 2);
	tx = conf_upload(GLLMK_F32, 3, (int64_t[]){ t, hall, d }, x);
	tp = conf_upload_strided(GLLMK_I32, 1, &t, pos, 16, 0);
	xv = head_subset(&tx, t, hall, h0, h, d);
	ty = conf_output_padded(GLLMK_F32, 3, shape, PAD);
	conf_ok(gllmk_rope(conf.ctx, &ty.t, &xv, &tp.t, &p));
	for (int64_t ti = 0; ti < t; ti++)
		for (int64_t hi = 0; hi < h; hi++)
			for (int64_t i = 0; i < d / 2; i++) {
				const float *xr = x + (ti * hall + h0 + hi) * d;
				double *wr = want + (ti * h + hi) * d, *tr = tol + (ti * h + hi) * d;
				double th = pos[ti] * pow(10000.0, -2.0 * (double)i / (double)d);
				double a = xr[2 * i], bb = xr[2 * i + 1];

				wr[2 * i] = a * cos(th) - bb * sin(th);
				wr[2 * i + 1] = a * sin(th) + bb * cos(th);
				tr[2 * i] = tr[2 * i + 1] =
					(fabs(a) + fabs(bb)) * ((24 + 2 * (double)i) * 0x1p-24 * th + 0x1p-21) +
					0x1p-23 * (fabs(a) + fabs(bb));
			}
	check_output("rope on heads 1-3 of 4, padded y", &ty, want, tol, count);
	conf_free(&tx);
	conf_free(&tp);
	conf_free(&ty);
	free(x);
	free(want);
	free(tol);
	conf_covered("rope");
}

/* get_rows from tables whose rows sit apart (f32 and q8_0), ids at an
 * offset, into a padded output. */
static void get_rows_view(struct conf_rng *rng, gllmk_dtype dt, int64_t k)
{
	int64_t v = 9, n = 6;
	size_t rb = ref_row_bytes(dt, k), count = (size_t)(n * k);
	uint8_t *table = conf_xmalloc(rb * (size_t)v);
	int32_t ids[6] = { 8, 0, 3, 3, 7, 1 };
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	struct conf_tensor tt, ti, ty;
	char what[64];

	for (int64_t r = 0; r < v; r++)
		ref_random_row(dt, rng, table + (size_t)r * rb, k);
	tt = conf_upload_strided(dt, 2, (int64_t[]){ v, k }, table, 40, 6);
	ti = conf_upload_strided(GLLMK_I32, 1, &n, ids, 28, 0);
	ty = conf_output_padded(GLLMK_F32, 2, (int64_t[]){ n, k }, PAD);
	conf_ok(gllmk_get_rows(conf.ctx, &ty.t, &tt.t, &ti.t));
	for (int64_t i = 0; i < n; i++)
		ref_decode_row(dt, table + (size_t)ids[i] * rb, want + i * k, k);
	ref_ulp_tolerance(want, tol, count);
	snprintf(what, sizeof(what), "get_rows %s strided table, ids at an offset", ref_dtype_name(dt));
	check_output(what, &ty, want, tol, count);
	conf_free(&tt);
	conf_free(&ti);
	conf_free(&ty);
	free(table);
	free(want);
	free(tol);
}

static void test_views_get_rows(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("get_rows");
	conf_rng_init(&rng, "views get_rows");
	get_rows_view(&rng, GLLMK_F32, 33);
	get_rows_view(&rng, GLLMK_Q8_0, 64);
	get_rows_view(&rng, GLLMK_Q4_K, 256);
	conf_covered("get_rows");
}

/* convert f32 -> f16 from a strided view into a padded output, and f16 ->
 * f32 back from that padded view. */
static void test_views_convert(void **state)
{
	int64_t n = 33, shape[2] = { ROWS, n };
	size_t count = ROWS * (size_t)n;
	float *x = conf_xmalloc(count * sizeof(float));
	uint16_t *half = conf_xmalloc(count * sizeof(uint16_t)), *want16 = conf_xmalloc(count * sizeof(uint16_t));
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	struct conf_tensor tx, th, ty;
	struct conf_rng rng;

	(void)state;
	conf_begin("convert");
	conf_rng_init(&rng, "views convert");
	tx = strided_input(&rng, x, ROWS, n);
	th = conf_output_padded(GLLMK_F16, 2, shape, 6);
	conf_ok(gllmk_convert(conf.ctx, &th.t, &tx.t));
	conf_download(&th, half);
	for (size_t i = 0; i < count; i++)
		want16[i] = ref_f16_bits(x[i]);
	conf_check_equal_bytes("convert f32->f16 strided x, padded y", half, want16, count * sizeof(uint16_t));
	conf_check_padding(&th);

	ty = conf_output_padded(GLLMK_F32, 2, shape, PAD);
	conf_ok(gllmk_convert(conf.ctx, &ty.t, &th.t));
	for (size_t i = 0; i < count; i++) {
		want[i] = ref_f16_value(want16[i]);
		tol[i] = 0;
	}
	check_output("convert f16->f32 from a padded view", &ty, want, tol, count);
	conf_free(&tx);
	conf_free(&th);
	conf_free(&ty);
	free(x);
	free(half);
	free(want16);
	free(want);
	free(tol);
	conf_covered("convert");
}

/* argmax and sample (top_k 1: the top candidate) of strided rows into ids
 * with poison around them. */
static void test_views_sampling(void **state)
{
	int64_t r = ROWS, n = 33;
	size_t count = (size_t)(r * n);
	float *x = conf_xmalloc(count * sizeof(float)), u[ROWS] = { 0.1f, 0.5f, 0.9f, 0.0f, 0.99f };
	int32_t got[ROWS], want[ROWS];
	gllmk_sample_params p = { .temperature = 0.8f, .top_k = 1, .top_p = 1.0f };
	struct conf_tensor tx, tids;
	struct conf_rng rng;

	(void)state;
	conf_begin("argmax");
	conf_begin("sample");
	conf_rng_init(&rng, "views sampling");
	tx = strided_input(&rng, x, r, n);
	for (int64_t i = 0; i < r; i++) {
		want[i] = 0;
		for (int64_t j = 1; j < n; j++)
			if (x[i * n + j] > x[i * n + want[i]])
				want[i] = (int32_t)j;
	}
	tids = conf_output_padded(GLLMK_I32, 1, &r, 12);
	conf_ok(gllmk_argmax(conf.ctx, &tids.t, &tx.t));
	conf_download(&tids, got);
	conf_check_equal_i32("argmax strided x", got, want, (size_t)r);
	conf_check_padding(&tids);
	conf_poison(&tids);
	conf_ok(gllmk_sample(conf.ctx, &tids.t, &tx.t, u, &p));
	conf_download(&tids, got);
	conf_check_equal_i32("sample top_k=1 strided x", got, want, (size_t)r);
	conf_check_padding(&tids);
	conf_free(&tx);
	conf_free(&tids);
	free(x);
	conf_covered("argmax");
	conf_covered("sample");
}

CONF_GROUP(views) = {
	cmocka_unit_test(test_views_elementwise),
	cmocka_unit_test(test_views_norm),
	cmocka_unit_test(test_views_softmax),
	cmocka_unit_test(test_views_rope),
	cmocka_unit_test(test_views_get_rows),
	cmocka_unit_test(test_views_convert),
	cmocka_unit_test(test_views_sampling),
};
CONF_GROUP_END(views);
