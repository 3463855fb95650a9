/* matmul: y = x·wᵀ (+ bias) for w of every dtype, against the double
 * product of ref_quant.c's decoded weights and x.
 *
 * Two checks on every case (SPEC/TOLERANCES.md, "matrix, quant,
 * attention"): each element within its own bound from ref_matmul (f32
 * accumulation, plus 8-bit activation quantization for block dtypes), so
 * one wrong element cannot hide; and, for results of at least 64 elements,
 * norm-wise within 1e-2 (block dtypes, ggml's own band is 2e-3..5e-3) or
 * 1e-4 (f32, f16, bf16: x is not rounded). Below 64 elements a norm is one
 * or a few ratios whose denominator can cancel to near zero, so it says
 * nothing; the element-wise bounds still hold there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

enum x_layout {
	X_CONTIGUOUS,
	X_PADDED,    /* rows further apart than their length */
	X_BROADCAST, /* stride 0: every row is the same host row */
};

struct mm_case {
	int64_t m, n;
	int64_t k_blocks; /* K in blocks of the weight's dtype, or ... */
	int64_t k_elems;  /* ... in elements (a multiple of every block) */
	int bias;
	enum x_layout x;
	int w_padded, y_padded;
	int big; /* quick mode: n 4097 -> 257, k 4096 -> 1024 */
	int float_only; /* k_elems any length: f32, f16 and bf16 weights only */
};

static const struct mm_case mm_cases[] = {
	{ .m = 1, .n = 1, .k_blocks = 1 },
	{ .m = 2, .n = 7, .k_blocks = 3, .bias = 1 },
	{ .m = 7, .n = 33, .k_blocks = 1, .bias = 1, .x = X_PADDED, .w_padded = 1, .y_padded = 1 },
	{ .m = 33, .n = 7, .k_blocks = 8, .x = X_BROADCAST },
	{ .m = 7, .n = 1, .k_blocks = 5, .bias = 1, .y_padded = 1 },
	{ .m = 100, .n = 33, .k_elems = 4096, .bias = 1, .big = 1 },
	{ .m = 1, .n = 4097, .k_elems = 4096, .bias = 1, .big = 1 }, /* GEMV on weights past the L2 */
	{ .m = 33, .n = 4097, .k_blocks = 1, .x = X_PADDED, .y_padded = 1, .big = 1 },
	/* groups of rows in one kernel call (vec_dot_rows) and the rows left
	 * over, on plain and padded weight rows; runs of 8 blocks and odd tails */
	{ .m = 1, .n = 33, .k_blocks = 11, .bias = 1, .w_padded = 1 },
	{ .m = 3, .n = 13, .k_blocks = 16 },
	{ .m = 2, .n = 9, .k_blocks = 37, .bias = 1, .y_padded = 1 },
	/* at M > 1 a group of rows meets the activations a piece of K at a
	 * time (several pieces here, the last short); f32 up to M = 32 */
	{ .m = 3, .n = 5, .k_elems = 8448, .w_padded = 1 },
	{ .m = 20, .n = 9, .k_elems = 8448, .bias = 1 },
	/* the int8 GEMM at M > 16 (plugins with qgemm): edge tiles in M and N,
	 * depth blocks of 512 with a short last one, padded rows everywhere */
	{ .m = 45, .n = 37, .k_blocks = 19, .bias = 1, .x = X_PADDED, .w_padded = 1, .y_padded = 1 },
	/* f16/bf16 weights take the float tiles up to M = 64 (AVX2) or 128
	 * (AVX-512), in groups of 32 activation rows: both sides of each limit,
	 * a short last group, odd K and N */
	{ .m = 64, .n = 9, .k_elems = 8448, .bias = 1 },
	{ .m = 65, .n = 35, .k_blocks = 9, .bias = 1, .x = X_PADDED, .w_padded = 1 },
	{ .m = 129, .n = 19, .k_blocks = 7, .y_padded = 1 },
	/* row counts every register block divides (64) or leaves one row of
	 * (65), and a prompt-sized M with an edge panel in N */
	{ .m = 64, .n = 32, .k_blocks = 4 },
	{ .m = 65, .n = 17, .k_blocks = 3, .bias = 1 },
	{ .m = 512, .n = 19, .k_blocks = 2 },
	/* a long prompt: the int8 GEMM's weight panels met by many M tiles */
	{ .m = 512, .n = 23, .k_blocks = 12, .bias = 1, .w_padded = 1 },
	/* odd K past a block of the GEMMs (bf16 pairs: an odd K's last word
	 * half empty, rows on 2-byte boundaries), on both sides of the bf16
	 * pairs' M = 32 */
	{ .m = 17, .n = 7, .k_elems = 4097, .bias = 1, .float_only = 1 },
	{ .m = 33, .n = 33, .k_elems = 4097, .x = X_PADDED, .w_padded = 1, .float_only = 1 },
	{ .m = 1, .n = 7, .k_elems = 4097, .float_only = 1 },
	{ .m = 512, .n = 1, .k_elems = 33, .bias = 1, .float_only = 1 },
};

#define NORM_MIN_ELEMS 64

static const char *x_layout_name(enum x_layout x)
{
	return x == X_PADDED ? " x:padded" : x == X_BROADCAST ? " x:stride0" : "";
}

static struct conf_tensor upload_x(const struct mm_case *c, const float *x, int64_t m, int64_t k)
{
	int64_t shape[2] = { m, k };
	struct conf_tensor t;

	switch (c->x) {
	case X_PADDED:
		return conf_upload_strided(GLLMK_F32, 2, shape, x, 16, 4 * 3);
	case X_BROADCAST:
		t = conf_upload(GLLMK_F32, 1, shape + 1, x);
		t.t.ndim = 2;
		t.t.shape[0] = m;
		t.t.shape[1] = k;
		t.t.stride[0] = 0;
		t.t.stride[1] = sizeof(float);
		return t;
	default:
		return conf_upload(GLLMK_F32, 2, shape, x);
	}
}

void conf_check_product(const char *what, const struct conf_tensor *y, float *got, const double *want,
			const double *bound, size_t n, size_t independent, gllmk_dtype wdt)
{
	conf_download(y, got);
	conf_check_within(what, got, want, bound, n);
	if (independent >= NORM_MIN_ELEMS)
		conf_check_rel_norm(what, got, want, n, ref_matmul_norm_tolerance(wdt));
	conf_check_padding(y); /* a y without padding has none to check */
}

static void matmul_one(gllmk_dtype wdt, const struct mm_case *c)
{
	int64_t qk = ref_block_elems(wdt);
	int64_t m = c->m;
	int64_t n = c->big && conf.quick && c->n > 257 ? 257 : c->n;
	int64_t k = c->k_blocks ? c->k_blocks * qk : (c->big && conf.quick ? 1024 : c->k_elems);
	size_t row_bytes = ref_row_bytes(wdt, k);
	struct conf_rng r;
	char what[128];

	snprintf(what, sizeof(what), "matmul %s M=%lld N=%lld K=%lld%s%s%s%s", ref_dtype_name(wdt), (long long)m,
		 (long long)n, (long long)k, c->bias ? " bias" : "", x_layout_name(c->x),
		 c->w_padded ? " w:padded" : "", c->y_padded ? " y:padded" : "");
	conf_rng_init(&r, what);

	uint8_t *w = conf_xmalloc(row_bytes * (size_t)n);
	float *x = conf_xmalloc(sizeof(float) * (size_t)(m * k));
	float *bias = conf_xmalloc(sizeof(float) * (size_t)n);
	float *got = conf_xmalloc(sizeof(float) * (size_t)(m * n));
	double *want = conf_xmalloc(sizeof(double) * (size_t)(m * n));
	double *bound = conf_xmalloc(sizeof(double) * (size_t)(m * n));

	ref_random_row(wdt, &r, w, n * k);
	conf_fill_uniform(&r, x, (size_t)(c->x == X_BROADCAST ? k : m * k), -1.0, 1.0);
	if (c->x == X_BROADCAST) {
		for (int64_t i = 1; i < m; i++)
			memcpy(x + i * k, x, sizeof(float) * (size_t)k);
	}
	conf_fill_uniform(&r, bias, (size_t)n, -1.0, 1.0);
	ref_matmul(wdt, w, row_bytes, n, k, x, m, c->bias ? bias : NULL, want, bound);

	int64_t w_shape[2] = { n, k }, y_shape[2] = { m, n };
	struct conf_tensor xt = upload_x(c, x, m, k);
	struct conf_tensor wt = c->w_padded ? conf_upload_strided(wdt, 2, w_shape, w, 4, ref_block_bytes(wdt))
					    : conf_upload(wdt, 2, w_shape, w);
	struct conf_tensor bt = conf_upload(GLLMK_F32, 1, &n, bias);
	struct conf_tensor yt = c->y_padded ? conf_output_padded(GLLMK_F32, 2, y_shape, 8)
					    : conf_output(GLLMK_F32, 2, y_shape);

	conf_ok(gllmk_matmul(conf.ctx, &yt.t, &xt.t, &wt.t, c->bias ? &bt.t : NULL));
	conf_check_product(what, &yt, got, want, bound, (size_t)(m * n), (size_t)(c->x == X_BROADCAST ? n : m * n),
			   wdt);

	conf_free(&xt);
	conf_free(&wt);
	conf_free(&bt);
	conf_free(&yt);
	free(w);
	free(x);
	free(bias);
	free(got);
	free(want);
	free(bound);
}

void conf_matmul_dtype(gllmk_dtype wdt)
{
	conf_begin("matmul");
	for (size_t i = 0; i < sizeof(mm_cases) / sizeof(mm_cases[0]); i++)
		if (!mm_cases[i].float_only || !ref_dtype_is_block(wdt))
			matmul_one(wdt, &mm_cases[i]);
	conf_covered("matmul");
}

/* K not a multiple of the weight's block: GLLMK_E_BLOCK. */
static void matmul_block_rejected(void **state)
{
	static const struct {
		gllmk_dtype dt;
		int64_t k;
	} ragged[] = { { GLLMK_Q4_0, 48 }, { GLLMK_Q4_K, 288 }, { GLLMK_Q8_0, 33 } };
	gllmk_buffer *buf;

	(void)state;
	conf_begin("matmul");
	conf_ok(gllmk_buffer_alloc(conf.ctx, 1 << 16, &buf));
	for (size_t i = 0; i < sizeof(ragged) / sizeof(ragged[0]); i++) {
		int64_t xs[2] = { 2, ragged[i].k }, ws[2] = { 3, ragged[i].k }, ys[2] = { 2, 3 };
		gllmk_tensor x = gllmk_tensor_make(buf, 0, GLLMK_F32, 2, xs);
		gllmk_tensor w = gllmk_tensor_make(buf, 8192, ragged[i].dt, 2, ws);
		gllmk_tensor y = gllmk_tensor_make(buf, 32768, GLLMK_F32, 2, ys);
		gllmk_status st = gllmk_matmul(conf.ctx, &y, &x, &w, NULL);

		if (st != GLLMK_E_BLOCK)
			conf_fail("matmul %s K=%lld: got %s (%s), want GLLMK_E_BLOCK", ref_dtype_name(ragged[i].dt),
				  (long long)ragged[i].k, gllmk_status_string(st), gllmk_last_error());
	}
	gllmk_buffer_free(buf);
	conf_covered("matmul");
}

CONF_GROUP(matmul) = {
	CONF_DTYPE_TESTS("matmul", conf_matmul_dtype, conf_weight_dtype),
	cmocka_unit_test(matmul_block_rejected),
};
CONF_GROUP_END(matmul);
