/* Contexts: opening one on the plugin the loader chose, inserting a
 * preloaded layer, filling the dispatch once, and closing. Also the
 * introspection calls that read what the loader decided.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

/* ------------------------------------------------------------ layers */

/* A preloaded layer (LD_PRELOAD=libgllmk-debug.so) is visible in the global
 * scope; plugins, loaded RTLD_LOCAL, never are. */
static gllmk_layer_entry_fn find_layer(const struct core_plan *plan)
{
	if (plan->flags & GLLMK_OPEN_NO_LAYERS)
		return NULL;
	return (gllmk_layer_entry_fn)dlsym(RTLD_DEFAULT, GLLMK_LAYER_ENTRY_NAME);
}

/* The slots the core calls on a layer without checking. */
static const char *layer_table_problem(const gllmk_plugin_table *t)
{
	if (t->abi_major != GLLMK_ABI_MAJOR)
		return "its table is for another ABI major";
	if (t->size < offsetof(gllmk_plugin_table, close) + sizeof(t->close))
		return "its table ends before the lifecycle slots";
	if (!t->name)
		return "its table has no name";
	if (!t->open || !t->close)
		return "its table leaves open or close NULL";
	return NULL;
}

/* A layer sees the plugin's table at the core's size, whatever minor the
 * plugin was built for: slots the plugin's table does not reach are NULL. */
static void pad_table(gllmk_plugin_table *out, const gllmk_plugin_table *t)
{
	size_t n = t->size < sizeof(*out) ? t->size : sizeof(*out);

	memset(out, 0, sizeof(*out));
	memcpy(out, t, n);
	out->size = sizeof(*out);
}

/* Asks the layer for its table over ctx's plugin and opens it with the
 * plugin's (padded) table and state as next. Called under the loader lock. */
static gllmk_status open_layer(const char *fn, gllmk_context *ctx, gllmk_layer_entry_fn entry, int by_name,
			       uint32_t flags)
{
	char reason[CORE_REASON_MAX] = "";
	const gllmk_plugin_table *t;
	const char *problem;
	gllmk_open_args args = {
		.struct_size = sizeof(args),
		.by_name = by_name,
		.flags = flags & CORE_PLUGIN_FLAGS,
		.host = &core_host,
		.next = &ctx->next,
		.next_state = ctx->plugin_state,
	};
	gllmk_status st;

	pad_table(&ctx->next, ctx->plugin);
	t = entry(&core_host, &ctx->next, reason, sizeof(reason));
	reason[sizeof(reason) - 1] = '\0';
	if (!t)
		return core_error(GLLMK_E_NO_PLUGIN,
				  "%s: the preloaded layer refused plugin '%s': %s (GLLMK_OPEN_NO_LAYERS opens without it)",
				  fn, ctx->plugin->name, reason[0] ? reason : "no reason given");
	problem = layer_table_problem(t);
	if (problem)
		return core_error(GLLMK_E_NO_PLUGIN, "%s: the preloaded layer is unusable: %s", fn, problem);
	st = t->open(&args, &ctx->layer_state, reason, sizeof(reason));
	reason[sizeof(reason) - 1] = '\0';
	if (st) /* out of memory stays out of memory (the caller may retry) */
		return core_error(st == GLLMK_E_NO_MEMORY ? GLLMK_E_NO_MEMORY : GLLMK_E_NO_PLUGIN,
				  "%s: layer '%s' failed to open over plugin '%s': %s", fn, t->name,
				  ctx->plugin->name, reason[0] ? reason : gllmk_status_string(st));
	ctx->layer = t;
	snprintf(ctx->report->layer, sizeof(ctx->report->layer), "%s", t->name);
	ctx->report->pub.layer = ctx->report->layer;
	return GLLMK_OK;
}

/* ---------------------------------------------------------- dispatch */

/* Each slot from the layer when it fills it, else from the plugin. A layer
 * that allocates buffers owns every slot: its handles mean nothing to the
 * plugin, so its NULL slots answer UNSUPPORTED instead of falling through. */
static void fill_dispatch(gllmk_context *ctx)
{
	const gllmk_plugin_table *p = ctx->plugin, *l = ctx->layer;
	int layer_owns_memory = l && CORE_TABLE_SLOT(l, buffer_alloc);

#define FILL(slot, type)                                                     \
	if (l && CORE_TABLE_SLOT(l, slot)) {                                 \
		ctx->d.slot.fn = l->slot;                                    \
		ctx->d.slot.state = ctx->layer_state;                        \
	} else if (!layer_owns_memory) {                                     \
		ctx->d.slot.fn = CORE_TABLE_SLOT(p, slot);                   \
		ctx->d.slot.state = ctx->plugin_state;                       \
	}
	GLLMK_BACKEND_SLOTS(FILL)
	GLLMK_OPS(FILL)
	GLLMK_SLOTS_V1_2(FILL)
#undef FILL
}

/* ------------------------------------------------------ open, close */

static void close_backends(gllmk_context *ctx)
{
	core_loader_lock();
	if (ctx->layer)
		ctx->layer->close(ctx->layer_state);
	ctx->plugin->close(ctx->plugin_state);
	core_loader_unlock();
}

/* The context around the loader's choice: layer, dispatch. */
static gllmk_status adopt(const char *fn, gllmk_context *ctx, const struct core_plan *plan,
			  const struct core_choice *choice)
{
	gllmk_layer_entry_fn layer = find_layer(plan);
	gllmk_status st = GLLMK_OK;

	ctx->plugin = choice->table;
	ctx->plugin_state = choice->state;
	if (layer) {
		core_loader_lock();
		st = open_layer(fn, ctx, layer, choice->by_name, plan->flags);
		core_loader_unlock();
	}
	if (st) {
		close_backends(ctx);
		return st;
	}
	fill_dispatch(ctx);
	ctx->dtypes_ok = core_dtype_mask(ctx->plugin->abi_minor);
	ctx->magic = CORE_CONTEXT_MAGIC;
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_open(const gllmk_options *opts, gllmk_context **out)
{
	const char *fn = "gllmk_open";
	struct core_plan plan;
	struct core_choice choice = { 0 };
	gllmk_context *ctx;
	gllmk_status st;

	st = core_check_ptr(fn, "ctx", out);
	if (st)
		return st;
	*out = NULL;
	st = core_plan_make(fn, opts, &plan);
	if (st)
		return st;
	ctx = calloc(1, sizeof(*ctx));
	if (ctx)
		ctx->report = malloc(sizeof(*ctx->report));
	if (!ctx || !ctx->report) {
		free(ctx);
		return core_error(GLLMK_E_NO_MEMORY, "%s: no memory for the context", fn);
	}
	st = core_walk(fn, &plan, 1, ctx->report, &choice);
	if (!st)
		st = adopt(fn, ctx, &plan, &choice);
	if (st) {
		free(ctx->report);
		free(ctx);
		return st;
	}
	*out = ctx;
	return GLLMK_OK;
}

GLLMK_API void gllmk_close(gllmk_context *ctx)
{
	if (!ctx || ctx->magic != CORE_CONTEXT_MAGIC)
		return;
	/* Buffers may still be in use by enqueued work. */
	if (ctx->d.sync.fn)
		ctx->d.sync.fn(ctx->d.sync.state);
	while (ctx->buffers)
		core_buffer_release(ctx, &ctx->buffers->pub);
	close_backends(ctx);
	ctx->magic = 0;
	free(ctx->report);
	free(ctx);
}

GLLMK_API gllmk_status gllmk_sync(gllmk_context *ctx)
{
	gllmk_status st = core_check_ctx("gllmk_sync", ctx);

	if (st)
		return st;
	if (!ctx->d.sync.fn)
		return core_unsupported(ctx, "gllmk_sync", "sync");
	return ctx->d.sync.fn(ctx->d.sync.state);
}

/* ------------------------------------------------------ introspection */

GLLMK_API const gllmk_report *gllmk_context_report(const gllmk_context *ctx)
{
	return ctx && ctx->magic == CORE_CONTEXT_MAGIC ? &ctx->report->pub : NULL;
}

GLLMK_API const char *gllmk_context_plugin(const gllmk_context *ctx)
{
	return ctx && ctx->magic == CORE_CONTEXT_MAGIC ? ctx->plugin->name : NULL;
}

/* The name of the layer gllmk_open would insert over the selected plugin:
 * asking a layer's entry for its table opens nothing. */
static void survey_layer(struct core_report *r, const struct core_plan *plan, const gllmk_plugin_table *selected)
{
	gllmk_layer_entry_fn entry = find_layer(plan);
	const gllmk_plugin_table *t;
	gllmk_plugin_table next;
	char reason[CORE_REASON_MAX];

	if (!entry || !selected)
		return;
	pad_table(&next, selected);
	core_loader_lock();
	t = entry(&core_host, &next, reason, sizeof(reason));
	core_loader_unlock();
	if (!t || layer_table_problem(t))
		return;
	snprintf(r->layer, sizeof(r->layer), "%s", t->name);
	r->pub.layer = r->layer;
}

GLLMK_API gllmk_status gllmk_survey(const gllmk_options *opts, gllmk_report **out)
{
	const char *fn = "gllmk_survey";
	struct core_plan plan;
	struct core_choice choice = { 0 };
	struct core_report *r;
	gllmk_status st;

	st = core_check_ptr(fn, "out", out);
	if (st)
		return st;
	*out = NULL;
	st = core_plan_make(fn, opts, &plan);
	if (st)
		return st;
	r = malloc(sizeof(*r));
	if (!r)
		return core_error(GLLMK_E_NO_MEMORY, "%s: no memory for the report", fn);
	st = core_walk(fn, &plan, 0, r, &choice);
	if (st) {
		free(r);
		return st;
	}
	survey_layer(r, &plan, choice.table);
	*out = &r->pub;
	return GLLMK_OK;
}

GLLMK_API void gllmk_report_free(gllmk_report *r)
{
	free(r); /* pub is the first member of its struct core_report */
}

static const char *const verdict_strings[] = {
	[GLLMK_VERDICT_SELECTED] = "selected",
	[GLLMK_VERDICT_USABLE] = "usable",
	[GLLMK_VERDICT_BY_NAME_ONLY] = "by name only",
	[GLLMK_VERDICT_NOT_INSTALLED] = "not installed",
	[GLLMK_VERDICT_LOAD_FAILED] = "load failed",
	[GLLMK_VERDICT_NO_ENTRY] = "no entry",
	[GLLMK_VERDICT_ABI_MISMATCH] = "ABI mismatch",
	[GLLMK_VERDICT_REFUSED] = "refused",
	[GLLMK_VERDICT_CANNOT_RUN] = "cannot run",
	[GLLMK_VERDICT_OPEN_FAILED] = "open failed",
	[GLLMK_VERDICT_NOT_REQUESTED] = "not requested",
	[GLLMK_VERDICT_NOT_TRIED] = "not tried",
};

GLLMK_API const char *gllmk_verdict_string(gllmk_verdict v)
{
	if ((unsigned)v >= sizeof(verdict_strings) / sizeof(verdict_strings[0]) || !verdict_strings[v])
		return "unknown verdict";
	return verdict_strings[v];
}
