/* gllmk-probe: the plugins, as the core sees them.
 *
 * The probe is a client of the core, never a second implementation of its
 * loader: gllmk_survey() says what every candidate is and which one would be
 * selected, gllmk_open() with the same options says what this process really
 * gets, and each plugin that can run here is then opened by name to see what
 * it can do (probe_caps.c).
 */
#include <stdlib.h>
#include <string.h>

#include "probe_report.h"

bool probe_verdict_usable(gllmk_verdict v)
{
	return v == GLLMK_VERDICT_SELECTED || v == GLLMK_VERDICT_USABLE || v == GLLMK_VERDICT_BY_NAME_ONLY;
}

const char *probe_verdict_id(gllmk_verdict v)
{
	static const char *const ids[] = {
		[GLLMK_VERDICT_SELECTED] = "selected",
		[GLLMK_VERDICT_USABLE] = "usable",
		[GLLMK_VERDICT_BY_NAME_ONLY] = "by-name-only",
		[GLLMK_VERDICT_NOT_INSTALLED] = "not-installed",
		[GLLMK_VERDICT_LOAD_FAILED] = "load-failed",
		[GLLMK_VERDICT_NO_ENTRY] = "no-entry",
		[GLLMK_VERDICT_ABI_MISMATCH] = "abi-mismatch",
		[GLLMK_VERDICT_REFUSED] = "refused",
		[GLLMK_VERDICT_CANNOT_RUN] = "cannot-run",
		[GLLMK_VERDICT_OPEN_FAILED] = "open-failed",
		[GLLMK_VERDICT_NOT_REQUESTED] = "not-requested",
		[GLLMK_VERDICT_NOT_TRIED] = "not-tried",
	};

	return (unsigned)v < sizeof(ids) / sizeof(ids[0]) && ids[v] ? ids[v] : "unknown";
}

const char *probe_status_id(gllmk_status st)
{
	static const char *const ids[] = {
		[GLLMK_OK] = "ok",
		[GLLMK_E_NULL] = "null",
		[GLLMK_E_INVALID] = "invalid",
		[GLLMK_E_DTYPE] = "dtype",
		[GLLMK_E_SHAPE] = "shape",
		[GLLMK_E_OVERFLOW] = "overflow",
		[GLLMK_E_BOUNDS] = "bounds",
		[GLLMK_E_BLOCK] = "block",
		[GLLMK_E_ALIGN] = "align",
		[GLLMK_E_ALIAS] = "alias",
		[GLLMK_E_CONTEXT] = "context",
		[GLLMK_E_UNSUPPORTED] = "unsupported",
		[GLLMK_E_NO_MEMORY] = "no-memory",
		[GLLMK_E_NO_PLUGIN] = "no-plugin",
		[GLLMK_E_BACKEND] = "backend",
	};

	return (unsigned)st < sizeof(ids) / sizeof(ids[0]) && ids[st] ? ids[st] : "unknown";
}

/* NULL when nothing is set: then the core sees exactly gllmk_open(NULL). */
static const gllmk_options *base_options(const struct probe_options *opt, gllmk_options *o)
{
	if (!opt->plugin_dir)
		return NULL;
	*o = (gllmk_options){ .struct_size = sizeof(*o), .plugin_dir = opt->plugin_dir };
	return o;
}

gllmk_status probe_open_named(const struct probe_options *opt, const char *name, gllmk_context **ctx,
			      char *err, size_t err_len)
{
	gllmk_options o = {
		.struct_size = sizeof(o),
		.flags = GLLMK_OPEN_NO_ENV,
		.plugins = name,
		.plugin_dir = opt->plugin_dir,
	};
	gllmk_status st = gllmk_open(&o, ctx);

	if (st != GLLMK_OK)
		snprintf(err, err_len, "%s", gllmk_last_error());
	return st;
}

static void open_default(struct probe_plugins *pl, const gllmk_options *o)
{
	gllmk_context *ctx = NULL;

	pl->open_status = gllmk_open(o, &ctx);
	if (pl->open_status != GLLMK_OK) {
		probe_copy(pl->open_error, gllmk_last_error());
		return;
	}
	probe_copy(pl->selected, gllmk_context_plugin(ctx));
	gllmk_close(ctx);
}

void probe_plugins(struct probe_plugins *pl, const struct probe_options *opt)
{
	gllmk_options storage;
	const gllmk_options *o = base_options(opt, &storage);

	*pl = (struct probe_plugins){ .env_override = secure_getenv("GLLMK_PLUGIN") };
	pl->survey_status = gllmk_survey(o, &pl->survey);
	if (pl->survey_status != GLLMK_OK) {
		probe_copy(pl->survey_error, gllmk_last_error());
		pl->survey = NULL;
	}
	open_default(pl, o);
	if (!pl->survey || !opt->capabilities)
		return;
	pl->caps = calloc(pl->survey->count, sizeof(*pl->caps));
	for (size_t i = 0; pl->caps && i < pl->survey->count; i++) {
		const gllmk_plugin_report *p = &pl->survey->plugins[i];

		if (probe_verdict_usable(p->verdict))
			probe_capabilities(&pl->caps[i], opt, p->name);
	}
}

void probe_plugins_free(struct probe_plugins *pl)
{
	gllmk_report_free(pl->survey);
	free(pl->caps);
	pl->survey = NULL;
	pl->caps = NULL;
}
