/* matmul_id (expert matmul) and matmul_batched for w of every dtype,
 * against the double product of ref_quant.c's decoded weights.
 *
 * matmul_id's reference is the definition (SPEC/OPERATORS.md): slot (t, j)
 * is x's row for it times expert ids[t, j]'s [N, K] matrix; ref_matmul runs
 * once per expert on the rows that chose it (the order of work does not
 * change a double result). With slot weights, the k results of a token are
 * weighted and summed in double.
 *
 * Tolerances (SPEC/TOLERANCES.md, "matmul_id, matmul_batched"): each slot's
 * product has ref_matmul's per-element bound (f32 accumulation, plus 8-bit
 * activation quantization for block dtypes); a weighted sum adds the
 * bounds times |weight| and k + 1 roundings of f32 on Σ|weight·product|.
 * Results of 64 elements or more are also checked norm-wise as matmul's
 * are.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

enum pick {
	PICK_RANDOM, /* ids uniform over the experts: some get several, some none */
	PICK_ONE,    /* every slot chooses the last expert: one group of T·k rows */
	PICK_SPREAD, /* slot s = t·k + j chooses s mod spread: even groups, experts >= spread unpicked */
};

struct id_case {
	int64_t t, k, e, n;
	int64_t k_blocks; /* K in blocks of w's dtype, or ... */
	int64_t k_elems;  /* ... in elements (a multiple of every block) */
	enum pick pick;
	int64_t spread;
	int x_per_slot; /* x [T, k, K], else [T, K] */
	int bias, weighted;
	int padded;     /* x, w and y rows padded */
	int big;        /* quick mode: T 512 -> 64 */
};

static const struct id_case id_cases[] = {
	{ .t = 1, .k = 1, .e = 4, .n = 7, .k_blocks = 1 },
	/* decoding: one token, 8 experts of many, each group one row */
	{ .t = 1, .k = 8, .e = 33, .n = 33, .k_blocks = 3, .bias = 1, .weighted = 1 },
	{ .t = 1, .k = 8, .e = 8, .n = 7, .k_blocks = 2, .pick = PICK_SPREAD, .spread = 8, .x_per_slot = 1 },
	{ .t = 7, .k = 2, .e = 5, .n = 33, .k_blocks = 2, .x_per_slot = 1, .bias = 1, .padded = 1 },
	{ .t = 33, .k = 8, .e = 16, .n = 7, .k_blocks = 2, .pick = PICK_ONE, .weighted = 1, .bias = 1 },
	{ .t = 17, .k = 4, .e = 64, .n = 20, .k_blocks = 1, .weighted = 1, .padded = 1 },
	{ .t = 3, .k = 2, .e = 3, .n = 1, .k_blocks = 5, .x_per_slot = 1, .weighted = 1 },
	/* prefill: 512 tokens, every expert's group large (GEMM paths), 8 of 40 unpicked */
	{ .t = 512, .k = 8, .e = 40, .n = 64, .k_elems = 256, .pick = PICK_SPREAD, .spread = 32, .weighted = 1,
	  .bias = 1, .big = 1 },
	{ .t = 512, .k = 1, .e = 4, .n = 33, .k_elems = 256, .pick = PICK_ONE, .x_per_slot = 1, .big = 1 },
	{ .t = 512, .k = 2, .e = 8, .n = 40, .k_elems = 512, .x_per_slot = 1, .padded = 1, .big = 1 },
};

static int32_t pick_id(const struct id_case *c, struct conf_rng *r, int64_t slot)
{
	switch (c->pick) {
	case PICK_ONE:
		return (int32_t)(c->e - 1);
	case PICK_SPREAD:
		return (int32_t)(slot % c->spread);
	default:
		return (int32_t)conf_rng_int(r, 0, c->e - 1);
	}
}

/* want/bound [T·k, N]: each slot's product, by expert. */
static void ref_slots(gllmk_dtype wdt, const struct id_case *c, int64_t t, int64_t n, int64_t k, const uint8_t *w,
		      const float *x, const float *bias, const int32_t *ids, double *want, double *bound)
{
	size_t row_bytes = ref_row_bytes(wdt, k);
	int64_t slots = t * c->k;
	float *xg = conf_xmalloc(sizeof(float) * (size_t)(slots * k));
	int64_t *who = conf_xmalloc(sizeof(int64_t) * (size_t)slots);
	double *yg = conf_xmalloc(sizeof(double) * (size_t)(slots * n));
	double *bg = conf_xmalloc(sizeof(double) * (size_t)(slots * n));

	for (int64_t e = 0; e < c->e; e++) {
		int64_t cnt = 0;

		for (int64_t s = 0; s < slots; s++) {
			if (ids[s] != e)
				continue;
			memcpy(xg + cnt * k, x + (c->x_per_slot ? s : s / c->k) * k, sizeof(float) * (size_t)k);
			who[cnt++] = s;
		}
		if (!cnt)
			continue;
		ref_matmul(wdt, w + (size_t)e * (size_t)n * row_bytes, row_bytes, n, k, xg, cnt,
			   bias ? bias + e * n : NULL, yg, bg);
		for (int64_t i = 0; i < cnt; i++) {
			memcpy(want + who[i] * n, yg + i * n, sizeof(double) * (size_t)n);
			memcpy(bound + who[i] * n, bg + i * n, sizeof(double) * (size_t)n);
		}
	}
	free(xg);
	free(who);
	free(yg);
	free(bg);
}

/* Folds the slots of each token: want[t, :] = Σ_j sw[t, j] · slot (t, j). */
static void ref_weigh(int64_t t, int64_t k, int64_t n, const float *sw, double *want, double *bound)
{
	for (int64_t i = 0; i < t; i++)
		for (int64_t c = 0; c < n; c++) {
			double sum = 0, err = 0, mag = 0;

			for (int64_t j = 0; j < k; j++) {
				double a = sw[i * k + j], v = want[(i * k + j) * n + c];

				sum += a * v;
				mag += fabs(a * v);
				err += fabs(a) * bound[(i * k + j) * n + c];
			}
			want[i * n + c] = sum;
			bound[i * n + c] = err + (double)(k + 1) * 0x1p-24 * mag;
		}
}

static struct conf_tensor upload_maybe_padded(int padded, gllmk_dtype dt, int32_t ndim, const int64_t *shape,
					      const void *host)
{
	return padded ? conf_upload_strided(dt, ndim, shape, host, 8, 4 + 2 * ref_block_bytes(dt))
		      : conf_upload(dt, ndim, shape, host);
}

static void matmul_id_one(gllmk_dtype wdt, const struct id_case *c)
{
	int64_t qk = ref_block_elems(wdt);
	int64_t t = c->big && conf.quick ? 64 : c->t, n = c->n;
	int64_t k = c->k_blocks ? c->k_blocks * qk : c->k_elems;
	int64_t slots = t * c->k, x_rows = c->x_per_slot ? slots : t, out_rows = c->weighted ? t : slots;
	size_t row_bytes = ref_row_bytes(wdt, k);
	struct conf_rng r;
	char what[160];

	snprintf(what, sizeof(what), "matmul_id %s T=%lld k=%lld E=%lld N=%lld K=%lld%s%s%s%s%s",
		 ref_dtype_name(wdt), (long long)t, (long long)c->k, (long long)c->e, (long long)n, (long long)k,
		 c->pick == PICK_ONE ? " one-expert" : c->pick == PICK_SPREAD ? " spread" : "",
		 c->x_per_slot ? " x:per-slot" : "", c->bias ? " bias" : "", c->weighted ? " weighted" : "",
		 c->padded ? " padded" : "");
	conf_rng_init(&r, what);

	uint8_t *w = conf_xmalloc(row_bytes * (size_t)(c->e * n));
	float *x = conf_xmalloc(sizeof(float) * (size_t)(x_rows * k));
	float *bias = conf_xmalloc(sizeof(float) * (size_t)(c->e * n));
	float *sw = conf_xmalloc(sizeof(float) * (size_t)slots);
	int32_t *ids = conf_xmalloc(sizeof(int32_t) * (size_t)slots);
	float *got = conf_xmalloc(sizeof(float) * (size_t)(out_rows * n));
	double *want = conf_xmalloc(sizeof(double) * (size_t)(slots * n));
	double *bound = conf_xmalloc(sizeof(double) * (size_t)(slots * n));

	ref_random_row(wdt, &r, w, c->e * n * k);
	conf_fill_uniform(&r, x, (size_t)(x_rows * k), -1.0, 1.0);
	conf_fill_uniform(&r, bias, (size_t)(c->e * n), -1.0, 1.0);
	conf_fill_uniform(&r, sw, (size_t)slots, 0.0, 1.0);
	for (int64_t s = 0; s < slots; s++)
		ids[s] = pick_id(c, &r, s);
	ref_slots(wdt, c, t, n, k, w, x, c->bias ? bias : NULL, ids, want, bound);
	if (c->weighted)
		ref_weigh(t, c->k, n, sw, want, bound);

	int64_t w_shape[3] = { c->e, n, k }, ids_shape[2] = { t, c->k }, b_shape[2] = { c->e, n };
	int64_t x_shape[3] = { t, c->k, k }, y_shape[3] = { t, c->k, n };
	if (!c->x_per_slot)
		x_shape[1] = k;
	if (c->weighted)
		y_shape[1] = n;
	struct conf_tensor xt = upload_maybe_padded(c->padded, GLLMK_F32, c->x_per_slot ? 3 : 2, x_shape, x);
	struct conf_tensor wt = upload_maybe_padded(c->padded, wdt, 3, w_shape, w);
	struct conf_tensor it = conf_upload(GLLMK_I32, 2, ids_shape, ids);
	struct conf_tensor bt = conf_upload(GLLMK_F32, 2, b_shape, bias);
	struct conf_tensor st = conf_upload(GLLMK_F32, 2, ids_shape, sw);
	int y_nd = c->weighted ? 2 : 3;
	struct conf_tensor yt = c->padded ? conf_output_padded(GLLMK_F32, y_nd, y_shape, 12)
					  : conf_output(GLLMK_F32, y_nd, y_shape);

	conf_ok(gllmk_matmul_id(conf.ctx, &yt.t, &xt.t, &wt.t, &it.t, c->bias ? &bt.t : NULL,
				c->weighted ? &st.t : NULL));
	conf_check_product(what, &yt, got, want, bound, (size_t)(out_rows * n), (size_t)(out_rows * n), wdt);

	conf_free(&xt);
	conf_free(&wt);
	conf_free(&it);
	conf_free(&bt);
	conf_free(&st);
	conf_free(&yt);
	free(w);
	free(x);
	free(bias);
	free(sw);
	free(ids);
	free(got);
	free(want);
	free(bound);
}

/* ------------------------------------------------------- matmul_batched */

struct batched_case {
	int64_t b, m, n;
	int64_t k_blocks;
	int shared_w; /* w [1, N, K] serves every batch */
	int padded;
};

static const struct batched_case batched_cases[] = {
	{ .b = 1, .m = 1, .n = 1, .k_blocks = 1 },
	{ .b = 3, .m = 7, .n = 33, .k_blocks = 2 },
	{ .b = 4, .m = 1, .n = 7, .k_blocks = 3, .shared_w = 1 },
	{ .b = 2, .m = 33, .n = 17, .k_blocks = 2, .padded = 1 },
	{ .b = 5, .m = 20, .n = 9, .k_blocks = 1, .shared_w = 1, .padded = 1 },
};

static void batched_one(gllmk_dtype wdt, const struct batched_case *c)
{
	int64_t k = c->k_blocks * ref_block_elems(wdt), wb = c->shared_w ? 1 : c->b;
	size_t row_bytes = ref_row_bytes(wdt, k);
	int64_t per_y = c->m * c->n;
	struct conf_rng r;
	char what[128];

	snprintf(what, sizeof(what), "matmul_batched %s B=%lld M=%lld N=%lld K=%lld%s%s", ref_dtype_name(wdt),
		 (long long)c->b, (long long)c->m, (long long)c->n, (long long)k, c->shared_w ? " w:shared" : "",
		 c->padded ? " padded" : "");
	conf_rng_init(&r, what);

	uint8_t *w = conf_xmalloc(row_bytes * (size_t)(wb * c->n));
	float *x = conf_xmalloc(sizeof(float) * (size_t)(c->b * c->m * k));
	float *got = conf_xmalloc(sizeof(float) * (size_t)(c->b * per_y));
	double *want = conf_xmalloc(sizeof(double) * (size_t)(c->b * per_y));
	double *bound = conf_xmalloc(sizeof(double) * (size_t)(c->b * per_y));

	ref_random_row(wdt, &r, w, wb * c->n * k);
	conf_fill_uniform(&r, x, (size_t)(c->b * c->m * k), -1.0, 1.0);
	for (int64_t b = 0; b < c->b; b++)
		ref_matmul(wdt, w + (size_t)(c->shared_w ? 0 : b) * (size_t)c->n * row_bytes, row_bytes, c->n, k,
			   x + b * c->m * k, c->m, NULL, want + b * per_y, bound + b * per_y);

	int64_t w_shape[3] = { wb, c->n, k }, x_shape[3] = { c->b, c->m, k }, y_shape[3] = { c->b, c->m, c->n };
	struct conf_tensor xt = upload_maybe_padded(c->padded, GLLMK_F32, 3, x_shape, x);
	struct conf_tensor wt = upload_maybe_padded(c->padded, wdt, 3, w_shape, w);
	struct conf_tensor yt = c->padded ? conf_output_padded(GLLMK_F32, 3, y_shape, 12)
					  : conf_output(GLLMK_F32, 3, y_shape);

	conf_ok(gllmk_matmul_batched(conf.ctx, &yt.t, &xt.t, &wt.t));
	conf_check_product(what, &yt, got, want, bound, (size_t)(c->b * per_y), (size_t)(c->b * per_y), wdt);

	conf_free(&xt);
	conf_free(&wt);
	conf_free(&yt);
	free(w);
	free(x);
	free(got);
	free(want);
	free(bound);
}

void conf_expert_dtype(gllmk_dtype wdt)
{
	conf_begin("matmul_id");
	for (size_t i = 0; i < sizeof(id_cases) / sizeof(id_cases[0]); i++)
		matmul_id_one(wdt, &id_cases[i]);
	conf_covered("matmul_id");
	conf_begin("matmul_batched");
	for (size_t i = 0; i < sizeof(batched_cases) / sizeof(batched_cases[0]); i++)
		batched_one(wdt, &batched_cases[i]);
	conf_covered("matmul_batched");
}

/* An id outside [0, E): GLLMK_E_BOUNDS naming token and slot, from the call
 * or (a GPU plugin whose ids a pending device op may write) at the next
 * sync. */
static void matmul_id_bad_ids(void **state)
{
	static const int32_t bad[] = { -1, 4, INT32_MAX };
	const int64_t t = 3, k = 2, e = 4, n = 5, kd = 32;
	int64_t w_shape[3] = { e, n, kd }, x_shape[2] = { t, kd }, ids_shape[2] = { t, k }, y_shape[3] = { t, k, n };
	float *w = conf_xmalloc(sizeof(float) * (size_t)(e * n * kd)), *x = conf_xmalloc(sizeof(float) * t * kd);

	(void)state;
	conf_begin("matmul_id");
	memset(w, 0, sizeof(float) * (size_t)(e * n * kd));
	memset(x, 0, sizeof(float) * (size_t)(t * kd));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int32_t ids[6] = { 0, 1, 2, 3, 1, 0 };
		struct conf_tensor wt = conf_upload(GLLMK_F32, 3, w_shape, w), xt = conf_upload(GLLMK_F32, 2, x_shape, x);
		struct conf_tensor it, yt = conf_output(GLLMK_F32, 3, y_shape);
		gllmk_status st;

		ids[3] = bad[i]; /* token 1, slot 1 */
		it = conf_upload(GLLMK_I32, 2, ids_shape, ids);
		st = gllmk_matmul_id(conf.ctx, &yt.t, &xt.t, &wt.t, &it.t, NULL, NULL);
		if (st == GLLMK_OK)
			st = gllmk_sync(conf.ctx);
		if (st != GLLMK_E_BOUNDS)
			conf_fail("matmul_id ids[1, 1] = %d: got %s (%s), want GLLMK_E_BOUNDS", bad[i],
				  gllmk_status_string(st), gllmk_last_error());
		else if (!strstr(gllmk_last_error(), "ids[1, 1]"))
			conf_fail("matmul_id ids[1, 1] = %d: the message does not name ids[1, 1]: %s", bad[i],
				  gllmk_last_error());
		conf_free(&wt);
		conf_free(&xt);
		conf_free(&it);
		conf_free(&yt);
	}
	free(w);
	free(x);
	conf_covered("matmul_id");
}

/* The same with ids an earlier device op writes (argmax over rows whose
 * largest value sits at column E for the last slot, ids[t - 1, 1]): a GPU
 * plugin does not wait for them, so the offence may surface at the sync;
 * the results of the good slots are not checked. t = 3 takes a GPU
 * plugin's decode path, t = 17 its grouped GEMM (SPEC/VULKAN.md,
 * matmul_id). */
static void bad_device_ids_case(int64_t t)
{
	const int64_t k = 2, e = 4, n = 5, kd = 32, flat = t * k;
	int64_t w_shape[3] = { e, n, kd }, x_shape[2] = { t, kd }, ids_shape[2] = { t, k }, y_shape[2] = { t, n };
	int64_t l_shape[2] = { flat, e + 1 };
	float *w = conf_xmalloc(sizeof(float) * (size_t)(e * n * kd)), *x = conf_xmalloc(sizeof(float) * (size_t)(t * kd));
	float *logits = conf_xmalloc(sizeof(float) * (size_t)(flat * (e + 1))), *sw = conf_xmalloc(sizeof(float) * (size_t)flat);
	char want[32];

	memset(w, 0, sizeof(float) * (size_t)(e * n * kd));
	memset(x, 0, sizeof(float) * (size_t)(t * kd));
	memset(logits, 0, sizeof(float) * (size_t)(flat * (e + 1)));
	for (int64_t r = 0; r < flat; r++) {
		logits[r * (e + 1) + (r == flat - 1 ? e : r % e)] = 1.0f;
		sw[r] = 1.0f;
	}
	struct conf_tensor wt = conf_upload(GLLMK_F32, 3, w_shape, w), xt = conf_upload(GLLMK_F32, 2, x_shape, x);
	struct conf_tensor lt = conf_upload(GLLMK_F32, 2, l_shape, logits), st = conf_upload(GLLMK_F32, 2, ids_shape, sw);
	struct conf_tensor it = conf_output(GLLMK_I32, 1, &flat), yt = conf_output(GLLMK_F32, 2, y_shape);
	gllmk_tensor ids2 = gllmk_tensor_make(it.buf, 0, GLLMK_I32, 2, ids_shape);
	gllmk_status rc;

	snprintf(want, sizeof(want), "ids[%lld, 1]", (long long)(t - 1));
	conf_ok(gllmk_argmax(conf.ctx, &it.t, &lt.t));
	rc = gllmk_matmul_id(conf.ctx, &yt.t, &xt.t, &wt.t, &ids2, NULL, &st.t);
	if (rc == GLLMK_OK)
		rc = gllmk_sync(conf.ctx);
	if (rc != GLLMK_E_BOUNDS || !strstr(gllmk_last_error(), want))
		conf_fail("matmul_id, T = %lld, %s = 4 from argmax: got %s (%s), want GLLMK_E_BOUNDS naming it",
			  (long long)t, want, gllmk_status_string(rc), gllmk_last_error());
	conf_free(&wt);
	conf_free(&xt);
	conf_free(&lt);
	conf_free(&st);
	conf_free(&it);
	conf_free(&yt);
	free(w);
	free(x);
	free(logits);
	free(sw);
}

static void matmul_id_bad_device_ids(void **state)
{
	(void)state;
	conf_begin("matmul_id");
	bad_device_ids_case(3);
	bad_device_ids_case(17);
	conf_covered("matmul_id");
}

CONF_GROUP(matmul_id) = {
	CONF_DTYPE_TESTS("matmul_id", conf_expert_dtype, conf_weight_dtype),
	cmocka_unit_test(matmul_id_bad_ids),
	cmocka_unit_test(matmul_id_bad_device_ids),
};
CONF_GROUP_END(matmul_id);
