/* The price of the core: a tiny op (scale of one element, and sync) called
 * through gllmk_* against the same plugin's table slot called directly. The
 * plugin file that serves the context is loaded a second time by hand
 * (dlopen, gllmk_plugin_entry_v1, open) the way the core does it, so both
 * paths run the same code on equal data. A repetition is ROUNDS rounds,
 * each a loop of calls through the core then the same loop direct; each path
 * keeps its best round (a round that another process interrupted is not the
 * dispatch's cost) and the difference is taken per repetition.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "gllmk_plugin.h"

#define ROUNDS 20
#define CALLS 10000 /* per round */
#define SMOKE_ROUNDS 3
#define SMOKE_CALLS 500
#define MAX_REPS 256

static gllmk_status direct_set_error(gllmk_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return st;
}

static const gllmk_host direct_host = {
	.struct_size = sizeof(gllmk_host),
	.abi_major = GLLMK_ABI_MAJOR,
	.abi_minor = GLLMK_ABI_MINOR,
	.table_size = sizeof(struct gllmk_plugin_table),
	.set_error = direct_set_error,
};

/* The plugin opened by hand, with a one-element buffer of its own. */
struct direct {
	void *lib;
	const gllmk_plugin_table *table;
	void *state;
	gllmk_buffer buf; /* only impl and size are read by a plugin */
	gllmk_tensor t;
	char why[GLLMK_PROBE_TEXT];
};

static const char *direct_open(const struct bench *b, struct direct *d)
{
	const gllmk_report *rep = gllmk_context_report(b->ctx);
	char *why = d->why;
	gllmk_plugin_entry_fn entry;
	gllmk_open_args args = {
		.struct_size = sizeof(args),
		.n_threads = b->lim.threads,
		.by_name = 1,
		.host = &direct_host,
	};
	const int64_t one = 1;

	if (!rep || rep->selected < 0)
		return "no report of the selected plugin";
	d->lib = dlopen(rep->plugins[rep->selected].path, RTLD_NOW | RTLD_LOCAL);
	if (!d->lib)
		return dlerror();
	entry = (gllmk_plugin_entry_fn)dlsym(d->lib, GLLMK_PLUGIN_ENTRY_NAME);
	d->table = entry ? entry(&direct_host, why, sizeof(d->why)) : NULL;
	if (!d->table)
		return entry ? why : "no gllmk_plugin_entry_v1";
	if (!d->table->open || d->table->open(&args, &d->state, why, sizeof(d->why)) != GLLMK_OK)
		return why;
	if (d->table->buffer_alloc(d->state, 4, &d->buf.impl) != GLLMK_OK)
		return "buffer_alloc failed";
	d->buf.size = 4;
	d->t = gllmk_tensor_make(&d->buf, 0, GLLMK_F32, 1, &one);
	return NULL;
}

static void direct_close(struct direct *d)
{
	if (d->buf.impl)
		d->table->buffer_free(d->state, d->buf.impl);
	if (d->state)
		d->table->close(d->state);
	if (d->lib)
		dlclose(d->lib);
}

/* Nanoseconds per call of a loop of calls, or -1 if one failed. The scale
 * alternates between 2 and 0.5 so the value stays bounded. One function per
 * path, generated, so no extra indirection sits in either loop. */
#define TIMED_LOOP(fn, call)                                                             \
	static double fn(const struct bench *b, const struct direct *d, const gllmk_tensor *t, \
			 int calls)                                                      \
	{                                                                                \
		gllmk_status st = GLLMK_OK;                                              \
		double t0 = bench_now();                                                 \
		(void)b, (void)d, (void)t;                                               \
		for (int i = 0; i < calls && st == GLLMK_OK; i++) {                     \
			float s = i & 1 ? 2.0f : 0.5f;                                   \
			(void)s;                                                         \
			st = (call);                                                     \
		}                                                                        \
		return st == GLLMK_OK ? (bench_now() - t0) * 1e9 / calls : -1.0;       \
	}

TIMED_LOOP(scale_core, gllmk_scale(b->ctx, t, t, s))
TIMED_LOOP(scale_direct, d->table->scale(d->state, &d->t, &d->t, s))
TIMED_LOOP(sync_core, gllmk_sync(b->ctx))
TIMED_LOOP(sync_direct, d->table->sync(d->state))

enum { PATH_CORE, PATH_DIRECT, PATH_DIFF, PATHS };

static void add_rows(struct bench *b, const char *op, double ns[PATHS][MAX_REPS], int reps)
{
	static const char *const path[PATHS] = { "through the core", "direct table call", "core - direct" };

	for (int p = 0; p < PATHS; p++) {
		struct bench_result *r = bench_add(b, "ns/call", BENCH_LIMIT_NONE, "overhead %s: %s", op, path[p]);

		if (!r)
			return;
		r->median = bench_median(ns[p], reps);
		r->min = ns[p][0];
		r->max = ns[p][reps - 1];
		r->reps = reps;
		if (p == PATH_DIFF)
			snprintf(r->note, sizeof(r->note), "dispatch cost (target <= 5 ns)");
		bench_finish_result(b, r);
	}
}

typedef double (*loop_fn)(const struct bench *b, const struct direct *d, const gllmk_tensor *t, int calls);

static const struct overhead_op {
	const char *name;
	loop_fn path[2]; /* PATH_CORE, PATH_DIRECT */
} overhead_ops[] = {
	{ "scale[1]", { scale_core, scale_direct } },
	{ "sync", { sync_core, sync_direct } },
};

/* One repetition of one op: the best round of each path, and their
 * difference; false if a call failed. */
static bool overhead_rep(const struct bench *b, const struct direct *d, const gllmk_tensor *t,
			 const struct overhead_op *op, double ns[PATHS][MAX_REPS], int k)
{
	int rounds = b->opt->smoke ? SMOKE_ROUNDS : ROUNDS, calls = b->opt->smoke ? SMOKE_CALLS : CALLS;

	for (int p = PATH_CORE; p <= PATH_DIRECT; p++)
		ns[p][k] = INFINITY;
	for (int r = 0; r < rounds; r++) {
		for (int p = PATH_CORE; p <= PATH_DIRECT; p++) {
			double v = op->path[p](b, d, t, calls);

			if (v < 0)
				return false;
			ns[p][k] = v < ns[p][k] ? v : ns[p][k];
		}
	}
	ns[PATH_DIFF][k] = ns[PATH_CORE][k] - ns[PATH_DIRECT][k];
	return true;
}

void bench_cases_overhead(struct bench *b)
{
	enum { N_OPS = sizeof(overhead_ops) / sizeof(overhead_ops[0]) };
	const int64_t one = 1;
	int reps = b->opt->reps < MAX_REPS ? b->opt->reps : MAX_REPS;
	double (*ns)[PATHS][MAX_REPS] = calloc(N_OPS, sizeof(*ns));
	bool want[N_OPS], any = false;
	struct direct d = { 0 };
	gllmk_buffer *buf = NULL;
	gllmk_tensor t;
	const char *why;
	gllmk_status st;

	for (int i = 0; i < N_OPS; i++) {
		char name[64];

		snprintf(name, sizeof(name), "overhead %s", overhead_ops[i].name);
		want[i] = bench_selected(b, name);
		any |= want[i];
	}
	if (!any || !ns) {
		if (!ns)
			bench_fail(b, "overhead", GLLMK_E_NO_MEMORY);
		free(ns);
		return;
	}
	why = direct_open(b, &d);
	if (why) {
		fprintf(stderr, "gllmk-bench: overhead: cannot open the plugin directly: %s\n", why);
		direct_close(&d);
		free(ns);
		bench_fail(b, "overhead", GLLMK_E_BACKEND);
		return;
	}
	st = gllmk_buffer_alloc(b->ctx, 4, &buf);
	t = gllmk_tensor_make(buf, 0, GLLMK_F32, 1, &one);
	/* r == 0 is the warm-up, overwritten by the first timed repetition */
	for (int r = 0; r <= reps && st == GLLMK_OK; r++)
		for (int i = 0; i < N_OPS && st == GLLMK_OK; i++)
			if (want[i] && !overhead_rep(b, &d, &t, &overhead_ops[i], ns[i], r ? r - 1 : 0))
				st = GLLMK_E_BACKEND;
	for (int i = 0; i < N_OPS && st == GLLMK_OK; i++)
		if (want[i])
			add_rows(b, overhead_ops[i].name, ns[i], reps);
	if (st != GLLMK_OK)
		bench_fail(b, "overhead", st);
	gllmk_buffer_free(buf);
	direct_close(&d);
	free(ns);
}
