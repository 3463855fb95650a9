/* gllmk_weights_prepare (ABI 1.2): prepared q4_0, q4_K, q5_K, iq4_xs, q2_K
 * and q3_K weights give what the plain ones give, wherever a weight is read, and
 * nothing else may touch them.
 *
 * A plugin with layouts (SPEC/CPU.md, "Prepared weights": every CPU
 * plugin but cpu-neon without sdot) must prepare matrices of those dtypes of rows in groups of 8; the others must decline with
 * GLLMK_E_UNSUPPORTED and *out NULL, which is then all there is to test of
 * them (said on stdout, not passed silently). Results are checked as
 * matmul's (test_matmul.c): each element within ref_matmul's bound on the
 * plain weights' double product, norm-wise from 64 elements; dequantize
 * and get_rows against ref_decode_row within f32's rounding of the
 * format's formula (decode_rtol). The source tensor is freed before some
 * of the reads: the copy must not depend on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

/* 1: the plugin must prepare those dtypes; 0: it must decline; -1:
 * either (cpu-neon prepares where the CPU has sdot). */
static int expects_layout(void)
{
	if (strcmp(conf.plugin, "cpu-neon") == 0)
		return -1;
	return strncmp(conf.plugin, "cpu-", 4) == 0;
}

/* Prepares w; 1 if the plugin made a copy, 0 if it declined as it may. */
static int prepare_or_decline(const char *what, const gllmk_tensor *w, gllmk_buffer **out)
{
	static int said;
	gllmk_status st;

	*out = (gllmk_buffer *)(uintptr_t)1; /* must come back NULL on a decline */
	st = gllmk_weights_prepare(conf.ctx, w, out);
	if (st == GLLMK_OK && *out && expects_layout() != 0)
		return 1;
	if (st == GLLMK_E_UNSUPPORTED && !*out && expects_layout() != 1 && gllmk_last_error()[0]) {
		if (!said++)
			printf("prepared: %s declines (%s): only the refusal is tested\n", conf.plugin, gllmk_last_error());
		return 0;
	}
	conf_fail("%s: gllmk_weights_prepare on %s: got %s, out %s (%s)", what, conf.plugin, gllmk_status_string(st),
		  *out ? "set" : "NULL", gllmk_last_error());
	if (st == GLLMK_OK && *out)
		gllmk_buffer_free(*out);
	return 0;
}

/* The dtypes the CPU plugins prepare. */
static const int32_t prep_dtypes[] = { GLLMK_Q4_0, GLLMK_Q4_K, GLLMK_Q5_K, GLLMK_IQ4_XS, GLLMK_Q2_K, GLLMK_Q3_K };

/* K of k32 blocks of 32 for q4_0; for the others' blocks of 256,
 * 1 + k32 / 8 of them (1 to 17 in the cases below). */
static int64_t prep_k(int32_t dt, int64_t k32)
{
	return dt == GLLMK_Q4_0 ? k32 * 32 : (1 + k32 / 8) * 256;
}

/* ------------------------------------------------------------ matmul */

struct prep_case {
	int64_t m, n, k_blocks;
	int bias, x_padded, y_padded;
	int free_source; /* the plain tensor freed before the copy is read */
	int big;         /* quick mode: n 4104 -> 264, K 4096 -> 1024 */
	int extreme;     /* every quant at its largest, x all 1: the kernels' integer sums at their widest */
};

static const struct prep_case prep_cases[] = {
	{ .m = 1, .n = 8, .k_blocks = 1 },
	{ .m = 1, .n = 40, .k_blocks = 7, .bias = 1, .free_source = 1 },
	{ .m = 2, .n = 16, .k_blocks = 3, .x_padded = 1, .y_padded = 1 },
	{ .m = 3, .n = 8, .k_blocks = 1, .bias = 1 },
	{ .m = 7, .n = 264, .k_blocks = 33, .free_source = 1 },
	/* tiles of 4 activation rows and a short last one; both sides of the
	 * small-M limits (40 rows, q5_K's 16, q2_K's and q3_K's 24; above, the GEMMs decode the
	 * groups) */
	{ .m = 5, .n = 16, .k_blocks = 9, .bias = 1 },
	{ .m = 16, .n = 24, .k_blocks = 5, .bias = 1 },
	{ .m = 23, .n = 24, .k_blocks = 5, .bias = 1, .y_padded = 1 },
	{ .m = 40, .n = 8, .k_blocks = 2, .x_padded = 1 },
	{ .m = 41, .n = 32, .k_blocks = 3, .bias = 1, .y_padded = 1 },
	{ .m = 33, .n = 8, .k_blocks = 17, .x_padded = 1, .free_source = 1 },
	{ .m = 1, .n = 4104, .k_blocks = 128, .bias = 1, .big = 1 },
	{ .m = 100, .n = 32, .k_blocks = 128, .big = 1 },
	{ .m = 512, .n = 16, .k_blocks = 2, .bias = 1 },
	{ .m = 1, .n = 16, .k_blocks = 17, .extreme = 1 },
	{ .m = 5, .n = 8, .k_blocks = 9, .extreme = 1 },
};

/* Weights of dt whose every quant byte is 0xff (each format's largest
 * code, scale and min) and whose f16 d (and K-quants' dmin) is 1/16, and
 * x all 1: products of one sign, as large as the format allows, in every
 * integer sum a kernel keeps. */
static void prep_extreme(int32_t dt, uint8_t *w, int64_t rows, int64_t k, float *x, int64_t x_elems)
{
	const int64_t bytes = ref_block_bytes(dt), blocks = rows * k / (dt == GLLMK_Q4_0 ? 32 : 256);
	const uint16_t sixteenth = 0x2c00;

	/* where d is, and dmin after it (q4_K, q5_K, q2_K) */
	const int64_t d_at = dt == GLLMK_Q2_K ? 80 : dt == GLLMK_Q3_K ? 108 : 0;
	const int dmin = dt == GLLMK_Q4_K || dt == GLLMK_Q5_K || dt == GLLMK_Q2_K;

	memset(w, 0xff, (size_t)(blocks * bytes));
	for (int64_t b = 0; b < blocks; b++) {
		memcpy(w + b * bytes + d_at, &sixteenth, 2);
		if (dmin)
			memcpy(w + b * bytes + d_at + 2, &sixteenth, 2);
	}
	for (int64_t i = 0; i < x_elems; i++)
		x[i] = 1.0f;
}

/* What a decoded element of dt may differ from its double decode: q4_0's
 * d·(u − 8) is exact in f32; the K-quants' d·sc·u − dmin·m (q3_K's
 * d·(sc − 32)·(u − 4)) and iq4_xs's d·(sc − 32)·v round once or twice. */
static double decode_rtol(int32_t dt)
{
	return dt == GLLMK_Q4_0 ? 0.0 : 2.5e-7;
}

/* dequantize of a prepared copy (any rank): every row its plain decode
 * (decode_rtol). */
static void check_dequantize(int32_t dt, const char *what, const gllmk_tensor *p, const uint8_t *w)
{
	const int64_t k = p->shape[p->ndim - 1], rows = (int64_t)conf_numel(p->ndim, p->shape) / k;
	const size_t row_bytes = ref_row_bytes(dt, k);
	float *got = conf_xmalloc(sizeof(float) * (size_t)(rows * k));
	double *want = conf_xmalloc(sizeof(double) * (size_t)(rows * k));
	struct conf_tensor yt = conf_output(GLLMK_F32, p->ndim, p->shape);
	char sub[192];

	for (int64_t i = 0; i < rows; i++)
		ref_decode_row(dt, w + (size_t)i * row_bytes, want + i * k, k);
	conf_ok(gllmk_dequantize(conf.ctx, &yt.t, p));
	conf_download(&yt, got);
	snprintf(sub, sizeof(sub), "%s dequantize", what);
	conf_check_close(sub, got, want, (size_t)(rows * k), 0.0, decode_rtol(dt));
	conf_free(&yt);
	free(got);
	free(want);
}

/* dequantize and get_rows (the first, last, middle and two drawn rows) of
 * a prepared [N, K] copy: the plain rows' decode (decode_rtol). */
static void check_reads(int32_t dt, const char *what, const gllmk_tensor *p, const uint8_t *w, int64_t n, int64_t k,
			struct conf_rng *r)
{
	const size_t row_bytes = ref_row_bytes(dt, k);
	int32_t ids[5] = { (int32_t)(n - 1), 0, (int32_t)conf_rng_int(r, 0, n - 1), (int32_t)conf_rng_int(r, 0, n - 1),
			   (int32_t)(n / 2) };
	int64_t g_shape[2] = { 5, k }, nid = 5;
	float *got = conf_xmalloc(sizeof(float) * (size_t)(5 * k));
	double *rows = conf_xmalloc(sizeof(double) * (size_t)(5 * k));
	struct conf_tensor gt = conf_output(GLLMK_F32, 2, g_shape), it = conf_upload(GLLMK_I32, 1, &nid, ids);
	char sub[192];

	check_dequantize(dt, what, p, w);
	for (int i = 0; i < 5; i++)
		ref_decode_row(dt, w + (size_t)ids[i] * row_bytes, rows + i * k, k);
	conf_ok(gllmk_get_rows(conf.ctx, &gt.t, p, &it.t));
	conf_download(&gt, got);
	snprintf(sub, sizeof(sub), "%s get_rows", what);
	conf_check_close(sub, got, rows, (size_t)(5 * k), 0.0, decode_rtol(dt));
	conf_free(&gt);
	conf_free(&it);
	free(got);
	free(rows);
}

/* A case's host side: weights of dt, f32 x, bias, and y's got / want /
 * bound, rows × n outputs. */
struct prep_host {
	uint8_t *w;
	float *x, *bias, *got;
	double *want, *bound;
};

static struct prep_host prep_host_draw(int32_t dt, struct conf_rng *r, int64_t w_rows, int64_t k, int64_t x_rows, int64_t outs)
{
	struct prep_host h = {
		.w = conf_xmalloc(ref_row_bytes(dt, k) * (size_t)w_rows),
		.x = conf_xmalloc(sizeof(float) * (size_t)(x_rows * k)),
		.bias = conf_xmalloc(sizeof(float) * (size_t)w_rows),
		.got = conf_xmalloc(sizeof(float) * (size_t)outs),
		.want = conf_xmalloc(sizeof(double) * (size_t)outs),
		.bound = conf_xmalloc(sizeof(double) * (size_t)outs),
	};

	ref_random_row(dt, r, h.w, w_rows * k);
	conf_fill_uniform(r, h.x, (size_t)(x_rows * k), -1.0, 1.0);
	conf_fill_uniform(r, h.bias, (size_t)w_rows, -1.0, 1.0);
	return h;
}

static void prep_host_free(struct prep_host *h)
{
	free(h->w);
	free(h->x);
	free(h->bias);
	free(h->got);
	free(h->want);
	free(h->bound);
}

static void prepared_case(int32_t dt, const struct prep_case *c)
{
	const int64_t m = c->m, n = c->big && conf.quick ? 264 : c->n;
	const int64_t k = prep_k(dt, c->big && conf.quick ? 32 : c->k_blocks);
	int64_t w_shape[2] = { n, k }, x_shape[2] = { m, k }, y_shape[2] = { m, n };
	struct conf_rng r;
	gllmk_buffer *pb;
	char what[160];

	snprintf(what, sizeof(what), "prepared %s M=%lld N=%lld K=%lld%s%s%s%s%s", gllmk_dtype_name(dt),
		 (long long)m, (long long)n, (long long)k, c->bias ? " bias" : "", c->x_padded ? " x:padded" : "",
		 c->y_padded ? " y:padded" : "", c->free_source ? " source freed" : "",
		 c->extreme ? " extreme" : "");
	conf_rng_init(&r, what);
	struct prep_host h = prep_host_draw(dt, &r, n, k, m, m * n);

	if (c->extreme)
		prep_extreme(dt, h.w, n, k, h.x, m * k);
	ref_matmul(dt, h.w, ref_row_bytes(dt, k), n, k, h.x, m, c->bias ? h.bias : NULL, h.want,
		   h.bound);
	struct conf_tensor wt = conf_upload(dt, 2, w_shape, h.w);
	struct conf_tensor xt = c->x_padded ? conf_upload_strided(GLLMK_F32, 2, x_shape, h.x, 16, 12)
					    : conf_upload(GLLMK_F32, 2, x_shape, h.x);
	struct conf_tensor bt = conf_upload(GLLMK_F32, 1, &n, h.bias);
	struct conf_tensor yt = c->y_padded ? conf_output_padded(GLLMK_F32, 2, y_shape, 8)
					    : conf_output(GLLMK_F32, 2, y_shape);

	if (prepare_or_decline(what, &wt.t, &pb)) {
		const gllmk_tensor p = gllmk_tensor_make(pb, 0, dt, 2, w_shape);

		if (c->free_source)
			conf_free(&wt);
		conf_ok(gllmk_matmul(conf.ctx, &yt.t, &xt.t, &p, c->bias ? &bt.t : NULL));
		conf_check_product(what, &yt, h.got, h.want, h.bound, (size_t)(m * n), (size_t)(m * n), dt);
		check_reads(dt, what, &p, h.w, n, k, &r);
		gllmk_buffer_free(pb);
	}
	if (!c->free_source || !wt.buf)
		conf_free(&wt);
	conf_free(&xt);
	conf_free(&bt);
	conf_free(&yt);
	prep_host_free(&h);
}

static void prepared_matmul(void **state)
{
	(void)state;
	conf_begin("weights_prepare");
	for (size_t d = 0; d < sizeof(prep_dtypes) / sizeof(prep_dtypes[0]); d++)
		for (size_t i = 0; i < sizeof(prep_cases) / sizeof(prep_cases[0]); i++)
			prepared_case(prep_dtypes[d], &prep_cases[i]);
	conf_covered("weights_prepare");
}

/* ------------------------------------------------- experts and batches */

/* Slot (t, j) of matmul_id and batch b of matmul_batched against the
 * prepared [E, N, K] copy: want/bound rows from ref_matmul on the plain
 * matrix of the expert or batch each row reads. */
static void ref_rows_by_matrix(int32_t dt, const uint8_t *w, int64_t n, int64_t k, const float *x, const int32_t *mat,
			       int64_t rows, double *want, double *bound)
{
	const size_t row_bytes = ref_row_bytes(dt, k);

	for (int64_t i = 0; i < rows; i++)
		ref_matmul(dt, w + (size_t)mat[i] * (size_t)n * row_bytes, row_bytes, n, k, x + i * k, 1, NULL,
			   want + i * n, bound + i * n);
}

/* distinct: each slot its own expert (decoding's one pass over all the
 * experts' groups, cpu_matmul_parts); bias: matmul_id's [E, N] bias. */
static void prepared_experts_case(int32_t dt, int64_t t, int64_t kk, int64_t e, int64_t n, int64_t k, int distinct, int bias)
{
	const int64_t slots = t * kk;
	int64_t w_shape[3] = { e, n, k }, x_shape[2] = { t, k }, id_shape[2] = { t, kk }, y_shape[3] = { t, kk, n };
	struct conf_rng r;
	gllmk_buffer *pb;
	char what[128];

	snprintf(what, sizeof(what), "prepared %s matmul_id T=%lld k=%lld E=%lld N=%lld K=%lld%s%s",
		 gllmk_dtype_name(dt), (long long)t, (long long)kk, (long long)e, (long long)n, (long long)k, distinct ? " distinct" : "",
		 bias ? " bias" : "");
	conf_rng_init(&r, what);
	struct prep_host h = prep_host_draw(dt, &r, e * n, k, t, slots * n);
	float *xs = conf_xmalloc(sizeof(float) * (size_t)(slots * k));
	int32_t *ids = conf_xmalloc(sizeof(int32_t) * (size_t)slots);

	for (int64_t s = 0; s < slots; s++) {
		ids[s] = (int32_t)(distinct ? (s * 3 + 1) % e : conf_rng_int(&r, 0, e - 1));
		memcpy(xs + s * k, h.x + s / kk * k, sizeof(float) * (size_t)k);
	}
	ref_rows_by_matrix(dt, h.w, n, k, xs, ids, slots, h.want, h.bound);
	for (int64_t s = 0; bias && s < slots; s++)
		for (int64_t c = 0; c < n; c++)
			h.want[s * n + c] += h.bias[ids[s] * n + c];

	struct conf_tensor wt = conf_upload(dt, 3, w_shape, h.w);
	struct conf_tensor xt = conf_upload(GLLMK_F32, 2, x_shape, h.x);
	struct conf_tensor it = conf_upload(GLLMK_I32, 2, id_shape, ids);
	struct conf_tensor bt = conf_upload(GLLMK_F32, 2, w_shape, h.bias); /* [E, N]: w_shape's first two */
	struct conf_tensor yt = conf_output(GLLMK_F32, 3, y_shape);

	if (prepare_or_decline(what, &wt.t, &pb)) {
		const gllmk_tensor p = gllmk_tensor_make(pb, 0, dt, 3, w_shape);

		conf_free(&wt);
		conf_ok(gllmk_matmul_id(conf.ctx, &yt.t, &xt.t, &p, &it.t, bias ? &bt.t : NULL, NULL));
		conf_check_product(what, &yt, h.got, h.want, h.bound, (size_t)(slots * n), (size_t)(slots * n),
				   dt);
		check_dequantize(dt, what, &p, h.w);
		gllmk_buffer_free(pb);
	}
	conf_free(&wt);
	conf_free(&xt);
	conf_free(&it);
	conf_free(&bt);
	conf_free(&yt);
	prep_host_free(&h);
	free(xs);
	free(ids);
}

static void prepared_batched_case(int32_t dt, int64_t b, int64_t m, int64_t n, int64_t k)
{
	int64_t w_shape[3] = { b, n, k }, x_shape[3] = { b, m, k }, y_shape[3] = { b, m, n };
	struct conf_rng r;
	gllmk_buffer *pb;
	char what[128];

	snprintf(what, sizeof(what), "prepared %s matmul_batched B=%lld M=%lld N=%lld K=%lld", gllmk_dtype_name(dt),
		 (long long)b, (long long)m, (long long)n, (long long)k);
	conf_rng_init(&r, what);
	struct prep_host h = prep_host_draw(dt, &r, b * n, k, b * m, b * m * n);
	int32_t *mat = conf_xmalloc(sizeof(int32_t) * (size_t)(b * m));

	for (int64_t i = 0; i < b * m; i++)
		mat[i] = (int32_t)(i / m);
	ref_rows_by_matrix(dt, h.w, n, k, h.x, mat, b * m, h.want, h.bound);

	struct conf_tensor wt = conf_upload(dt, 3, w_shape, h.w);
	struct conf_tensor xt = conf_upload(GLLMK_F32, 3, x_shape, h.x);
	struct conf_tensor yt = conf_output(GLLMK_F32, 3, y_shape);

	if (prepare_or_decline(what, &wt.t, &pb)) {
		const gllmk_tensor p = gllmk_tensor_make(pb, 0, dt, 3, w_shape);

		conf_ok(gllmk_matmul_batched(conf.ctx, &yt.t, &xt.t, &p));
		conf_check_product(what, &yt, h.got, h.want, h.bound, (size_t)(b * m * n), (size_t)(b * m * n),
				   dt);
		gllmk_buffer_free(pb);
	}
	conf_free(&wt);
	conf_free(&xt);
	conf_free(&yt);
	prep_host_free(&h);
	free(mat);
}

static void prepared_experts(void **state)
{
	(void)state;
	conf_begin("weights_prepare");
	for (size_t d = 0; d < sizeof(prep_dtypes) / sizeof(prep_dtypes[0]); d++) {
		const int32_t dt = prep_dtypes[d];

		prepared_experts_case(dt, 1, 2, 5, 16, prep_k(dt, 2), 0, 0);  /* decoding, experts drawn (maybe one twice) */
		prepared_experts_case(dt, 1, 4, 8, 24, prep_k(dt, 3), 1, 1);  /* decoding: 4 experts in one pass */
		prepared_experts_case(dt, 2, 3, 7, 8, prep_k(dt, 1), 1, 0);   /* two tokens, 6 experts in one pass */
		prepared_experts_case(dt, 33, 2, 3, 24, prep_k(dt, 9), 0, 1); /* a prompt: past the small-M limit */
		prepared_batched_case(dt, 3, 2, 8, prep_k(dt, 3));
		prepared_batched_case(dt, 2, 20, 16, prep_k(dt, 2));
	}
	conf_covered("weights_prepare");
}

/* ------------------------------------------------------------ misuse */

static void want_status(const char *what, gllmk_status got, gllmk_status want, const char *word)
{
	if (got != want || (word && !strstr(gllmk_last_error(), word)))
		conf_fail("%s: got %s (%s), want %s%s%s", what, gllmk_status_string(got), gllmk_last_error(),
			  gllmk_status_string(want), word ? " naming " : "", word ? word : "");
}

/* What the core refuses before any plugin sees it. */
static void prepare_bad_arguments(void)
{
	int64_t shape[4] = { 2, 8, 64, 32 }, one = 64;
	uint8_t blocks[16 * 2 * 18] = { 0 };
	struct conf_tensor w = conf_upload(GLLMK_Q4_0, 2, shape + 1, blocks);
	struct conf_tensor v = conf_upload(GLLMK_Q4_0, 1, &one, blocks);
	struct conf_tensor padded = conf_upload_strided(GLLMK_Q4_0, 2, shape + 1, blocks, 0, 18);
	gllmk_tensor four = w.t;
	gllmk_buffer *out = NULL;

	four.ndim = 4;
	memcpy(four.shape, shape, sizeof(shape));
	four.shape[0] = four.shape[1] = 1;
	four.stride[0] = four.stride[1] = four.stride[2];
	want_status("prepare ctx NULL", gllmk_weights_prepare(NULL, &w.t, &out), GLLMK_E_NULL, "ctx");
	want_status("prepare w NULL", gllmk_weights_prepare(conf.ctx, NULL, &out), GLLMK_E_NULL, "w");
	want_status("prepare out NULL", gllmk_weights_prepare(conf.ctx, &w.t, NULL), GLLMK_E_NULL, "out");
	want_status("prepare 1-D w", gllmk_weights_prepare(conf.ctx, &v.t, &out), GLLMK_E_SHAPE, "w.ndim");
	want_status("prepare 4-D w", gllmk_weights_prepare(conf.ctx, &four, &out), GLLMK_E_SHAPE, "w.ndim");
	want_status("prepare w with padded rows", gllmk_weights_prepare(conf.ctx, &padded.t, &out), GLLMK_E_SHAPE,
		    "packed");
	if (out)
		conf_fail("prepare: a refused call left *out set");
	conf_free(&w);
	conf_free(&v);
	conf_free(&padded);
}

/* Every use of a prepared buffer but the weight views of the ops that
 * read them. */
static void prepared_refusals(gllmk_buffer *pb, int64_t n, int64_t k)
{
	int64_t shape[2] = { n, k }, shape3[3] = { 1, n, k }, q_shape[3] = { 1, 1, k }, slot = 1;
	const gllmk_tensor p = gllmk_tensor_make(pb, 0, GLLMK_Q4_0, 2, shape);
	gllmk_tensor moved = gllmk_tensor_make(pb, 144, GLLMK_Q4_0, 2, shape), fewer = p;
	gllmk_tensor as3 = gllmk_tensor_make(pb, 0, GLLMK_Q4_0, 3, shape3), kv = gllmk_tensor_make(pb, 0, GLLMK_Q4_0, 3, q_shape);
	gllmk_buffer *again = NULL;
	const int32_t zero = 0;
	float xs[64] = { 0 };
	struct conf_tensor x = conf_upload(GLLMK_F32, 2, (int64_t[]){ 1, k }, xs);
	struct conf_tensor q = conf_upload(GLLMK_F32, 3, q_shape, xs);
	struct conf_tensor y = conf_output(GLLMK_F32, 2, (int64_t[]){ 1, n });
	struct conf_tensor o = conf_output(GLLMK_F32, 3, q_shape);
	struct conf_tensor sl = conf_upload(GLLMK_I32, 1, &slot, &zero);
	gllmk_attention_ext_params ap = { .struct_size = sizeof(ap) };
	uint8_t byte = 0;

	fewer.shape[0] = n - 8;
	want_status("buffer_read of prepared weights", gllmk_buffer_read(pb, 0, &byte, 1), GLLMK_E_INVALID, "prepared");
	want_status("buffer_write of prepared weights", gllmk_buffer_write(pb, 0, &byte, 1), GLLMK_E_INVALID, "prepared");
	want_status("buffer_copy from prepared weights", gllmk_buffer_copy(x.buf, 0, pb, 0, 4), GLLMK_E_INVALID,
		    "prepared");
	want_status("buffer_copy into prepared weights", gllmk_buffer_copy(pb, 0, x.buf, 0, 4), GLLMK_E_INVALID,
		    "prepared");
	want_status("matmul on prepared weights at an offset", gllmk_matmul(conf.ctx, &y.t, &x.t, &moved, NULL),
		    GLLMK_E_INVALID, "as they were prepared");
	want_status("matmul on some rows of prepared weights", gllmk_matmul(conf.ctx, &y.t, &x.t, &fewer, NULL),
		    GLLMK_E_INVALID, "as they were prepared");
	want_status("matmul_batched on prepared [N, K] as [1, N, K]",
		    gllmk_matmul_batched(conf.ctx, &o.t, &q.t, &as3), GLLMK_E_INVALID, "as they were prepared");
	want_status("attention_ext with prepared weights as k",
		    gllmk_attention_ext(conf.ctx, &o.t, &q.t, &kv, &kv, NULL, NULL, NULL, &ap), GLLMK_E_INVALID,
		    "prepared weights");
	want_status("kv_store into prepared weights", gllmk_kv_store(conf.ctx, &kv, &q.t, &sl.t), GLLMK_E_INVALID,
		    "prepared weights");
	want_status("prepare prepared weights", gllmk_weights_prepare(conf.ctx, &p, &again), GLLMK_E_INVALID,
		    "prepared weights");
	if (gllmk_buffer_size(pb) < ref_row_bytes(GLLMK_Q4_0, k) * (size_t)n / 2)
		conf_fail("gllmk_buffer_size of prepared weights = %llu", (unsigned long long)gllmk_buffer_size(pb));
	conf_free(&x);
	conf_free(&q);
	conf_free(&y);
	conf_free(&o);
	conf_free(&sl);
}

/* Dtypes and shapes the CPU layouts do not take: declined, *out NULL. */
static void prepare_declines(void)
{
	static const struct {
		int32_t dt;
		int64_t n, k;
		const char *what, *word;
	} cases[] = {
		{ GLLMK_Q6_K, 8, 256, "prepare q6_K", "q6_K" },
		{ GLLMK_Q4_0, 12, 64, "prepare q4_0 [12, 64]", "w.shape[0] = 12" },
		{ GLLMK_Q4_K, 20, 256, "prepare q4_K [20, 256]", "w.shape[0] = 20" },
	};
	uint8_t *blocks = conf_xmalloc(20 * 210);

	memset(blocks, 0, 20 * 210);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t shape[2] = { cases[i].n, cases[i].k };
		struct conf_tensor w = conf_upload(cases[i].dt, 2, shape, blocks);
		gllmk_buffer *out = (gllmk_buffer *)(uintptr_t)1;

		want_status(cases[i].what, gllmk_weights_prepare(conf.ctx, &w.t, &out), GLLMK_E_UNSUPPORTED,
			    cases[i].word);
		if (out)
			conf_fail("%s: declined but *out is set", cases[i].what);
		conf_free(&w);
	}
	free(blocks);
}

static void prepared_misuse(void **state)
{
	int64_t shape[2] = { 16, 64 };
	uint8_t blocks[16 * 2 * 18];
	struct conf_rng r;
	gllmk_buffer *pb;

	(void)state;
	conf_begin("weights_prepare");
	conf_rng_init(&r, "prepared misuse");
	ref_random_row(GLLMK_Q4_0, &r, blocks, 16 * 64);
	prepare_bad_arguments();
	struct conf_tensor w = conf_upload(GLLMK_Q4_0, 2, shape, blocks);

	if (prepare_or_decline("prepared misuse", &w.t, &pb)) {
		prepared_refusals(pb, 16, 64);
		prepare_declines();
		gllmk_buffer_free(pb);
	}
	conf_free(&w);
	conf_covered("weights_prepare");
}

CONF_GROUP(prepared) = {
	cmocka_unit_test(prepared_matmul),
	cmocka_unit_test(prepared_experts),
	cmocka_unit_test(prepared_misuse),
};
CONF_GROUP_END(prepared);
