/* The program run_debug_tests.sh runs with and without
 * LD_PRELOAD=libgllmk-debug.so. It uses the public API only and knows
 * nothing of the layer. Scenarios (argv[1]):
 *
 *   results FILE        a chain of every operator on the automatically
 *                       selected plugin; every output's bytes go to FILE
 *                       (compared bit for bit across modes); prints
 *                       "ops=N" and "layer=NAME"
 *   nan                 call #1 scale (clean), call #2 add whose input a
 *                       holds a NaN at [1,3]
 *   wrong DIR           on debugtest-wrong (in DIR): call #1 add, call #2
 *                       scale, which that plugin gets wrong
 *   guard DIR           on debugtest-wrong: call #1 add, call #2 relu, which
 *                       writes one element past its output view (only run
 *                       it under GLLMK_DEBUG=check: the guard takes the hit)
 *   bf16act             the automatically selected plugin opened with
 *                       GLLMK_OPEN_BF16_ACTIVATIONS: call #1 convert (f32 to
 *                       bf16 weights), call #2 a bf16 matmul at M = 64, whose
 *                       x a plugin may round to bf16 (cpu-avx512 with
 *                       AVX512-BF16 does: ~2e-3 from cpu-generic)
 *   prepared FILE       q4_0 weights through gllmk_weights_prepare where the
 *                       automatically selected plugin prepares them (prints
 *                       "prepared=1", else 0 and the plain weights): call
 *                       #1 matmul M = 1, #2 matmul M = 3, #3 get_rows, #4
 *                       dequantize, each output's bytes to FILE
 *
 * Exit status 0 on success, 1 with gllmk_last_error() when a call failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gllmk.h"

struct prog {
	gllmk_context *ctx;
	FILE *out;
	int ops;
	uint32_t seed;
};

static void must(gllmk_status st, const char *what)
{
	if (st == GLLMK_OK)
		return;
	fprintf(stderr, "debug_prog: %s: %s (%s)\n", what, gllmk_status_string(st), gllmk_last_error());
	exit(1);
}

/* Counts the op and fails the program on error. */
#define OP(p, call)                       \
	do {                              \
		must(call, #call);        \
		(p)->ops++;               \
	} while (0)

static float next_value(struct prog *p)
{
	p->seed = p->seed * 1664525u + 1013904223u;
	return (float)((p->seed >> 8) & 0xffff) / 16384.0f - 2.0f;
}

static int64_t elems(int ndim, const int64_t *shape)
{
	int64_t n = 1;
	int d;

	for (d = 0; d < ndim; d++)
		n *= shape[d];
	return n;
}

/* A fresh buffer exactly the size of a contiguous view. */
static gllmk_tensor tensor(struct prog *p, gllmk_dtype dt, int ndim, const int64_t *shape)
{
	gllmk_buffer *b;
	uint64_t row = 0;

	must(gllmk_dtype_row_bytes(dt, shape[ndim - 1], &row), "row bytes");
	must(gllmk_buffer_alloc(p->ctx, row * (uint64_t)(elems(ndim, shape) / shape[ndim - 1]), &b), "alloc");
	return gllmk_tensor_make(b, 0, dt, ndim, shape);
}

/* An f32 tensor of values in [-2, 2) times scale. */
static gllmk_tensor input(struct prog *p, int ndim, const int64_t *shape, float scale)
{
	gllmk_tensor t = tensor(p, GLLMK_F32, ndim, shape);
	int64_t i, n = elems(ndim, shape);
	float *v = malloc(n * sizeof(*v));

	for (i = 0; i < n; i++)
		v[i] = next_value(p) * scale;
	must(gllmk_buffer_write(t.buf, 0, v, n * sizeof(*v)), "write");
	free(v);
	return t;
}

static gllmk_tensor ints(struct prog *p, int64_t n, const int32_t *v)
{
	gllmk_tensor t = tensor(p, GLLMK_I32, 1, &n);

	must(gllmk_buffer_write(t.buf, 0, v, n * sizeof(*v)), "write");
	return t;
}

static void dump(struct prog *p, const gllmk_tensor *t)
{
	uint64_t n = gllmk_buffer_size(t->buf);
	void *host = malloc(n);

	must(gllmk_buffer_read(t->buf, 0, host, n), "read");
	fwrite(host, 1, n, p->out);
	free(host);
}

static void open_context(struct prog *p, const char *plugins, const char *dir)
{
	gllmk_options o = {
		.struct_size = sizeof(o),
		.flags = GLLMK_OPEN_NO_ENV,
		.plugins = plugins,
		.plugin_dir = dir,
	};

	must(gllmk_open(plugins ? &o : NULL, &p->ctx), "gllmk_open");
}

static void run_linear(struct prog *p, gllmk_tensor *x, gllmk_tensor *y)
{
	const int64_t sx[2] = { 4, 64 }, sw[2] = { 32, 64 }, sy[2] = { 4, 32 }, sb[1] = { 32 };
	const gllmk_gemm_params gp = { .trans_b = 1, .alpha = 0.5f, .beta = 0.0f };
	gllmk_tensor w = input(p, 2, sw, 1.0f), bias = input(p, 1, sb, 1.0f);
	gllmk_tensor w16 = tensor(p, GLLMK_F16, 2, sw), wq = tensor(p, GLLMK_Q8_0, 2, sw);
	gllmk_tensor wd = tensor(p, GLLMK_F32, 2, sw), y2 = tensor(p, GLLMK_F32, 2, sy);
	gllmk_tensor c = tensor(p, GLLMK_F32, 2, sy);

	*x = input(p, 2, sx, 1.0f);
	*y = tensor(p, GLLMK_F32, 2, sy);
	OP(p, gllmk_convert(p->ctx, &w16, &w));
	OP(p, gllmk_quantize(p->ctx, &wq, &w));
	OP(p, gllmk_dequantize(p->ctx, &wd, &wq));
	OP(p, gllmk_matmul(p->ctx, y, x, &w16, &bias));
	OP(p, gllmk_matmul(p->ctx, &y2, x, &wq, NULL));
	OP(p, gllmk_gemm(p->ctx, &c, x, &w, &gp));
	/* In place: y is a. */
	OP(p, gllmk_add(p->ctx, y, y, &y2));
	OP(p, gllmk_mul(p->ctx, y, y, &bias));
	OP(p, gllmk_scale(p->ctx, y, y, 0.25f));
	dump(p, &w16);
	dump(p, &wq);
	dump(p, &wd);
	dump(p, &y2);
	dump(p, &c);
	dump(p, y);
}

static void run_elementwise(struct prog *p, const gllmk_tensor *h)
{
	const int64_t s[2] = { 4, 32 };
	gllmk_tensor out[8];
	int i;

	for (i = 0; i < 8; i++)
		out[i] = tensor(p, GLLMK_F32, 2, s);
	OP(p, gllmk_silu(p->ctx, &out[0], h));
	OP(p, gllmk_gelu_tanh(p->ctx, &out[1], h));
	OP(p, gllmk_gelu_erf(p->ctx, &out[2], h));
	OP(p, gllmk_relu(p->ctx, &out[3], h));
	OP(p, gllmk_tanh(p->ctx, &out[4], h));
	OP(p, gllmk_exp(p->ctx, &out[5], h));
	OP(p, gllmk_swiglu(p->ctx, &out[6], h, &out[4]));
	OP(p, gllmk_rms_norm(p->ctx, &out[7], h, NULL, 1e-5f));
	for (i = 0; i < 8; i++)
		dump(p, &out[i]);
}

static void run_norms_softmax(struct prog *p, const gllmk_tensor *h)
{
	const int64_t s[2] = { 4, 32 }, sw[1] = { 32 }, ss[3] = { 2, 4, 8 };
	const gllmk_softmax_params sp = { .scale = 0.5f, .causal = 1 };
	gllmk_tensor w = input(p, 1, sw, 1.0f), b = input(p, 1, sw, 1.0f);
	gllmk_tensor y1 = tensor(p, GLLMK_F32, 2, s), y2 = tensor(p, GLLMK_F32, 2, s);
	gllmk_tensor x = input(p, 3, ss, 3.0f), y3 = tensor(p, GLLMK_F32, 3, ss);

	OP(p, gllmk_rms_norm(p->ctx, &y1, h, &w, 1e-6f));
	OP(p, gllmk_layer_norm(p->ctx, &y2, h, &w, &b, 1e-5f));
	OP(p, gllmk_softmax(p->ctx, &y3, &x, NULL, &sp));
	dump(p, &y1);
	dump(p, &y2);
	dump(p, &y3);
}

/* matmul_id (q8_0 experts chosen per token, summed with slot weights) and
 * matmul_batched (f16, one w for every batch). */
static void run_experts(struct prog *p, const gllmk_tensor *x)
{
	const int64_t sw[3] = { 4, 16, 64 }, sy[2] = { 4, 16 }, ssw[2] = { 4, 2 };
	const int64_t sb[3] = { 2, 4, 64 }, swb[3] = { 1, 16, 64 }, syb[3] = { 2, 4, 16 };
	const int32_t ids[8] = { 0, 3, 3, 1, 2, 2, 0, 1 };
	gllmk_tensor wf = input(p, 3, sw, 1.0f), wq = tensor(p, GLLMK_Q8_0, 3, sw), slot_w = input(p, 2, ssw, 1.0f);
	gllmk_tensor ti = ints(p, 8, ids), y = tensor(p, GLLMK_F32, 2, sy);
	gllmk_tensor xb = input(p, 3, sb, 1.0f), wbf = input(p, 3, swb, 1.0f), wb = tensor(p, GLLMK_F16, 3, swb);
	gllmk_tensor yb = tensor(p, GLLMK_F32, 3, syb);

	ti.ndim = 2;
	ti.shape[0] = 4;
	ti.shape[1] = 2;
	ti.stride[0] = 8;
	ti.stride[1] = 4;
	OP(p, gllmk_quantize(p->ctx, &wq, &wf));
	OP(p, gllmk_matmul_id(p->ctx, &y, x, &wq, &ti, NULL, &slot_w));
	OP(p, gllmk_convert(p->ctx, &wb, &wbf));
	OP(p, gllmk_matmul_batched(p->ctx, &yb, &xb, &wb));
	dump(p, &y);
	dump(p, &yb);
}

static void run_attention_block(struct prog *p)
{
	const int64_t sq[3] = { 4, 2, 16 }, skv[3] = { 6, 1, 16 }, st[2] = { 10, 64 };
	const int32_t pos[4] = { 2, 3, 4, 5 }, ids[3] = { 7, 0, 7 };
	const gllmk_rope_params rp = { .mode = GLLMK_ROPE_NEOX, .theta_base = 10000.0f, .freq_scale = 1.0f };
	const gllmk_attention_params ap = { .causal = 1 };
	gllmk_tensor q = input(p, 3, sq, 1.0f), k = input(p, 3, skv, 1.0f), v = input(p, 3, skv, 1.0f);
	gllmk_tensor qr = tensor(p, GLLMK_F32, 3, sq), o = tensor(p, GLLMK_F32, 3, sq);
	gllmk_tensor tf = input(p, 2, st, 1.0f), t16 = tensor(p, GLLMK_F16, 2, st);
	gllmk_tensor tp = ints(p, 4, pos), ti = ints(p, 3, ids);
	const int64_t sr[2] = { 3, 64 };
	gllmk_tensor rows = tensor(p, GLLMK_F32, 2, sr);

	OP(p, gllmk_rope(p->ctx, &qr, &q, &tp, &rp));
	OP(p, gllmk_attention(p->ctx, &o, &qr, &k, &v, NULL, NULL, &ap));
	OP(p, gllmk_convert(p->ctx, &t16, &tf));
	OP(p, gllmk_get_rows(p->ctx, &rows, &t16, &ti));
	dump(p, &qr);
	dump(p, &o);
	dump(p, &rows);
}

static void run_sampling(struct prog *p, const gllmk_tensor *logits)
{
	const float uniform[4] = { 0.1f, 0.5f, 0.9f, 0.3f };
	const gllmk_sample_params sp = { .temperature = 0.8f, .top_k = 10, .top_p = 0.9f };
	const int64_t n = 4;
	gllmk_tensor a = tensor(p, GLLMK_I32, 1, &n), s = tensor(p, GLLMK_I32, 1, &n);

	OP(p, gllmk_argmax(p->ctx, &a, logits));
	OP(p, gllmk_sample(p->ctx, &s, logits, uniform, &sp));
	dump(p, &a);
	dump(p, &s);
}

static int results(const char *file)
{
	struct prog p = { .seed = 12345 };
	const gllmk_report *r;
	gllmk_tensor x, y;

	p.out = fopen(file, "wb");
	if (!p.out) {
		perror(file);
		return 1;
	}
	open_context(&p, NULL, NULL);
	run_linear(&p, &x, &y);
	run_elementwise(&p, &y);
	run_norms_softmax(&p, &y);
	run_attention_block(&p);
	run_experts(&p, &x);
	run_sampling(&p, &y);
	must(gllmk_sync(p.ctx), "sync");
	r = gllmk_context_report(p.ctx);
	printf("plugin=%s\nlayer=%s\nops=%d\n", gllmk_context_plugin(p.ctx), r->layer ? r->layer : "", p.ops);
	gllmk_close(p.ctx);
	return fclose(p.out) ? 1 : 0;
}

static int nan_input(void)
{
	struct prog p = { .seed = 7 };
	const int64_t s[2] = { 2, 8 };
	const float nan = NAN;
	gllmk_tensor a, b, y;

	open_context(&p, NULL, NULL);
	a = input(&p, 2, s, 1.0f);
	b = input(&p, 2, s, 1.0f);
	y = tensor(&p, GLLMK_F32, 2, s);
	OP(&p, gllmk_scale(p.ctx, &y, &b, 2.0f));
	must(gllmk_buffer_write(a.buf, (1 * 8 + 3) * sizeof(float), &nan, sizeof(nan)), "plant NaN");
	OP(&p, gllmk_add(p.ctx, &y, &a, &b));
	gllmk_close(p.ctx);
	return 0;
}

/* Ends with relu (guard) or scale (wrong), both broken in debugtest-wrong. */
static int wrong_plugin(const char *dir, int guard)
{
	struct prog p = { .seed = 99 };
	const int64_t s[2] = { 4, 16 };
	gllmk_tensor a, b, y;

	open_context(&p, "debugtest-wrong", dir);
	a = input(&p, 2, s, 1.0f);
	b = input(&p, 2, s, 1.0f);
	y = tensor(&p, GLLMK_F32, 2, s);
	OP(&p, gllmk_add(p.ctx, &y, &a, &b));
	if (guard)
		OP(&p, gllmk_relu(p.ctx, &y, &a));
	else
		OP(&p, gllmk_scale(p.ctx, &y, &a, 3.0f));
	gllmk_close(p.ctx);
	return 0;
}

/* q4_0 blocks of 8 rows × 64: f16 scales 2^-6..2^-5, random nibbles. */
static gllmk_tensor q4_0_weights(struct prog *p, const int64_t *shape)
{
	gllmk_tensor w = tensor(p, GLLMK_Q4_0, 2, shape);
	const int64_t blocks = shape[0] * shape[1] / 32;
	uint8_t *b = malloc((size_t)blocks * 18);

	for (int64_t i = 0; i < blocks * 18; i++)
		b[i] = (uint8_t)(p->seed = p->seed * 1664525u + 1013904223u) >> 24;
	for (int64_t i = 0; i < blocks; i++) {
		b[i * 18] = 0;
		b[i * 18 + 1] = (uint8_t)(0x24 + (b[i * 18 + 1] & 3));
	}
	must(gllmk_buffer_write(w.buf, 0, b, (size_t)blocks * 18), "write");
	free(b);
	return w;
}

static int prepared_weights(const char *file)
{
	struct prog p = { .seed = 77 };
	const int64_t sw[2] = { 16, 64 }, sx1[2] = { 1, 64 }, sx3[2] = { 3, 64 }, sy1[2] = { 1, 16 }, sy3[2] = { 3, 16 };
	const int64_t sr[2] = { 2, 64 };
	const int32_t ids[2] = { 15, 3 };
	gllmk_tensor w, x1, x3, y1, y3, ti, rows, d;
	gllmk_buffer *pb = NULL;
	gllmk_status st;

	p.out = fopen(file, "wb");
	if (!p.out) {
		perror(file);
		return 1;
	}
	open_context(&p, NULL, NULL);
	w = q4_0_weights(&p, sw);
	x1 = input(&p, 2, sx1, 1.0f);
	x3 = input(&p, 2, sx3, 1.0f);
	y1 = tensor(&p, GLLMK_F32, 2, sy1);
	y3 = tensor(&p, GLLMK_F32, 2, sy3);
	ti = ints(&p, 2, ids);
	rows = tensor(&p, GLLMK_F32, 2, sr);
	d = tensor(&p, GLLMK_F32, 2, sw);
	st = gllmk_weights_prepare(p.ctx, &w, &pb);
	if (st != GLLMK_E_UNSUPPORTED)
		must(st, "gllmk_weights_prepare");
	if (pb) {
		gllmk_buffer_free(w.buf);
		w = gllmk_tensor_make(pb, 0, GLLMK_Q4_0, 2, sw);
	}
	OP(&p, gllmk_matmul(p.ctx, &y1, &x1, &w, NULL));
	OP(&p, gllmk_matmul(p.ctx, &y3, &x3, &w, NULL));
	OP(&p, gllmk_get_rows(p.ctx, &rows, &w, &ti));
	OP(&p, gllmk_dequantize(p.ctx, &d, &w));
	dump(&p, &y1);
	dump(&p, &y3);
	dump(&p, &rows);
	dump(&p, &d);
	printf("prepared=%d\nops=%d\n", pb != NULL, p.ops);
	gllmk_close(p.ctx);
	return fclose(p.out) ? 1 : 0;
}

static int bf16_activations(void)
{
	struct prog p = { .seed = 5 };
	const int64_t sx[2] = { 64, 256 }, sw[2] = { 48, 256 }, sy[2] = { 64, 48 };
	const gllmk_options o = { .struct_size = sizeof(o), .flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_BF16_ACTIVATIONS };
	gllmk_tensor x, w, wb, y;

	must(gllmk_open(&o, &p.ctx), "gllmk_open");
	x = input(&p, 2, sx, 1.0f);
	w = input(&p, 2, sw, 1.0f);
	wb = tensor(&p, GLLMK_BF16, 2, sw);
	y = tensor(&p, GLLMK_F32, 2, sy);
	OP(&p, gllmk_convert(p.ctx, &wb, &w));
	OP(&p, gllmk_matmul(p.ctx, &y, &x, &wb, NULL));
	gllmk_close(p.ctx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "results"))
		return results(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "nan"))
		return nan_input();
	if (argc == 3 && !strcmp(argv[1], "wrong"))
		return wrong_plugin(argv[2], 0);
	if (argc == 3 && !strcmp(argv[1], "guard"))
		return wrong_plugin(argv[2], 1);
	if (argc == 2 && !strcmp(argv[1], "bf16act"))
		return bf16_activations();
	if (argc == 3 && !strcmp(argv[1], "prepared"))
		return prepared_weights(argv[2]);
	fprintf(stderr, "usage: debug_prog results FILE | nan | wrong DIR | guard DIR | bf16act | prepared FILE\n");
	return 2;
}
