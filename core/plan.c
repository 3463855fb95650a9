/* What gllmk_open and gllmk_survey were asked for: the options struct, the
 * GLLMK_PLUGIN override and the plugin directory, read and checked once
 * into a struct core_plan before anything is loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

#ifndef GLLMK_PLUGINDIR
#error "the build passes GLLMK_PLUGINDIR, the installed <libdir>/gllmk"
#endif

#define KNOWN_FLAGS ((uint32_t)(GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS | CORE_PLUGIN_FLAGS))

/* A field of the caller's options, or 0 when its struct_size says the
 * caller was built against an older, shorter gllmk_options. */
#define OPT(o, field) \
	((o)->struct_size >= offsetof(gllmk_options, field) + sizeof((o)->field) ? (o)->field : 0)

/* <dir of libgllmk.so.1>/gllmk: <libdir>/gllmk when installed, build/core/gllmk
 * in the build tree, and wherever a relocated install put it. */
static void default_dir(char *dir, size_t len)
{
	Dl_info info;
	char self[PATH_MAX];
	char *slash;

	if (dladdr((void *)default_dir, &info) && info.dli_fname && realpath(info.dli_fname, self)) {
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(dir, len, "%s/gllmk", self) < len)
				return;
		}
	}
	snprintf(dir, len, "%s", GLLMK_PLUGINDIR);
}

/* The file a plugin name stands for; 0 if the path does not fit. */
int core_plugin_path(char *path, size_t len, const char *dir, const char *name)
{
	return (size_t)snprintf(path, len, "%s/libgllmk-%s.so", dir, name) < len;
}

/* ^[a-z0-9][a-z0-9-]*$ */
static int name_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && i > 0);

		if (!ok)
			return 0;
	}
	return n > 0;
}

static gllmk_status add_name(const char *fn, struct core_plan *plan, const char *s, size_t n)
{
	if (n == 0)
		return core_error(GLLMK_E_INVALID, "%s: %s has an empty name (names are separated by single commas)",
				  fn, plan->source);
	if (memchr(s, '/', n) || memchr(s, '.', n))
		return core_error(GLLMK_E_INVALID, "%s: %s names \"%.*s\": plugin names only, never paths", fn,
				  plan->source, (int)n, s);
	if (n >= CORE_NAME_MAX || !name_ok(s, n))
		return core_error(GLLMK_E_INVALID,
				  "%s: %s names \"%.*s\", not a plugin name ([a-z0-9][a-z0-9-]*, under %d characters)",
				  fn, plan->source, (int)n, s, CORE_NAME_MAX);
	if (plan->n_named == CORE_MAX_NAMED)
		return core_error(GLLMK_E_INVALID, "%s: %s names more than %d plugins", fn, plan->source,
				  CORE_MAX_NAMED);
	for (int i = 0; i < plan->n_named; i++)
		if (strlen(plan->named[i]) == n && !memcmp(plan->named[i], s, n))
			return core_error(GLLMK_E_INVALID, "%s: %s names \"%.*s\" twice", fn, plan->source, (int)n, s);
	memcpy(plan->named[plan->n_named], s, n);
	plan->named[plan->n_named][n] = '\0';
	plan->n_named++;
	return GLLMK_OK;
}

/* "name[,name...]", each an installed plugin. */
static gllmk_status parse_override(const char *fn, struct core_plan *plan, const char *list)
{
	char path[PATH_MAX];
	gllmk_status st;

	for (const char *p = list;; ) {
		const char *end = strchrnul(p, ',');

		st = add_name(fn, plan, p, (size_t)(end - p));
		if (st)
			return st;
		if (!*end)
			break;
		p = end + 1;
	}
	for (int i = 0; i < plan->n_named; i++) {
		if (!core_plugin_path(path, sizeof(path), plan->dir, plan->named[i]))
			return core_error(GLLMK_E_INVALID, "%s: plugin path for \"%s\" is longer than PATH_MAX", fn,
					  plan->named[i]);
		if (access(path, F_OK))
			return core_error(GLLMK_E_NO_PLUGIN, "%s: %s names \"%s\", which is not installed in %s (no %s)",
					  fn, plan->source, plan->named[i], plan->dir, path);
	}
	return GLLMK_OK;
}

/* The options struct itself: size, flags, threads, directory. */
static gllmk_status read_options(const char *fn, const gllmk_options *opts, struct core_plan *plan,
				 const char **list)
{
	const char *dir;

	if (opts->struct_size < offsetof(gllmk_options, plugins))
		return core_error(GLLMK_E_INVALID, "%s: opts->struct_size = %u (set it to sizeof(gllmk_options) = %zu)",
				  fn, opts->struct_size, sizeof(gllmk_options));
	plan->flags = opts->flags;
	if (plan->flags & ~KNOWN_FLAGS)
		return core_error(GLLMK_E_INVALID, "%s: opts->flags = 0x%x has bits this core does not know (0x%x)", fn,
				  plan->flags, plan->flags & ~KNOWN_FLAGS);
	plan->n_threads = OPT(opts, n_threads);
	if (plan->n_threads < 0)
		return core_error(GLLMK_E_INVALID, "%s: opts->n_threads = %d (must be >= 0; 0 = one per core)", fn,
				  (int)plan->n_threads);
	dir = OPT(opts, plugin_dir);
	if (dir && (size_t)snprintf(plan->dir, sizeof(plan->dir), "%s", dir) >= sizeof(plan->dir))
		return core_error(GLLMK_E_INVALID, "%s: opts->plugin_dir is longer than PATH_MAX", fn);
	*list = OPT(opts, plugins);
	return GLLMK_OK;
}

gllmk_status core_plan_make(const char *fn, const gllmk_options *opts, struct core_plan *plan)
{
	const char *list = NULL;
	gllmk_status st;

	memset(plan, 0, sizeof(*plan));
	if (opts) {
		st = read_options(fn, opts, plan, &list);
		if (st)
			return st;
	}
	if (!plan->dir[0])
		default_dir(plan->dir, sizeof(plan->dir));
	if (list && *list) {
		plan->source = "options->plugins";
	} else if (!(plan->flags & GLLMK_OPEN_NO_ENV)) {
		/* NULL in setuid/setgid programs: the override is for debugging
		 * one's own process, never for steering a privileged one. */
		list = secure_getenv("GLLMK_PLUGIN");
		if (list && *list)
			plan->source = "GLLMK_PLUGIN";
	}
	return plan->source ? parse_override(fn, plan, list) : GLLMK_OK;
}
