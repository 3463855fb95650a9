/* get_rows (SPEC/OPERATORS.md "get_rows"): embedding lookup from a table of
 * every dtype gllmk decodes, ids that hit the first and last rows and repeat,
 * tables past the caches, and ids outside the table (GLLMK_E_BOUNDS).
 * Tables are random valid rows decoded by the suite's reference decoders
 * (ref_quant.h, written from SPEC/QUANT.md). Tolerances: SPEC/TOLERANCES.md
 * "get_rows".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

/* A table of v rows of k elements of dt, on the host and on the device. */
struct table {
	gllmk_dtype dt;
	int64_t v, k;
	size_t row_bytes;
	uint8_t *host;
	struct conf_tensor dev;
};

static struct table make_table(struct conf_rng *rng, gllmk_dtype dt, int64_t v, int64_t k)
{
	struct table t = { .dt = dt, .v = v, .k = k, .row_bytes = ref_row_bytes(dt, k) };

	t.host = conf_xmalloc(t.row_bytes * (size_t)v);
	for (int64_t r = 0; r < v; r++)
		ref_random_row(dt, rng, t.host + (size_t)r * t.row_bytes, k);
	t.dev = conf_upload(dt, 2, (int64_t[]){ v, k }, t.host);
	return t;
}

static void free_table(struct table *t)
{
	free(t->host);
	conf_free(&t->dev);
}

/* n ids: the first and the last row, then random ones (repeats likely). */
static void draw_ids(struct conf_rng *rng, int32_t *ids, int64_t n, int64_t v)
{
	for (int64_t i = 0; i < n; i++)
		ids[i] = i == 0 ? (int32_t)(v - 1) : i == 1 ? 0 : (int32_t)conf_rng_int(rng, 0, v - 1);
}

static void lookup_case(struct conf_rng *rng, const struct table *t, int64_t n)
{
	size_t count = (size_t)(n * t->k);
	int32_t *ids = conf_xmalloc((size_t)n * sizeof(int32_t));
	float *got = conf_xmalloc(count * sizeof(float));
	double *want = conf_xmalloc(count * sizeof(double)), *tol = conf_xmalloc(count * sizeof(double));
	struct conf_tensor tids, ty;
	char what[96];

	draw_ids(rng, ids, n, t->v);
	tids = conf_upload(GLLMK_I32, 1, &n, ids);
	ty = conf_output(GLLMK_F32, 2, (int64_t[]){ n, t->k });
	conf_ok(gllmk_get_rows(conf.ctx, &ty.t, &t->dev.t, &tids.t));
	conf_download(&ty, got);
	for (int64_t i = 0; i < n; i++)
		ref_decode_row(t->dt, t->host + (size_t)ids[i] * t->row_bytes, want + i * t->k, t->k);
	/* Block formats: the f32 decode is correctly rounded or one ulp off;
	 * f32, f16 and bf16 widen exactly. */
	if (ref_dtype_is_block(t->dt))
		ref_ulp_tolerance(want, tol, count);
	else
		memset(tol, 0, count * sizeof(double));
	snprintf(what, sizeof(what), "get_rows %s table [%lld,%lld] ids [%lld]", ref_dtype_name(t->dt),
		 (long long)t->v, (long long)t->k, (long long)n);
	conf_check_within(what, got, want, tol, count);
	conf_free(&tids);
	conf_free(&ty);
	free(ids);
	free(got);
	free(want);
	free(tol);
}

/* One id outside [0, v) among valid ones: GLLMK_E_BOUNDS, whatever the
 * position, from the call, or at the next sync from a GPU plugin that checks
 * the ids on the device: ids in device memory (a discrete GPU) or made by a
 * device op still pending (by_copy: a device copy, so that lavapipe runs
 * that path too). Rows before it may have been written, so nothing else is
 * read. */
static void bounds_case(struct conf_rng *rng, const struct table *t, int32_t bad_id, int64_t at, int by_copy)
{
	int64_t n = 5;
	int32_t ids[5];
	char want[64];
	struct conf_tensor tids, tsrc = { 0 }, ty;
	gllmk_status st;

	draw_ids(rng, ids, n, t->v);
	ids[at] = bad_id;
	tids = by_copy ? conf_upload_by_copy(GLLMK_I32, 1, &n, ids, &tsrc) : conf_upload(GLLMK_I32, 1, &n, ids);
	ty = conf_output(GLLMK_F32, 2, (int64_t[]){ n, t->k });
	st = gllmk_get_rows(conf.ctx, &ty.t, &t->dev.t, &tids.t);
	if (st == GLLMK_OK)
		st = gllmk_sync(conf.ctx);
	snprintf(want, sizeof(want), "ids[%lld]", (long long)at);
	if (st != GLLMK_E_BOUNDS || !strstr(gllmk_last_error(), want))
		conf_fail("get_rows %s table of %lld rows, ids[%lld] = %d%s: got %s (%s), want GLLMK_E_BOUNDS naming %s",
			  ref_dtype_name(t->dt), (long long)t->v, (long long)at, bad_id,
			  by_copy ? " (ids by a device copy)" : "", gllmk_status_string(st),
			  st == GLLMK_OK ? "" : gllmk_last_error(), want);
	conf_ok(gllmk_sync(conf.ctx));
	conf_free(&tids);
	if (by_copy)
		conf_free(&tsrc);
	conf_free(&ty);
}

/* Row lengths in elements: whole blocks for block formats, the suite's odd
 * lengths for the others. */
static int64_t row_len(gllmk_dtype dt, int64_t blocks, int64_t odd)
{
	return ref_dtype_is_block(dt) ? blocks * ref_block_elems(dt) : odd;
}

static void run_dtype(struct conf_rng *rng, gllmk_dtype dt)
{
	static const struct {
		int64_t v, blocks, odd, n;
	} shapes[] = {
		{ 1, 1, 1, 3 },
		{ 7, 3, 33, 7 },
		{ 33, 2, 7, 40 },
		{ 4097, 1, 33, 16 },
	};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct table t = make_table(rng, dt, shapes[s].v, row_len(dt, shapes[s].blocks, shapes[s].odd));

		lookup_case(rng, &t, shapes[s].n);
		if (s == 2) {
			bounds_case(rng, &t, (int32_t)t.v, 3, 0);
			bounds_case(rng, &t, -1, 0, 0);
			bounds_case(rng, &t, INT32_MAX, 4, 0);
			bounds_case(rng, &t, (int32_t)t.v, 3, 1);
			bounds_case(rng, &t, -1, 0, 1);
		}
		free_table(&t);
	}
	if (!conf.quick) { /* rows past the L2 */
		struct table t = make_table(rng, dt, 3, row_len(dt, 1024, 262147));

		lookup_case(rng, &t, 4);
		free_table(&t);
	}
}

/* One test per dtype, so one broken format does not hide the others. */
static void run_get_rows(gllmk_dtype dt)
{
	struct conf_rng rng;
	char case_name[32];

	snprintf(case_name, sizeof(case_name), "get_rows %s", gllmk_dtype_name(dt));
	conf_begin("get_rows");
	conf_rng_init(&rng, case_name);
	run_dtype(&rng, dt);
	conf_covered("get_rows");
}

CONF_GROUP(get_rows) = {
	CONF_DTYPE_TESTS("test_get_rows", run_get_rows, conf_weight_dtype),
};
CONF_GROUP_END(get_rows);
