/* A plugin built against the ABI 1.0 headers (baseline_plugin.c, compiled
 * with abi/baseline/v1.0/ only) loads into the current core and works:
 *
 *   test_abi_baseline --plugin-dir DIR    (DIR holds libgllmk-abi-baseline.so)
 *
 * The core must read its 1.0 table (size, minor 0), run the slots it has,
 * and answer the slots it lacks (NULL, or past its table) with
 * GLLMK_E_UNSUPPORTED. Prints one line per check; exit 1 if any failed. */
#include <math.h>
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
		gllmk_close(ctx);
	}
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
