/* A plugin built against the ABI 1.0 headers (baseline_plugin.c, compiled
 * with abi/baseline/v1.0/ only) loads into the current core and works:
 *
 *   test_abi_baseline --plugin-dir DIR    (DIR holds libgllmk-abi-baseline.so)
 *
 * The core must read its 1.0 table (size, minor 0), run the slots it has,
 * and answer the slots it lacks (NULL, or past its table) with
 * GLLMK_E_UNSUPPORTED, and never hand it a dtype of ABI 1.1 (UNSUPPORTED
 * naming the dtype). Prints one line per check; exit 1 if any failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gllmk.h"

int abi_table_layout_slots(void);

static int failures;

static void check(int ok, const char *what, const char *detail)
{
	printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail ? ": " : "", detail ? detail : "");
	failures += !ok;
}

static void check_status(gllmk_status st, gllmk_status want, const char *what)
{
	char detail[512];

	snprintf(detail, sizeof(detail), "%s (want %s)%s%s", gllmk_status_string(st), gllmk_status_string(want),
		 st != GLLMK_OK ? ", last error: " : "", st != GLLMK_OK ? gllmk_last_error() : "");
	check(st == want, what, detail);
}

static void check_report(const gllmk_context *ctx)
{
	const gllmk_report *r = gllmk_context_report(ctx);
	const gllmk_plugin_report *p;
	char detail[256];

	if (!r || r->selected < 0) {
		check(0, "the report names the selected plugin", NULL);
		return;
	}
	p = &r->plugins[r->selected];
	snprintf(detail, sizeof(detail), "%s, ABI %u.%u", p->name, p->abi_major, p->abi_minor);
	check(strcmp(p->name, "abi-baseline") == 0 && p->abi_major == 1 && p->abi_minor == 0,
	      "the report shows abi-baseline with the table's ABI 1.0", detail);
}

/* y = 2·x, then y = y + x on the 1.0 plugin: the slots it has run. */
static void check_ops(gllmk_context *ctx)
{
	enum { N = 64 };
	float x[N], y[N];
	int64_t shape[1] = { N };
	gllmk_buffer *bx = NULL, *by = NULL;
	gllmk_tensor tx, ty;
	int exact = 1;

	for (int i = 0; i < N; i++)
		x[i] = (float)i - 20.5f;
	check_status(gllmk_buffer_alloc(ctx, sizeof(x), &bx), GLLMK_OK, "buffer_alloc x");
	check_status(gllmk_buffer_alloc(ctx, sizeof(y), &by), GLLMK_OK, "buffer_alloc y");
	if (!bx || !by)
		return;
	check_status(gllmk_buffer_write(bx, 0, x, sizeof(x)), GLLMK_OK, "buffer_write");
	tx = gllmk_tensor_make(bx, 0, GLLMK_F32, 1, shape);
	ty = gllmk_tensor_make(by, 0, GLLMK_F32, 1, shape);
	check_status(gllmk_scale(ctx, &ty, &tx, 2.0f), GLLMK_OK, "scale (a 1.0 slot)");
	check_status(gllmk_add(ctx, &ty, &ty, &tx), GLLMK_OK, "add in place (a 1.0 slot)");
	check_status(gllmk_sync(ctx), GLLMK_OK, "sync");
	check_status(gllmk_buffer_read(by, 0, y, sizeof(y)), GLLMK_OK, "buffer_read");
	for (int i = 0; i < N; i++)
		exact &= y[i] == 3.0f * x[i];
	check(exact, "y = 2x + x, read back through the core", NULL);

	/* A slot the 1.0 plugin leaves NULL: the core answers, no call is made. */
	check_status(gllmk_relu(ctx, &ty, &tx), GLLMK_E_UNSUPPORTED, "relu (NULL in the 1.0 plugin)");
	gllmk_buffer_free(bx);
	gllmk_buffer_free(by);
}

/* The status of an ABI 1.1 call on the 1.0 plugin must be UNSUPPORTED and
 * its message must name the op (after validation passed: every argument
 * below is valid for the op as SPEC/OPERATORS.md states it). */
static void check_new(gllmk_status st, const char *op)
{
	char what[128];
	const char *msg = gllmk_last_error();

	snprintf(what, sizeof(what), "%s (an ABI 1.1 op, past the 1.0 table)", op);
	check_status(st, GLLMK_E_UNSUPPORTED, what);
	snprintf(what, sizeof(what), "%s: the message names the op", op);
	check(st == GLLMK_OK || strstr(msg, op) != NULL, what, msg);
}

struct arena {
	gllmk_buffer *buf;
	uint64_t used;
};

/* A contiguous tensor carved from one zeroed buffer (ids and slots 0 are
 * valid ids, a zero cu_q/kv_len an empty batch). */
static gllmk_tensor carve(struct arena *a, gllmk_dtype dt, int32_t ndim, const int64_t *shape)
{
	uint64_t bytes;
	int64_t n = 1;
	gllmk_tensor t;

	for (int d = 0; d < ndim - 1; d++)
		n *= shape[d];
	gllmk_dtype_row_bytes(dt, shape[ndim - 1], &bytes);
	t = gllmk_tensor_make(a->buf, a->used, dt, ndim, shape);
	a->used += (bytes * (uint64_t)n + 63) & ~(uint64_t)63;
	return t;
}

#define T(dt, ...) carve(&a, dt, (int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
			 (int64_t[]){ __VA_ARGS__ })

static void check_new_ops(gllmk_context *ctx)
{
	static unsigned char zeros[1 << 16];
	struct arena a = { NULL, 0 };
	gllmk_tensor y, x, x2, pos, cache, slots, q, k, v, o, cu, kvl, bt, ids, w, logits, wq;
	gllmk_rope_ext_params rp = { .struct_size = sizeof(rp), .theta_base = 10000.0f, .freq_scale = 1.0f };
	gllmk_attention_ext_params ap = { .struct_size = sizeof(ap), .kv_len = 4 };
	gllmk_moe_route_params mp = { .struct_size = sizeof(mp) };
	gllmk_glu_params gp = { .struct_size = sizeof(gp) };

	check_status(gllmk_buffer_alloc(ctx, sizeof(zeros), &a.buf), GLLMK_OK, "buffer_alloc for the 1.1 calls");
	if (!a.buf)
		return;
	check_status(gllmk_buffer_write(a.buf, 0, zeros, sizeof(zeros)), GLLMK_OK, "buffer_write zeros");
	y = T(GLLMK_F32, 2, 4, 64);
	x = T(GLLMK_F32, 2, 4, 64);
	x2 = T(GLLMK_F32, 2, 4, 64);
	pos = T(GLLMK_I32, 2);
	check_new(gllmk_rope_ext(ctx, &y, &x, &pos, NULL, &rp), "rope_ext");
	q = T(GLLMK_F32, 1, 4, 64);
	o = T(GLLMK_F32, 1, 4, 64);
	k = T(GLLMK_F32, 4, 2, 64);
	v = T(GLLMK_F32, 4, 2, 64);
	check_new(gllmk_attention_ext(ctx, &o, &q, &k, &v, NULL, NULL, NULL, &ap), "attention_ext");
	cache = T(GLLMK_F32, 2, 4, 2, 64);
	cu = T(GLLMK_I32, 2);
	kvl = T(GLLMK_I32, 1);
	bt = T(GLLMK_I32, 1, 2);
	check_new(gllmk_attention_varlen(ctx, &o, &q, &cache, &cache, NULL, &cu, &kvl, &bt, NULL, &ap),
		  "attention_varlen");
	slots = T(GLLMK_I32, 4);
	check_new(gllmk_kv_store(ctx, &cache, &k, &slots), "kv_store");
	logits = T(GLLMK_F32, 3, 8);
	ids = T(GLLMK_I32, 3, 2);
	wq = T(GLLMK_F32, 3, 2);
	check_new(gllmk_top_k(ctx, &wq, &ids, &logits), "top_k");
	check_new(gllmk_moe_route(ctx, &ids, &wq, &logits, NULL, &mp), "moe_route");
	w = T(GLLMK_F32, 8, 16, 64);
	x = T(GLLMK_F32, 3, 64);
	y = T(GLLMK_F32, 3, 2, 16);
	check_new(gllmk_matmul_id(ctx, &y, &x, &w, &ids, NULL, NULL), "matmul_id");
	y = T(GLLMK_F32, 8, 3, 16);
	x = T(GLLMK_F32, 8, 3, 64);
	check_new(gllmk_matmul_batched(ctx, &y, &x, &w), "matmul_batched");
	x = T(GLLMK_F32, 3, 64);
	x2 = T(GLLMK_F32, 3, 64);
	y = T(GLLMK_F32, 3, 64);
	check_new(gllmk_glu(ctx, &y, &x, &x2, &gp), "glu");
	check_new(gllmk_sigmoid(ctx, &y, &x), "sigmoid");
	check_new(gllmk_clamp(ctx, &y, &x, -1.0f, 1.0f), "clamp");
	check_new(gllmk_softcap(ctx, &y, &x, 30.0f), "softcap");
	check(a.used <= sizeof(zeros), "the 1.1 calls' tensors fit their buffer", NULL);
	gllmk_buffer_free(a.buf);
}

/* The dtypes of ABI 1.1 (SINCE_MINOR 1 in abi/gllmk_dtypes.def) never
 * reach the 1.0 plugin: matmul, dequantize and get_rows (1.0 ops) given
 * one answer GLLMK_E_UNSUPPORTED naming the dtype, every other argument
 * being valid. */
static const struct {
	gllmk_dtype dt;
	const char *name;
	int since_minor;
} def_rows[] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) { e, #name, minor },
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

static void check_new_dtype(gllmk_status st, const char *op, const char *dtype)
{
	char what[128];
	const char *msg = gllmk_last_error();

	snprintf(what, sizeof(what), "%s of %s (a dtype of ABI 1.1)", op, dtype);
	check_status(st, GLLMK_E_UNSUPPORTED, what);
	snprintf(what, sizeof(what), "%s of %s: the message names the dtype", op, dtype);
	check(st == GLLMK_OK || strstr(msg, dtype) != NULL, what, msg);
}

static void check_new_dtypes(gllmk_context *ctx)
{
	static unsigned char zeros[1 << 14];
	struct arena a = { NULL, 0 };
	int n_new = 0;

	check_status(gllmk_buffer_alloc(ctx, sizeof(zeros), &a.buf), GLLMK_OK, "buffer_alloc for the 1.1 dtypes");
	if (!a.buf)
		return;
	check_status(gllmk_buffer_write(a.buf, 0, zeros, sizeof(zeros)), GLLMK_OK, "buffer_write zeros");
	for (size_t i = 0; i < sizeof(def_rows) / sizeof(def_rows[0]); i++) {
		if (def_rows[i].since_minor < 1)
			continue;
		a.used = 0;
		gllmk_tensor w = T(def_rows[i].dt, 4, 256), x = T(GLLMK_F32, 2, 256), y = T(GLLMK_F32, 2, 4);
		gllmk_tensor yd = T(GLLMK_F32, 4, 256), ids = T(GLLMK_I32, 2), yr = T(GLLMK_F32, 2, 256);

		check_new_dtype(gllmk_matmul(ctx, &y, &x, &w, NULL), "matmul", def_rows[i].name);
		check_new_dtype(gllmk_dequantize(ctx, &yd, &w), "dequantize", def_rows[i].name);
		check_new_dtype(gllmk_get_rows(ctx, &yr, &w, &ids), "get_rows", def_rows[i].name);
		check(a.used <= sizeof(zeros), "the tensors fit their buffer", def_rows[i].name);
		n_new++;
	}
	check(n_new == 10, "the .def lists the ten dtypes of ABI 1.1", NULL);
	gllmk_buffer_free(a.buf);
}

int main(int argc, char **argv)
{
	gllmk_options opts = {
		.struct_size = sizeof(opts),
		.flags       = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS,
		.plugins     = "abi-baseline",
	};
	gllmk_context *ctx = NULL;
	gllmk_status st;

	if (argc != 3 || strcmp(argv[1], "--plugin-dir") != 0) {
		fprintf(stderr, "usage: %s --plugin-dir DIR\n", argv[0]);
		return 2;
	}
	opts.plugin_dir = argv[2];
	printf("core speaks ABI %d.%d; baseline table: %d slots\n", GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR,
	       abi_table_layout_slots());

	st = gllmk_open(&opts, &ctx);
	check_status(st, GLLMK_OK, "gllmk_open the ABI 1.0 plugin by name");
	if (st == GLLMK_OK) {
		check_report(ctx);
		check_ops(ctx);
		check_new_ops(ctx);
		check_new_dtypes(ctx);
		gllmk_close(ctx);
	}
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
