/* GLLMK_OPEN_BF16_ACTIVATIONS: a second context on the plugin under test,
 * opened with the flag, runs the matmul, matmul_id and matmul_batched cases
 * of test_matmul.c and test_matmul_id.c (every shape, layout and path of
 * theirs; inputs seeded from the case names, so the same data as in the
 * default context).
 *
 * With bf16 weights the flag lets a plugin round x to bf16 first, and
 * conf.bf16_act makes ref_matmul's bounds the looser ones of
 * SPEC/TOLERANCES.md ("bf16 activations"): per element 2⁻⁸·Σ|x·w| more,
 * norm-wise 2⁻⁸ instead of 1e-4. Every other weight dtype keeps its bounds
 * under the flag (f32, f16 and q8_0 here): the flag permits nothing else.
 * A plugin that ignores the flag passes the looser bound as it passes the
 * strict one; the strict bound without the flag is the matmul_bf16 and
 * matmul_id_bf16 tests' (test_matmul.c, test_matmul_id.c, default context),
 * and the odd-K view below checks both contexts side by side.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

/* Runs run(dt) with conf.ctx on a context of the same plugin opened with
 * GLLMK_OPEN_BF16_ACTIVATIONS (conf.bf16_act set), then puts the default
 * context back. */
static void with_bf16_activations(void (*run)(gllmk_dtype), gllmk_dtype dt)
{
	const gllmk_options opts = {
		.struct_size = sizeof(opts),
		.flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_BF16_ACTIVATIONS,
		.plugins = conf.plugin,
		.plugin_dir = conf.plugin_dir,
	};
	gllmk_context *saved = conf.ctx, *ctx = NULL;

	conf_ok(gllmk_open(&opts, &ctx));
	if (strcmp(gllmk_context_plugin(ctx), conf.plugin) != 0)
		conf_fail("the flagged context runs on '%s', not '%s'", gllmk_context_plugin(ctx), conf.plugin);
	conf.ctx = ctx;
	conf.bf16_act = 1;
	run(dt);
	conf.bf16_act = 0;
	conf.ctx = saved;
	gllmk_close(ctx);
}

static void bf16_act_matmul(void **state)
{
	(void)state;
	with_bf16_activations(conf_matmul_dtype, GLLMK_BF16);
}

static void bf16_act_matmul_id_batched(void **state)
{
	(void)state;
	with_bf16_activations(conf_expert_dtype, GLLMK_BF16);
}

/* The flag concerns bf16 weights only: f32, f16 and q8_0 keep their bounds. */
static void bf16_act_other_dtypes(void **state)
{
	static const gllmk_dtype others[] = { GLLMK_F32, GLLMK_F16, GLLMK_Q8_0 };

	(void)state;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		with_bf16_activations(conf_matmul_dtype, others[i]);
		with_bf16_activations(conf_expert_dtype, others[i]);
	}
}

/* An odd K whose weight rows start on 4-byte boundaries: w [N, K] is a view
 * of [N, K + 1] rows whose last column is NaN, so a plugin that pairs
 * depths must pad the last pair itself (NaN · 0 is NaN); M = 40 and 512
 * take the GEMM. Checked in the default context (strict bound) and in the
 * flagged one (the bf16 bound). */
static void odd_k_view(gllmk_dtype dt)
{
	static const int64_t ms[] = { 40, 512 };
	const int64_t n = 37, k = 301, ld = k + 1;

	conf_begin("matmul");
	for (size_t c = 0; c < sizeof(ms) / sizeof(ms[0]); c++) {
		const int64_t m = ms[c];
		struct conf_rng r;
		char what[128];

		snprintf(what, sizeof(what), "matmul %s M=%lld N=%lld K=%lld w:view of K+1 (NaN past K)%s",
			 ref_dtype_name(dt), (long long)m, (long long)n, (long long)k,
			 conf.bf16_act ? " bf16-activations" : "");
		conf_rng_init(&r, what);

		uint16_t *w = conf_xmalloc(sizeof(uint16_t) * (size_t)(n * ld));
		float *x = conf_xmalloc(sizeof(float) * (size_t)(m * k));
		float *got = conf_xmalloc(sizeof(float) * (size_t)(m * n));
		double *want = conf_xmalloc(sizeof(double) * (size_t)(m * n));
		double *bound = conf_xmalloc(sizeof(double) * (size_t)(m * n));

		for (int64_t j = 0; j < n; j++) {
			ref_random_row(dt, &r, w + j * ld, k);
			w[j * ld + k] = 0x7fc5; /* a bf16 NaN */
		}
		conf_fill_uniform(&r, x, (size_t)(m * k), -1.0, 1.0);
		ref_matmul(dt, w, sizeof(uint16_t) * (size_t)ld, n, k, x, m, NULL, want, bound);

		int64_t ws[2] = { n, ld }, xs[2] = { m, k }, ys[2] = { m, n };
		struct conf_tensor wt = conf_upload(dt, 2, ws, w), xt = conf_upload(GLLMK_F32, 2, xs, x);
		struct conf_tensor yt = conf_output(GLLMK_F32, 2, ys);
		gllmk_tensor wv = wt.t;

		wv.shape[1] = k; /* rows stay ld elements apart */
		conf_ok(gllmk_matmul(conf.ctx, &yt.t, &xt.t, &wv, NULL));
		conf_download(&yt, got);
		conf_check_within(what, got, want, bound, (size_t)(m * n));
		conf_check_rel_norm(what, got, want, (size_t)(m * n), ref_matmul_norm_tolerance(dt));
		conf_free(&wt);
		conf_free(&xt);
		conf_free(&yt);
		free(w);
		free(x);
		free(got);
		free(want);
		free(bound);
	}
	conf_covered("matmul");
}

static void bf16_act_odd_k_view(void **state)
{
	(void)state;
	odd_k_view(GLLMK_BF16);
	with_bf16_activations(odd_k_view, GLLMK_BF16);
}

/* A bit of gllmk_options.flags the core does not know: GLLMK_E_INVALID
 * naming the bit, nothing opened. */
static void bf16_act_unknown_flag(void **state)
{
	const gllmk_options opts = {
		.struct_size = sizeof(opts),
		.flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_BF16_ACTIVATIONS | (1u << 3),
		.plugins = conf.plugin,
		.plugin_dir = conf.plugin_dir,
	};
	gllmk_context *ctx = NULL;
	gllmk_status st;

	(void)state;
	st = gllmk_open(&opts, &ctx);
	if (st != GLLMK_E_INVALID || ctx || !strstr(gllmk_last_error(), "(0x8)"))
		conf_fail("flags with bit 3: got %s, ctx %p (%s), want GLLMK_E_INVALID naming 0x8",
			  gllmk_status_string(st), (void *)ctx, gllmk_last_error());
	gllmk_close(ctx);
}

CONF_GROUP(bf16_act) = {
	cmocka_unit_test(bf16_act_matmul),
	cmocka_unit_test(bf16_act_matmul_id_batched),
	cmocka_unit_test(bf16_act_other_dtypes),
	cmocka_unit_test(bf16_act_odd_k_view),
	cmocka_unit_test(bf16_act_unknown_flag),
};
CONF_GROUP_END(bf16_act);
