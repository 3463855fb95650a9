/* compare: every operator also runs on cpu-generic, on copies of its
 * arguments, and an output whose error exceeds the op's tolerance is
 * reported with the call number, where, and both values.
 *
 * The layer opens its own context on cpu-generic through the public API,
 * with GLLMK_OPEN_NO_LAYERS (so it does not wrap itself) and
 * GLLMK_OPEN_NO_ENV, at the first compared call, and closes it when the
 * caller's context closes (the core's loader lock, held around a layer's
 * close, is recursive for this); one context is used by one thread at a
 * time (SPEC/ABI.md), so neither needs a lock. Every argument's extent is read back from the plugin before the
 * op runs (an in-place op overwrites its input) and written into a buffer
 * of its own on the reference context, freed after the comparison.
 *
 * The error is per row: the largest |got - want| over the row's largest
 * |want|, the scale most of SPEC/TOLERANCES.md's bounds are written in.
 * The tolerances below are those bounds in that measure (SPEC/DEBUG.md has
 * the table); exact ops must match exactly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug.h"

struct debug_compare {
	gllmk_context *ctx;             /* the layer's reference context */
	gllmk_buffer *buf[DEBUG_MAX_ARGS];
	gllmk_tensor t[DEBUG_MAX_ARGS];
	void *host[DEBUG_MAX_ARGS];   /* the arguments as they were before the op */
	uint64_t bytes[DEBUG_MAX_ARGS];
	gllmk_status st;
	int ran;
};

static void compare_release(struct debug_call *c)
{
	struct debug_ctx *d = c->d;
	struct debug_compare *m = c->cmp;
	int i;

	for (i = 0; i < DEBUG_MAX_ARGS; i++) {
		free(m->host[i]);
		if (m->buf[i])
			d->api.buffer_free(m->buf[i]);
	}
	free(m);
	c->cmp = NULL;
}

/* The reference context, opened at the first compared call. */
static int compare_open(struct debug_call *c)
{
	struct debug_ctx *d = c->d;
	const gllmk_options opts = {
		.struct_size = sizeof(opts),
		.flags = GLLMK_OPEN_NO_LAYERS | GLLMK_OPEN_NO_ENV,
		.plugins = "cpu-generic",
	};

	if (!d->ref && !d->compare_off && d->api.open(&opts, &d->ref) != GLLMK_OK) {
		debug_print(d, "compare: cannot open cpu-generic (%s); compare is off for this context",
			    d->api.last_error());
		d->compare_off = 1;
		d->ref = NULL;
	}
	if (!d->ref)
		return -1;
	c->cmp->ctx = d->ref;
	return 0;
}

/* At the caller's gllmk_close: its reference context goes too. */
void debug_compare_close(struct debug_ctx *d)
{
	if (d->ref)
		d->api.close(d->ref);
	d->ref = NULL;
}

static int compare_copy_arg(struct debug_call *c, int i)
{
	struct debug_ctx *d = c->d;
	struct debug_compare *m = c->cmp;

	m->bytes[i] = debug_view_extent(d, c->t[i]);
	m->host[i] = debug_view_read(d, c, i);
	if (!m->host[i])
		return -1;
	if (d->api.buffer_alloc(m->ctx, m->bytes[i], &m->buf[i]) ||
	    d->api.buffer_write(m->buf[i], 0, m->host[i], m->bytes[i])) {
		debug_print(d, "compare: call #%llu %s: cannot copy %s to cpu-generic: %s",
			    (unsigned long long)c->number, debug_op_names[c->op], c->names[i], d->api.last_error());
		return -1;
	}
	m->t[i] = *c->user[i];
	m->t[i].buf = m->buf[i];
	m->t[i].offset = 0;
	return 0;
}

/* Prepared weights are in the plugin's own layout, which cpu-generic
 * cannot be handed byte for byte: calls that read them are not compared. */
static int reads_prepared(struct debug_call *c)
{
	for (int i = 0; i < c->n_args; i++)
		if (c->t[i] && c->t[i]->buf->layout) {
			if (!c->d->compare_prepared_said)
				debug_print(c->d, "compare: call #%llu %s: %s is prepared weights (the plugin's layout): "
					    "calls that read prepared weights are not compared",
					    (unsigned long long)c->number, debug_op_names[c->op], c->names[i]);
			c->d->compare_prepared_said = 1;
			return 1;
		}
	return 0;
}

void debug_compare_before(struct debug_call *c)
{
	int i;

	if (c->d->compare_off || reads_prepared(c))
		return;
	c->cmp = calloc(1, sizeof(*c->cmp));
	if (!c->cmp)
		return;
	if (compare_open(c) < 0) {
		compare_release(c);
		return;
	}
	for (i = 0; i < c->n_args; i++) {
		if (c->t[i] && compare_copy_arg(c, i) < 0) {
			compare_release(c);
			return;
		}
	}
}

gllmk_context *debug_compare_context(const struct debug_call *c)
{
	return c->cmp->ctx;
}

const gllmk_tensor *debug_compare_tensor(const struct debug_call *c, int arg)
{
	return c->user[arg] ? &c->cmp->t[arg] : NULL;
}

void debug_compare_ran(struct debug_call *c, gllmk_status cmp_status)
{
	c->cmp->st = cmp_status;
	c->cmp->ran = 1;
}

/* ------------------------------------------------------------ tolerances */

/* SPEC/TOLERANCES.md's rt(n): a row reduced over n elements in f32. */
static double rt(int64_t n)
{
	return ldexp(1, -21) + ldexp(1, -23) * sqrt((double)n);
}

static int64_t row_len(const gllmk_tensor *t)
{
	return t->shape[t->ndim - 1];
}

struct pos_max {
	double max;
};

static int pos_row(const unsigned char *row, int64_t n, const int64_t *idx, void *user)
{
	struct pos_max *p = user;
	int64_t i;
	int32_t v;

	(void)idx;
	for (i = 0; i < n; i++) {
		memcpy(&v, row + 4 * i, 4);
		if (fabs((double)v) > p->max)
			p->max = fabs((double)v);
	}
	return 0;
}

/* An angle formed in f32 errs by (24 + 2i) ulps of itself on pair i. */
static double rope_tolerance(const struct debug_call *c)
{
	struct pos_max p = { 1.0 };

	debug_view_rows(&c->cmp->t[2], c->cmp->host[2], pos_row, &p);
	return ldexp(1, -20) + (24.0 + (double)row_len(c->user[1])) * ldexp(1, -24) * p.max;
}

static double tolerance(const struct debug_call *c)
{
	switch (c->op) {
	case DEBUG_OP_relu:
	case DEBUG_OP_convert:
	case DEBUG_OP_quantize:
	case DEBUG_OP_argmax:
	case DEBUG_OP_sample:
	case DEBUG_OP_clamp:
	case DEBUG_OP_top_k: /* values are moved, not computed */
	case DEBUG_OP_kv_store: /* bit for bit as convert / quantize */
		return 0.0;
	case DEBUG_OP_add:
	case DEBUG_OP_mul:
	case DEBUG_OP_scale:
	case DEBUG_OP_dequantize:
	case DEBUG_OP_get_rows:
		return ldexp(1, -23);
	case DEBUG_OP_exp:
	case DEBUG_OP_silu:
	case DEBUG_OP_swiglu:
	case DEBUG_OP_tanh:
	case DEBUG_OP_gelu_tanh:
	case DEBUG_OP_gelu_erf:
	case DEBUG_OP_sigmoid:
	case DEBUG_OP_softcap:
	case DEBUG_OP_glu:
		return ldexp(1, -17);
	case DEBUG_OP_moe_route: /* the weights: a softmax over E, then a few roundings */
		return ldexp(1, -16) + rt(row_len(c->user[2]));
	case DEBUG_OP_rms_norm:
		return 2 * rt(row_len(c->user[1]));
	case DEBUG_OP_layer_norm:
		return 16 * rt(row_len(c->user[1]));
	case DEBUG_OP_softmax:
		return ldexp(1, -16) + rt(row_len(c->user[1]));
	case DEBUG_OP_rope:
		return rope_tolerance(c);
	case DEBUG_OP_rope_ext: /* rope's, with room for mscale (YaRN, attn_factor) up to 2 */
		return 2 * rope_tolerance(c);
	case DEBUG_OP_matmul:
	case DEBUG_OP_matmul_batched:
	case DEBUG_OP_matmul_id: /* w is argument 2 of all three; x may be quantized as matmul's */
		if (c->user[2]->dtype == GLLMK_BF16 && (c->d->open_flags & GLLMK_OPEN_BF16_ACTIVATIONS))
			return 1e-2; /* x may be rounded to bf16: 2^-9 per product */
		return debug_dtype_is_float(c->user[2]->dtype) ? 1e-4 : 1e-2;
	case DEBUG_OP_gemm:
	case DEBUG_OP_attention:
	case DEBUG_OP_attention_ext:    /* K/V decoded exactly on both sides; softcap, ALiBi */
	case DEBUG_OP_attention_varlen: /* and sinks move a score by ~1e-7 of itself */
		return 1e-4;
	default:
		return 0.0;
	}
}

/* ------------------------------------------------------------ the walk */

struct diff {
	const gllmk_tensor *t;
	const unsigned char *got_base, *want_base;
	uint64_t rows, bad_rows, elems, bad_elems;
	uint64_t row_bytes;
	double worst, worst_got, worst_want;
	int64_t worst_idx[GLLMK_MAX_DIMS], worst_i;
	int have_worst;
};

static void diff_note(struct diff *f, double err, const int64_t *idx, int64_t i, double got, double want)
{
	if (f->have_worst && !(err > f->worst))
		return;
	f->have_worst = 1;
	f->worst = err;
	f->worst_got = got;
	f->worst_want = want;
	memcpy(f->worst_idx, idx, sizeof(f->worst_idx));
	f->worst_i = i;
}

/* Both NaN, or equal infinities, agree; any other non-finite pair is off
 * by infinitely much. */
static double element_error(double got, double want, double scale)
{
	double diff;

	if (isnan(got) || isnan(want))
		return isnan(got) && isnan(want) ? 0.0 : INFINITY;
	if (isinf(got) || isinf(want))
		return got == want ? 0.0 : INFINITY;
	diff = fabs(got - want);
	return diff <= 1e-30 ? 0.0 : diff / fmax(scale, 1e-30);
}

static int diff_float_row(const unsigned char *row, int64_t n, const int64_t *idx, void *user)
{
	struct diff *f = user;
	const unsigned char *want = f->want_base + (row - f->got_base);
	double scale = 0.0;
	int64_t i;

	for (i = 0; i < n; i++) {
		double w = debug_float_at(f->t->dtype, want, i);

		if (isfinite(w) && fabs(w) > scale)
			scale = fabs(w);
	}
	for (i = 0; i < n; i++) {
		double g = debug_float_at(f->t->dtype, row, i), w = debug_float_at(f->t->dtype, want, i);

		diff_note(f, element_error(g, w, scale), idx, i, g, w);
	}
	return 0;
}

static int diff_i32_row(const unsigned char *row, int64_t n, const int64_t *idx, void *user)
{
	struct diff *f = user;
	const unsigned char *want = f->want_base + (row - f->got_base);
	int32_t g, w;
	int64_t i;

	for (i = 0; i < n; i++) {
		memcpy(&g, row + 4 * i, 4);
		memcpy(&w, want + 4 * i, 4);
		f->elems++;
		if (g == w)
			continue;
		if (!f->bad_elems++)
			diff_note(f, INFINITY, idx, i, g, w);
	}
	return 0;
}

/* Block rows (quantize): the bytes must match. */
static int diff_bytes_row(const unsigned char *row, int64_t n, const int64_t *idx, void *user)
{
	struct diff *f = user;
	const unsigned char *want = f->want_base + (row - f->got_base);

	(void)n;
	f->rows++;
	if (memcmp(row, want, f->row_bytes) && !f->bad_rows++)
		diff_note(f, INFINITY, idx, 0, 0, 0);
	return 0;
}

static void report(struct debug_call *c, int arg, const struct diff *f, double tol)
{
	struct debug_ctx *d = c->d;
	const gllmk_tensor *t = c->user[arg];
	char where[96], shape[96];
	unsigned long long n = (unsigned long long)c->number;
	const char *op = debug_op_names[c->op];

	debug_shape_str(d, t, shape, sizeof(shape));
	debug_index_str(t, f->worst_idx, f->worst_i, where, sizeof(where));
	if (debug_dtype_is_float(t->dtype))
		debug_print(d,
			    "compare: call #%llu %s: %s %s differs from cpu-generic: relative error %.3g > tolerance "
			    "%.3g, worst at %s: got %.9g, cpu-generic %.9g",
			    n, op, c->names[arg], shape, f->worst, tol, where, f->worst_got, f->worst_want);
	else if (t->dtype == GLLMK_I32)
		debug_print(d,
			    "compare: call #%llu %s: %s %s differs from cpu-generic in %llu of %llu elements, "
			    "first at %s: got %.0f, cpu-generic %.0f",
			    n, op, c->names[arg], shape, (unsigned long long)f->bad_elems,
			    (unsigned long long)f->elems, where, f->worst_got, f->worst_want);
	else
		debug_print(d, "compare: call #%llu %s: %s %s differs from cpu-generic in %llu of %llu rows, first row %s",
			    n, op, c->names[arg], shape, (unsigned long long)f->bad_rows,
			    (unsigned long long)f->rows, where);
}

static void compare_output(struct debug_call *c, int arg, double tol)
{
	struct debug_ctx *d = c->d;
	struct debug_compare *m = c->cmp;
	const gllmk_tensor *t = c->user[arg];
	struct diff f = { .t = t };
	void *got, *want;

	got = debug_view_read(d, c, arg);
	want = malloc(m->bytes[arg]);
	if (!got || !want || d->api.buffer_read(m->buf[arg], 0, want, m->bytes[arg]))
		goto out;
	f.got_base = got;
	f.want_base = want;
	if (debug_dtype_is_float(t->dtype)) {
		debug_view_rows(t, got, diff_float_row, &f);
		if (f.have_worst && f.worst > tol)
			report(c, arg, &f, tol);
	} else if (t->dtype == GLLMK_I32) {
		debug_view_rows(t, got, diff_i32_row, &f);
		if (f.bad_elems)
			report(c, arg, &f, tol);
	} else if (!d->api.dtype_row_bytes(t->dtype, row_len(t), &f.row_bytes)) {
		debug_view_rows(t, got, diff_bytes_row, &f);
		if (f.bad_rows)
			report(c, arg, &f, tol);
	}
out:
	free(got);
	free(want);
}

void debug_compare_after(struct debug_call *c)
{
	struct debug_ctx *d = c->d;
	int i;

	if (c->status == GLLMK_OK && c->cmp->ran) {
		if (c->cmp->st != GLLMK_OK) {
			debug_print(d, "compare: call #%llu %s: cpu-generic could not run it: %s",
				    (unsigned long long)c->number, debug_op_names[c->op], d->api.last_error());
		} else {
			double tol = tolerance(c);

			for (i = 0; i < c->n_out; i++)
				if (c->user[i]) /* an optional output left out (top_k's values) */
					compare_output(c, i, tol);
		}
	}
	compare_release(c);
}
