/* Finding, loading, negotiating with and probing plugins (SPEC/ABI.md,
 * "The loader").
 *
 * libltdl is initialised once and, not being thread-safe, only ever called
 * under loader_lock, which also serialises every call into a plugin's
 * entry, probe, open and close. Each file is loaded once per process
 * (RTLD_LOCAL, never closed) and its negotiation kept in the one global
 * list, so a second context costs a probe and an open, not a dlopen.
 */
#include <dlfcn.h>
#include <ltdl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

static const char *const detection_order[] = {
	"vulkan", "opencl", "cpu-avx512", "cpu-avx2", "cpu-neon", "cpu-generic",
};
#define N_DETECTION (sizeof(detection_order) / sizeof(detection_order[0]))

/* A table must reach past the memory slots to be usable at all. */
#define TABLE_MIN_SIZE (offsetof(gllmk_plugin_table, sync) + sizeof(gllmk_sync_fn))

/* A file that loaded: its negotiation, decided once per process. */
struct loaded {
	struct loaded *next;
	char path[PATH_MAX];
	const gllmk_plugin_table *table; /* NULL: verdict says why not */
	gllmk_verdict verdict;
	uint32_t abi_major, abi_minor;
	char reason[CORE_REASON_MAX];
};

static pthread_once_t ltdl_once = PTHREAD_ONCE_INIT;
static int ltdl_ready;
/* Recursive: a layer's open or close, called under it, may open or close a
 * context of its own (the debug layer's cpu-generic reference does). */
static pthread_mutex_t loader_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct loaded *loaded_list; /* under loader_mutex */

static void ltdl_init(void)
{
	ltdl_ready = lt_dlinit() == 0;
}

void core_loader_lock(void)
{
	pthread_mutex_lock(&loader_mutex);
}

void core_loader_unlock(void)
{
	pthread_mutex_unlock(&loader_mutex);
}

/* ------------------------------------------------------------ records */

static void set_reason(struct core_record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct core_record *rec, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rec->reason, sizeof(rec->reason), fmt, ap);
	va_end(ap);
}

static void report_add(struct core_report *r, const char *dir, const char *name, gllmk_verdict v)
{
	size_t i = r->pub.count++;
	struct core_record *rec = &r->rec[i];

	snprintf(rec->name, sizeof(rec->name), "%s", name);
	core_plugin_path(rec->path, sizeof(rec->path), dir, name);
	r->plugins[i] = (gllmk_plugin_report){
		.name = rec->name,
		.path = rec->path,
		.verdict = v,
		.reason = rec->reason,
		.device = rec->device,
	};
	if (v == GLLMK_VERDICT_NOT_REQUESTED)
		set_reason(rec, "not named by the override");
}

static int is_named(const struct core_plan *plan, const char *name)
{
	for (int i = 0; i < plan->n_named; i++)
		if (!strcmp(plan->named[i], name))
			return 1;
	return 0;
}

/* Named plugins first, in the override's order, then the rest of the
 * detection order (NOT_REQUESTED when an override is in force). */
static void report_init(struct core_report *r, const struct core_plan *plan)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->plugin_dir, sizeof(r->plugin_dir), "%s", plan->dir);
	r->pub.plugins = r->plugins;
	r->pub.plugin_dir = r->plugin_dir;
	r->pub.selected = -1;
	for (int i = 0; i < plan->n_named; i++)
		report_add(r, plan->dir, plan->named[i], GLLMK_VERDICT_NOT_TRIED);
	for (size_t i = 0; i < N_DETECTION; i++)
		if (!is_named(plan, detection_order[i]))
			report_add(r, plan->dir, detection_order[i],
				   plan->n_named ? GLLMK_VERDICT_NOT_REQUESTED : GLLMK_VERDICT_NOT_TRIED);
}

/* ------------------------------------------------------- negotiation */

/* Slots the core calls without checking; a table without them is malformed. */
static const char *missing_required_slot(const gllmk_plugin_table *t)
{
#define REQUIRED(slot)   \
	if (!t->slot)    \
		return #slot;
	REQUIRED(probe)
	REQUIRED(open)
	REQUIRED(close)
	REQUIRED(buffer_alloc)
	REQUIRED(buffer_free)
	REQUIRED(buffer_write)
	REQUIRED(buffer_read)
	REQUIRED(buffer_copy)
	REQUIRED(sync)
#undef REQUIRED
	return NULL;
}

static void check_table(struct loaded *l, const gllmk_plugin_table *t, const char *name)
{
	const char *missing;

	l->abi_major = t->abi_major;
	l->abi_minor = t->abi_minor;
	l->verdict = GLLMK_VERDICT_ABI_MISMATCH;
	if (t->abi_major != GLLMK_ABI_MAJOR) {
		snprintf(l->reason, sizeof(l->reason), "its table says ABI %u.%u; this core speaks ABI %d.%d",
			 t->abi_major, t->abi_minor, GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR);
	} else if (t->size < TABLE_MIN_SIZE) {
		snprintf(l->reason, sizeof(l->reason),
			 "its table has %u bytes, fewer than the %zu of ABI 1.0's header, lifecycle and memory slots",
			 t->size, TABLE_MIN_SIZE);
	} else if (!t->name || strcmp(t->name, name)) {
		snprintf(l->reason, sizeof(l->reason), "its table is named '%s' but the file is libgllmk-%s.so",
			 t->name ? t->name : "(null)", name);
	} else if ((missing = missing_required_slot(t))) {
		snprintf(l->reason, sizeof(l->reason), "its table leaves the required slot %s NULL", missing);
	} else {
		l->table = t;
		l->verdict = GLLMK_VERDICT_USABLE;
	}
}

/* No gllmk_plugin_entry_v1: say which major it speaks if it is a gllmk
 * plugin of another generation, else that it has no entry at all. */
static void other_major(struct loaded *l, lt_dlhandle h)
{
	char sym[32];

	for (int v = 0; v <= 9; v++) {
		if (v == GLLMK_ABI_MAJOR)
			continue;
		snprintf(sym, sizeof(sym), "gllmk_plugin_entry_v%d", v);
		if (lt_dlsym(h, sym)) {
			l->verdict = GLLMK_VERDICT_ABI_MISMATCH;
			l->abi_major = (uint32_t)v;
			snprintf(l->reason, sizeof(l->reason), "exports %s (ABI %d.x); this core speaks ABI %d.%d",
				 sym, v, GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR);
			return;
		}
	}
	l->verdict = GLLMK_VERDICT_NO_ENTRY;
	snprintf(l->reason, sizeof(l->reason), "exports no %s symbol: not a gllmk plugin", GLLMK_PLUGIN_ENTRY_NAME);
}

/* The entry must sit in the version node of its major (plugins/plugin.map),
 * the third place the major is written: checked before the entry runs. */
static int entry_in_node(struct loaded *l, const void *entry)
{
	char node[64];

	if (core_symbol_version(entry, node, sizeof(node)) < 0) {
		snprintf(l->reason, sizeof(l->reason), "cannot read the ELF version of its %s",
			 GLLMK_PLUGIN_ENTRY_NAME);
	} else if (strcmp(node, GLLMK_PLUGIN_ENTRY_NODE) != 0) {
		snprintf(l->reason, sizeof(l->reason), "exports %s %s%s, not in node %s (link it with plugins/plugin.map)",
			 GLLMK_PLUGIN_ENTRY_NAME, node[0] ? "in node " : "without a version node", node,
			 GLLMK_PLUGIN_ENTRY_NODE);
	} else {
		return 1;
	}
	l->verdict = GLLMK_VERDICT_ABI_MISMATCH;
	l->abi_major = GLLMK_ABI_MAJOR;
	return 0;
}

static void negotiate(struct loaded *l, lt_dlhandle h, const char *name)
{
	gllmk_plugin_entry_fn entry = (gllmk_plugin_entry_fn)lt_dlsym(h, GLLMK_PLUGIN_ENTRY_NAME);
	char reason[CORE_REASON_MAX] = "";
	const gllmk_plugin_table *t;

	if (!entry) {
		other_major(l, h);
		return;
	}
	if (!entry_in_node(l, (const void *)entry))
		return;
	t = entry(&core_host, reason, sizeof(reason));
	if (!t) {
		reason[sizeof(reason) - 1] = '\0';
		l->verdict = GLLMK_VERDICT_REFUSED;
		snprintf(l->reason, sizeof(l->reason), "%s", reason[0] ? reason : "its entry refused without a reason");
		return;
	}
	check_table(l, t, name);
}

/* libltdl says "file not found" for every failure (not ELF, another
 * machine, a missing dependency such as libvulkan.so.1); the dynamic
 * loader's own message says which. Asking it loads nothing that libltdl
 * could have loaded. */
static void load_failure(const char *path, struct core_record *rec)
{
	const char *lt = lt_dlerror();
	const char *err;

	if (!dlopen(path, RTLD_LAZY | RTLD_LOCAL)) {
		err = dlerror();
		set_reason(rec, "%s", err ? err : "the dynamic loader refused it");
		return;
	}
	set_reason(rec, "libltdl could not load it: %s", lt ? lt : "no reason given");
}

/* The negotiated file at path, loading it the first time. NULL when it
 * would not load (nothing kept then: the next attempt tries again). */
static struct loaded *load(const char *path, const char *name, struct core_record *rec)
{
	struct loaded *l;
	lt_dladvise advise;
	lt_dlhandle h = NULL;

	for (l = loaded_list; l; l = l->next)
		if (!strcmp(l->path, path))
			return l;
	if (!ltdl_ready) {
		set_reason(rec, "libltdl failed to initialise");
		return NULL;
	}
	if (!lt_dladvise_init(&advise) && !lt_dladvise_local(&advise) && !lt_dladvise_resident(&advise))
		h = lt_dlopenadvise(path, advise);
	lt_dladvise_destroy(&advise);
	if (!h) {
		load_failure(path, rec);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		rec->no_memory = 1;
		set_reason(rec, "out of memory after loading it");
		return NULL;
	}
	snprintf(l->path, sizeof(l->path), "%s", path);
	negotiate(l, h, name);
	l->next = loaded_list;
	loaded_list = l;
	return l;
}

/* ------------------------------------------------------------- probe */

/* Everything short of opening: installed, loads, negotiates, probes.
 * Returns the table when the plugin can serve (by_name: BY_NAME counts),
 * else NULL with the verdict and reason recorded. */
static const gllmk_plugin_table *consider(gllmk_plugin_report *pr, struct core_record *rec, int by_name)
{
	struct loaded *l;
	gllmk_probe_info info;
	gllmk_probe_result res;

	if (access(rec->path, F_OK)) {
		pr->verdict = GLLMK_VERDICT_NOT_INSTALLED;
		set_reason(rec, "not installed");
		return NULL;
	}
	l = load(rec->path, rec->name, rec);
	if (!l) {
		pr->verdict = GLLMK_VERDICT_LOAD_FAILED;
		return NULL;
	}
	pr->abi_major = l->abi_major;
	pr->abi_minor = l->abi_minor;
	if (!l->table) {
		pr->verdict = l->verdict;
		set_reason(rec, "%s", l->reason);
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	res = l->table->probe(&info);
	info.device[sizeof(info.device) - 1] = '\0';
	info.reason[sizeof(info.reason) - 1] = '\0';
	snprintf(rec->device, sizeof(rec->device), "%s", info.device);
	set_reason(rec, "%s", info.reason);
	switch (res) {
	case GLLMK_PROBE_YES:
		return l->table;
	case GLLMK_PROBE_BY_NAME:
		if (by_name)
			return l->table;
		pr->verdict = GLLMK_VERDICT_BY_NAME_ONLY;
		if (!info.reason[0])
			set_reason(rec, "runs here, but only when asked for by name");
		return NULL;
	case GLLMK_PROBE_NO:
		pr->verdict = GLLMK_VERDICT_CANNOT_RUN;
		if (!info.reason[0])
			set_reason(rec, "its probe says this machine cannot run it");
		return NULL;
	}
	pr->verdict = GLLMK_VERDICT_CANNOT_RUN;
	set_reason(rec, "its probe returned %d, not a gllmk_probe_result", (int)res);
	return NULL;
}

static int open_plugin(const struct core_plan *plan, const gllmk_plugin_table *t, gllmk_plugin_report *pr,
		       struct core_record *rec, struct core_choice *choice)
{
	gllmk_open_args args = {
		.struct_size = sizeof(args),
		.n_threads = plan->n_threads,
		.by_name = plan->n_named > 0,
		.flags = plan->flags & CORE_PLUGIN_FLAGS,
		.host = &core_host,
	};
	char reason[CORE_REASON_MAX] = "";
	void *state = NULL;
	gllmk_status st;

	st = t->open(&args, &state, reason, sizeof(reason));
	if (st != GLLMK_OK) {
		reason[sizeof(reason) - 1] = '\0';
		pr->verdict = GLLMK_VERDICT_OPEN_FAILED;
		rec->no_memory = st == GLLMK_E_NO_MEMORY;
		if (reason[0])
			set_reason(rec, "%s", reason);
		else
			set_reason(rec, "open failed: %s", gllmk_status_string(st));
		return 0;
	}
	choice->table = t;
	choice->state = state;
	choice->by_name = args.by_name;
	return 1;
}

/* Why it serves: the probe's remark, if any, after the rule that chose it. */
static void set_selected(const struct core_plan *plan, gllmk_plugin_report *pr, struct core_record *rec)
{
	char remark[CORE_REASON_MAX];

	snprintf(remark, sizeof(remark), "%s", rec->reason);
	pr->verdict = GLLMK_VERDICT_SELECTED;
	if (plan->n_named)
		set_reason(rec, "named by %s%s%s", plan->source, remark[0] ? "; " : "", remark);
	else
		set_reason(rec, "the first plugin in detection order that runs here");
}

/* ------------------------------------------------------------- the walk */

/* "name: reason; name: reason" over the requested candidates, for the
 * message of a gllmk_open that found nothing. */
static void summarise(const struct core_report *r, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < r->pub.count && used < len; i++) {
		const gllmk_plugin_report *pr = &r->plugins[i];

		if (pr->verdict == GLLMK_VERDICT_NOT_REQUESTED)
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s: %s (%s)", used ? "; " : "", pr->name,
					 gllmk_verdict_string(pr->verdict), pr->reason);
	}
}

static void walk(const struct core_plan *plan, int open, struct core_report *r, struct core_choice *choice)
{
	for (size_t i = 0; i < r->pub.count; i++) {
		gllmk_plugin_report *pr = &r->plugins[i];
		struct core_record *rec = &r->rec[i];
		const gllmk_plugin_table *t;

		if (pr->verdict == GLLMK_VERDICT_NOT_REQUESTED)
			continue;
		if (open && r->pub.selected >= 0) {
			set_reason(rec, "an earlier plugin was selected");
			continue;
		}
		t = consider(pr, rec, plan->n_named > 0);
		if (!t)
			continue;
		if (open && !open_plugin(plan, t, pr, rec, choice))
			continue;
		if (r->pub.selected < 0) {
			set_selected(plan, pr, rec);
			r->pub.selected = (int32_t)i;
			choice->table = t;
		} else {
			pr->verdict = GLLMK_VERDICT_USABLE;
			set_reason(rec, "runs here; an earlier plugin was selected");
		}
	}
}

gllmk_status core_walk(const char *fn, const struct core_plan *plan, int open, struct core_report *r,
		       struct core_choice *choice)
{
	char why[900];

	pthread_once(&ltdl_once, ltdl_init);
	report_init(r, plan);
	core_loader_lock();
	walk(plan, open, r, choice);
	core_loader_unlock();
	if (!open || r->pub.selected >= 0)
		return GLLMK_OK;
	summarise(r, why, sizeof(why));
	/* out of memory is not "no plugin": the caller may retry with less in use */
	for (size_t i = 0; i < r->pub.count; i++)
		if (r->rec[i].no_memory)
			return core_error(GLLMK_E_NO_MEMORY, "%s: out of memory opening a plugin: %s", fn, why);
	if (plan->n_named)
		return core_error(GLLMK_E_NO_PLUGIN, "%s: no plugin named by %s can run here: %s", fn, plan->source,
				  why);
	return core_error(GLLMK_E_NO_PLUGIN, "%s: no plugin in %s can run here: %s", fn, plan->dir, why);
}
