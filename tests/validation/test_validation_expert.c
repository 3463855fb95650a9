/* Bad input for gllmk_matmul_id and gllmk_matmul_batched, on a real
 * context (cpu-generic), in the manner of test_validation.c: every case
 * starts from a valid call, changes one thing and checks
 *   - the exact status;
 *   - that gllmk_last_error() names the function and the argument (a whole
 *     word);
 *   - that nothing was written: y's buffer is byte for byte what it was.
 * The view rules every tensor argument shares (NULL, foreign buffer,
 * alignment, bounds ...) live in core/validate.c and are exercised for
 * every op by test_validation.c's tensor rules; here, what is particular to
 * these two ops: ranks, dims that must agree, dtypes, aliasing, and the
 * ids' values (GLLMK_E_BOUNDS from the plugin, naming token and slot).
 *
 *   test_validation_expert --plugin-dir DIR [--plugin NAME]
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gllmk.h"

static struct {
	const char *plugin_dir, *plugin;
	gllmk_context *ctx;
	gllmk_buffer *in, *out; /* inputs; y (poisoned) */
} run = { .plugin = "cpu-generic" };

#define IN_BYTES (1 << 16)
#define OUT_BYTES 4096

/* The good calls: T = 3 tokens, k = 2 slots, E = 4 experts, N = 8, K = 32. */
enum { T = 3, KS = 2, E = 4, N = 8, K = 32 };
enum { OFF_W = 0, OFF_X = 8192, OFF_IDS = 12288, OFF_BIAS = 12800, OFF_SW = 13312, OFF_XB = 16384 };

struct call {
	gllmk_tensor y, x, w, ids, bias, sw;
	int has_bias, has_sw;
};

static gllmk_tensor make(gllmk_buffer *b, uint64_t off, gllmk_dtype dt, int32_t nd, int64_t d0, int64_t d1,
			 int64_t d2)
{
	int64_t shape[3] = { d0, d1, d2 };

	return gllmk_tensor_make(b, off, dt, nd, shape);
}

/* matmul_id: y [T, k, N], x [T, K], w [E, N, K], ids [T, k], bias [E, N];
 * with slot weights [T, k], y [T, N]. */
static struct call good_id(int weighted)
{
	struct call c = {
		.x = make(run.in, OFF_X, GLLMK_F32, 2, T, K, 0),
		.w = make(run.in, OFF_W, GLLMK_F32, 3, E, N, K),
		.ids = make(run.in, OFF_IDS, GLLMK_I32, 2, T, KS, 0),
		.bias = make(run.in, OFF_BIAS, GLLMK_F32, 2, E, N, 0),
		.sw = make(run.in, OFF_SW, GLLMK_F32, 2, T, KS, 0),
		.has_bias = 1,
		.has_sw = weighted,
	};
	c.y = weighted ? make(run.out, 0, GLLMK_F32, 2, T, N, 0) : make(run.out, 0, GLLMK_F32, 3, T, KS, N);
	return c;
}

/* matmul_batched: y [B, M, N], x [B, M, K], w [B, N, K]: B = 3, M = 2. */
static struct call good_batched(void)
{
	struct call c = {
		.y = make(run.out, 0, GLLMK_F32, 3, 3, 2, N),
		.x = make(run.in, OFF_XB, GLLMK_F32, 3, 3, 2, K),
		.w = make(run.in, OFF_W, GLLMK_F32, 3, 3, N, K),
	};
	return c;
}

static gllmk_status call_id(const struct call *c)
{
	return gllmk_matmul_id(run.ctx, &c->y, &c->x, &c->w, &c->ids, c->has_bias ? &c->bias : NULL,
			       c->has_sw ? &c->sw : NULL);
}

static gllmk_status call_batched(const struct call *c)
{
	return gllmk_matmul_batched(run.ctx, &c->y, &c->x, &c->w);
}

/* ------------------------------------------------------------- cases */

struct vcase {
	const char *what;
	int batched, weighted;
	void (*mutate)(struct call *c);
	gllmk_status want;
	const char *arg; /* the argument the message must name; NULL when want is OK */
};

#define MUT(name, code)                            \
	static void mut_##name(struct call *c)     \
	{                                          \
		code;                              \
	}

MUT(none, (void)c)
MUT(w_i32, c->w.dtype = GLLMK_I32)
MUT(w_2d, c->w = make(run.in, OFF_W, GLLMK_F32, 2, N, K, 0))
MUT(w_k, c->w = make(run.in, OFF_W, GLLMK_F32, 3, E, N, 16))
MUT(w_q4_0_k, (c->w = make(run.in, OFF_W, GLLMK_Q4_0, 3, E, N, 48), c->x = make(run.in, OFF_X, GLLMK_F32, 2, T, 48, 0)))
MUT(w_q8_0, c->w = make(run.in, OFF_W, GLLMK_Q8_0, 3, E, N, K))
MUT(ids_f32, c->ids.dtype = GLLMK_F32)
MUT(ids_1d, c->ids = make(run.in, OFF_IDS, GLLMK_I32, 1, T * KS, 0, 0))
MUT(x_f16, c->x.dtype = GLLMK_F16)
MUT(x_1d, c->x = make(run.in, OFF_X, GLLMK_F32, 1, K, 0, 0))
MUT(x_t, c->x = make(run.in, OFF_X, GLLMK_F32, 2, T + 1, K, 0))
MUT(x_k, c->x = make(run.in, OFF_X, GLLMK_F32, 2, T, 2 * K, 0))
MUT(x_slots, c->x = make(run.in, OFF_X, GLLMK_F32, 3, T, KS + 1, K))
MUT(x_per_slot, c->x = make(run.in, OFF_X, GLLMK_F32, 3, T, KS, K))
MUT(y_2d, c->y = make(run.out, 0, GLLMK_F32, 2, T, N, 0))
MUT(y_3d, c->y = make(run.out, 0, GLLMK_F32, 3, T, KS, N))
MUT(y_t, c->y = make(run.out, 0, GLLMK_F32, 3, T - 1, KS, N))
MUT(y_k, c->y = make(run.out, 0, GLLMK_F32, 3, T, KS + 1, N))
MUT(y_n, c->y = make(run.out, 0, GLLMK_F32, 3, T, KS, N + 1))
MUT(y_i32, c->y.dtype = GLLMK_I32)
MUT(y_on_x, c->y = make(run.in, OFF_X, GLLMK_F32, 3, T, KS, N))
MUT(y_on_ids, c->y = make(run.in, OFF_IDS - 64, GLLMK_F32, 3, T, KS, N))
MUT(y_on_bias, c->y = make(run.in, OFF_BIAS, GLLMK_F32, 3, T, KS, N))
MUT(y_on_w, c->y = make(run.in, OFF_W, GLLMK_F32, 3, T, KS, N))
MUT(no_bias, c->has_bias = 0)
MUT(bias_1d, c->bias = make(run.in, OFF_BIAS, GLLMK_F32, 1, N, 0, 0))
MUT(bias_e, c->bias = make(run.in, OFF_BIAS, GLLMK_F32, 2, E - 1, N, 0))
MUT(bias_n, c->bias = make(run.in, OFF_BIAS, GLLMK_F32, 2, E, N - 1, 0))
MUT(bias_f16, c->bias.dtype = GLLMK_F16)
MUT(sw_k, c->sw = make(run.in, OFF_SW, GLLMK_F32, 2, T, KS + 1, 0))
MUT(sw_t, c->sw = make(run.in, OFF_SW, GLLMK_F32, 2, T + 1, KS, 0))
MUT(sw_1d, c->sw = make(run.in, OFF_SW, GLLMK_F32, 1, T * KS, 0, 0))
MUT(sw_i32, c->sw.dtype = GLLMK_I32)
MUT(y_on_sw, c->y = make(run.in, OFF_SW, GLLMK_F32, 2, T, N, 0))
MUT(ids_null, c->ids.buf = NULL)

MUT(bw_shared, c->w = make(run.in, OFF_W, GLLMK_F32, 3, 1, N, K))
MUT(bw_q4_k, (c->w = make(run.in, OFF_W, GLLMK_Q4_K, 3, 3, N, 256), c->x = make(run.in, OFF_XB, GLLMK_F32, 3, 3, 2, 256)))
MUT(bw_b, c->w = make(run.in, OFF_W, GLLMK_F32, 3, 2, N, K))
MUT(bw_2d, c->w = make(run.in, OFF_W, GLLMK_F32, 2, N, K, 0))
MUT(bw_i32, c->w.dtype = GLLMK_I32)
MUT(bw_k, c->w = make(run.in, OFF_W, GLLMK_F32, 3, 3, N, 16))
MUT(bx_2d, c->x = make(run.in, OFF_XB, GLLMK_F32, 2, 2, K, 0))
MUT(bx_bf16, c->x.dtype = GLLMK_BF16)
MUT(by_2d, c->y = make(run.out, 0, GLLMK_F32, 2, 2, N, 0))
MUT(by_b, c->y = make(run.out, 0, GLLMK_F32, 3, 2, 2, N))
MUT(by_m, c->y = make(run.out, 0, GLLMK_F32, 3, 3, 3, N))
MUT(by_n, c->y = make(run.out, 0, GLLMK_F32, 3, 3, 2, N - 1))
MUT(by_on_x, c->y = make(run.in, OFF_XB, GLLMK_F32, 3, 3, 2, N))
MUT(by_on_w, c->y = make(run.in, OFF_W, GLLMK_F32, 3, 3, 2, N))

static const struct vcase cases[] = {
	{ "good call", 0, 0, mut_none, GLLMK_OK, NULL },
	{ "good call, slot weights", 0, 1, mut_none, GLLMK_OK, NULL },
	{ "good call, x per slot", 0, 0, mut_x_per_slot, GLLMK_OK, NULL },
	{ "good call, no bias", 0, 0, mut_no_bias, GLLMK_OK, NULL },
	{ "good call, q8_0 w", 0, 0, mut_w_q8_0, GLLMK_OK, NULL },
	{ "w i32", 0, 0, mut_w_i32, GLLMK_E_DTYPE, "w" },
	{ "w 2-D", 0, 0, mut_w_2d, GLLMK_E_SHAPE, "w" },
	{ "w K != x K", 0, 0, mut_w_k, GLLMK_E_SHAPE, "x" },
	{ "q4_0 w, K = 48", 0, 0, mut_w_q4_0_k, GLLMK_E_BLOCK, "w" },
	{ "ids f32", 0, 0, mut_ids_f32, GLLMK_E_DTYPE, "ids" },
	{ "ids 1-D", 0, 0, mut_ids_1d, GLLMK_E_SHAPE, "ids" },
	{ "ids NULL buffer", 0, 0, mut_ids_null, GLLMK_E_NULL, "ids" },
	{ "x f16", 0, 0, mut_x_f16, GLLMK_E_DTYPE, "x" },
	{ "x 1-D", 0, 0, mut_x_1d, GLLMK_E_SHAPE, "x" },
	{ "x T != ids T", 0, 0, mut_x_t, GLLMK_E_SHAPE, "x" },
	{ "x K != w K", 0, 0, mut_x_k, GLLMK_E_SHAPE, "x" },
	{ "x [T, k+1, K]", 0, 0, mut_x_slots, GLLMK_E_SHAPE, "x" },
	{ "y 2-D without slot weights", 0, 0, mut_y_2d, GLLMK_E_SHAPE, "y" },
	{ "y 3-D with slot weights", 0, 1, mut_y_3d, GLLMK_E_SHAPE, "y" },
	{ "y T", 0, 0, mut_y_t, GLLMK_E_SHAPE, "y" },
	{ "y k", 0, 0, mut_y_k, GLLMK_E_SHAPE, "y" },
	{ "y N", 0, 0, mut_y_n, GLLMK_E_SHAPE, "y" },
	{ "y i32", 0, 0, mut_y_i32, GLLMK_E_DTYPE, "y" },
	{ "y on x", 0, 0, mut_y_on_x, GLLMK_E_ALIAS, "y" },
	{ "y on ids", 0, 0, mut_y_on_ids, GLLMK_E_ALIAS, "y" },
	{ "y on bias", 0, 0, mut_y_on_bias, GLLMK_E_ALIAS, "y" },
	{ "y on w", 0, 0, mut_y_on_w, GLLMK_E_ALIAS, "y" },
	{ "y on slot weights", 0, 1, mut_y_on_sw, GLLMK_E_ALIAS, "y" },
	{ "bias 1-D", 0, 0, mut_bias_1d, GLLMK_E_SHAPE, "bias" },
	{ "bias E", 0, 0, mut_bias_e, GLLMK_E_SHAPE, "bias" },
	{ "bias N", 0, 0, mut_bias_n, GLLMK_E_SHAPE, "bias" },
	{ "bias f16", 0, 0, mut_bias_f16, GLLMK_E_DTYPE, "bias" },
	{ "slot weights k", 0, 1, mut_sw_k, GLLMK_E_SHAPE, "slot_weights" },
	{ "slot weights T", 0, 1, mut_sw_t, GLLMK_E_SHAPE, "slot_weights" },
	{ "slot weights 1-D", 0, 1, mut_sw_1d, GLLMK_E_SHAPE, "slot_weights" },
	{ "slot weights i32", 0, 1, mut_sw_i32, GLLMK_E_DTYPE, "slot_weights" },

	{ "good call", 1, 0, mut_none, GLLMK_OK, NULL },
	{ "good call, w [1, N, K]", 1, 0, mut_bw_shared, GLLMK_OK, NULL },
	{ "good call, q4_K w", 1, 0, mut_bw_q4_k, GLLMK_OK, NULL },
	{ "w B != x B", 1, 0, mut_bw_b, GLLMK_E_SHAPE, "w" },
	{ "w 2-D", 1, 0, mut_bw_2d, GLLMK_E_SHAPE, "w" },
	{ "w i32", 1, 0, mut_bw_i32, GLLMK_E_DTYPE, "w" },
	{ "w K != x K", 1, 0, mut_bw_k, GLLMK_E_SHAPE, "w" },
	{ "x 2-D", 1, 0, mut_bx_2d, GLLMK_E_SHAPE, "x" },
	{ "x bf16", 1, 0, mut_bx_bf16, GLLMK_E_DTYPE, "x" },
	{ "y 2-D", 1, 0, mut_by_2d, GLLMK_E_SHAPE, "y" },
	{ "y B", 1, 0, mut_by_b, GLLMK_E_SHAPE, "y" },
	{ "y M", 1, 0, mut_by_m, GLLMK_E_SHAPE, "y" },
	{ "y N", 1, 0, mut_by_n, GLLMK_E_SHAPE, "y" },
	{ "y on x", 1, 0, mut_by_on_x, GLLMK_E_ALIAS, "y" },
	{ "y on w", 1, 0, mut_by_on_w, GLLMK_E_ALIAS, "y" },
};

/* ------------------------------------------------------------ checks */

/* msg names word as a whole word (not inside another identifier). */
static int names_word(const char *msg, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
		int before = p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';

		if (!before && !after)
			return 1;
	}
	return 0;
}

static void fill_inputs(void)
{
	static uint8_t in[IN_BYTES];
	int32_t ids[T * KS] = { 0, 1, 3, 3, 2, 0 };

	/* zero bytes decode to zeros in every dtype: a finite, valid input */
	memset(in, 0, sizeof(in));
	memcpy(in + OFF_IDS, ids, sizeof(ids));
	assert_int_equal(gllmk_buffer_write(run.in, 0, in, sizeof(in)), GLLMK_OK);
}

static int run_case(const struct vcase *vc)
{
	static uint8_t before[OUT_BYTES], after[OUT_BYTES];
	const char *fn = vc->batched ? "gllmk_matmul_batched" : "gllmk_matmul_id";
	struct call c = vc->batched ? good_batched() : good_id(vc->weighted);
	gllmk_status st;

	memset(before, 0xA5, sizeof(before));
	assert_int_equal(gllmk_buffer_write(run.out, 0, before, sizeof(before)), GLLMK_OK);
	vc->mutate(&c);
	st = vc->batched ? call_batched(&c) : call_id(&c);
	if (st == GLLMK_OK)
		st = gllmk_sync(run.ctx);
	if (st != vc->want) {
		fprintf(stderr, "  %s, %s: got %s (%s), want %s\n", fn, vc->what, gllmk_status_string(st),
			st ? gllmk_last_error() : "", gllmk_status_string(vc->want));
		return 1;
	}
	if (st == GLLMK_OK)
		return 0;
	if (!names_word(gllmk_last_error(), fn) || !names_word(gllmk_last_error(), vc->arg)) {
		fprintf(stderr, "  %s, %s: the message does not name %s and %s: %s\n", fn, vc->what, fn, vc->arg,
			gllmk_last_error());
		return 1;
	}
	assert_int_equal(gllmk_buffer_read(run.out, 0, after, sizeof(after)), GLLMK_OK);
	if (memcmp(before, after, sizeof(after))) {
		fprintf(stderr, "  %s, %s: failed but wrote y's buffer\n", fn, vc->what);
		return 1;
	}
	return 0;
}

static void test_cases(void **state)
{
	int failed = 0;

	(void)state;
	fill_inputs();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		failed += run_case(&cases[i]);
	if (failed)
		fail_msg("%d case(s) failed", failed);
}

/* An id outside [0, E): GLLMK_E_BOUNDS naming ids[t, j], from the call (or
 * the next sync), with or without slot weights. */
static void test_bad_ids(void **state)
{
	static const int32_t bad[] = { -1, E, INT32_MAX };
	int failed = 0;

	(void)state;
	for (int weighted = 0; weighted < 2; weighted++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct call c = good_id(weighted);
			gllmk_status st;

			fill_inputs();
			assert_int_equal(gllmk_buffer_write(run.in, OFF_IDS + 4 * (2 * KS + 1), &bad[i], 4), GLLMK_OK);
			st = call_id(&c);
			if (st == GLLMK_OK)
				st = gllmk_sync(run.ctx);
			if (st != GLLMK_E_BOUNDS || !strstr(gllmk_last_error(), "ids[2, 1]")) {
				fprintf(stderr, "  gllmk_matmul_id, ids[2, 1] = %d: got %s (%s), want GLLMK_E_BOUNDS naming "
					"ids[2, 1]\n", bad[i], gllmk_status_string(st), st ? gllmk_last_error() : "");
				failed++;
			}
		}
	if (failed)
		fail_msg("%d case(s) failed", failed);
}

static int setup(void **state)
{
	gllmk_options opts = {
		.struct_size = sizeof(opts),
		.plugins = run.plugin,
		.plugin_dir = run.plugin_dir,
	};

	(void)state;
	if (gllmk_open(&opts, &run.ctx) != GLLMK_OK || gllmk_buffer_alloc(run.ctx, IN_BYTES, &run.in) != GLLMK_OK ||
	    gllmk_buffer_alloc(run.ctx, OUT_BYTES, &run.out) != GLLMK_OK) {
		fprintf(stderr, "cannot open %s in %s: %s\n", run.plugin, run.plugin_dir, gllmk_last_error());
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gllmk_buffer_free(run.in);
	gllmk_buffer_free(run.out);
	gllmk_close(run.ctx);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_bad_ids),
	};

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--plugin-dir"))
			run.plugin_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--plugin"))
			run.plugin = argv[i + 1];
	}
	if (!run.plugin_dir) {
		fprintf(stderr, "usage: %s --plugin-dir DIR [--plugin NAME]\n", argv[0]);
		return 2;
	}
	return cmocka_run_group_tests_name("validation-expert", tests, setup, teardown);
}
