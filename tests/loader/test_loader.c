/* Loader tests (issue 2, section 8).
 *
 * Every case builds its own plugin directory at run time under one mkdtemp
 * root: fake plugins (fake_plugin.c, one build per behaviour) copied under
 * the names the core looks for, beside a copy of the real cpu-generic. The
 * core is opened on that directory with GLLMK_OPEN_NO_ENV and the verdicts
 * it reports (gllmk_context_report, gllmk_survey) are checked against
 * abi/gllmk.h: each fake's verdict and reason, and the next plugin serving.
 *
 *   test_loader --fakes DIR --stage DIR --helper PATH --layer PATH
 *
 * The environment override, secure mode and layer insertion need a fresh
 * process: those cases re-execute secure_helper or this program
 * (--layer-child) and read what it reports.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gllmk.h"

/* Detection order (issue 2, section 4). */
static const char *const detection_order[] = {
	"vulkan", "opencl", "cpu-avx512", "cpu-avx2", "cpu-neon", "cpu-generic",
};
#define N_DETECTION (sizeof(detection_order) / sizeof(detection_order[0]))

struct loader_env {
	const char *fakes_dir;  /* libfake-<kind>.so */
	const char *stage_dir;  /* the real libgllmk-cpu-generic.so */
	const char *helper;     /* secure_helper */
	const char *layer;      /* libfake-layer.so */
	char libgllmk[PATH_MAX];
	char root[PATH_MAX];    /* every scenario directory lives under it */
	int n_dirs;
};
static struct loader_env env;

/* ------------------------------------------------------- entry counting */

/* The fakes call this (found with dlsym(RTLD_DEFAULT); the program links
 * with -rdynamic) each time the core calls their entry. */
#define MAX_KINDS 32
static struct {
	pthread_mutex_t lock;
	int n;
	struct {
		char kind[32];
		int calls;
	} k[MAX_KINDS];
} entries = { .lock = PTHREAD_MUTEX_INITIALIZER };

void loader_test_count_entry(const char *kind);
void loader_test_count_entry(const char *kind)
{
	int i;

	pthread_mutex_lock(&entries.lock);
	for (i = 0; i < entries.n && strcmp(entries.k[i].kind, kind) != 0; i++)
		;
	if (i == entries.n && i < MAX_KINDS) {
		snprintf(entries.k[i].kind, sizeof(entries.k[i].kind), "%s", kind);
		entries.n++;
	}
	if (i < MAX_KINDS)
		entries.k[i].calls++;
	pthread_mutex_unlock(&entries.lock);
}

static int entry_calls(const char *kind)
{
	int calls = 0;

	pthread_mutex_lock(&entries.lock);
	for (int i = 0; i < entries.n; i++)
		if (strcmp(entries.k[i].kind, kind) == 0)
			calls = entries.k[i].calls;
	pthread_mutex_unlock(&entries.lock);
	return calls;
}

/* ------------------------------------------------- scenario directories */

/* A path (or any text) of at most PATH_MAX bytes; longer fails the test. */
static void pathf(char out[PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char out[PATH_MAX], const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		fail_msg("path too long: %s...", out);
}

static void new_dir(char dir[PATH_MAX])
{
	pathf(dir, "%s/s%03d", env.root, env.n_dirs++);
	if (mkdir(dir, 0755) != 0)
		fail_msg("mkdir %s: %s", dir, strerror(errno));
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0)
		fail_msg("create %s: %s", path, strerror(errno));
	if (len && write(fd, data, len) != (ssize_t)len)
		fail_msg("write %s: %s", path, strerror(errno));
	close(fd);
}

/* A copy, not a link: the dynamic linker identifies objects by inode, so a
 * link would share one loaded fake (and its counters) between scenarios. */
static void copy_file(const char *from, const char *to, mode_t mode)
{
	char chunk[1 << 16];
	int in = open(from, O_RDONLY);
	int out;
	ssize_t n;

	if (in < 0)
		fail_msg("open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (out < 0)
		fail_msg("create %s: %s", to, strerror(errno));
	while ((n = read(in, chunk, sizeof(chunk))) > 0)
		if (write(out, chunk, (size_t)n) != n)
			fail_msg("write %s: %s", to, strerror(errno));
	close(in);
	close(out);
}

/* Installs `what` as dir/libgllmk-<slot>.so: a fake's kind, "@generic" (the
 * real cpu-generic), "@text" (not ELF) or "@empty" (zero bytes). A fake's
 * table carries the name meson.build gives it (FAKE_NAME): another slot
 * makes a name mismatch. */
static void install(const char *dir, const char *what, const char *slot)
{
	static const char text[] = "This is a text file, not a shared object.\n";
	char to[PATH_MAX], from[PATH_MAX];

	pathf(to, "%s/libgllmk-%s.so", dir, slot);
	if (strcmp(what, "@text") == 0) {
		write_file(to, text, sizeof(text) - 1, 0755);
		return;
	}
	if (strcmp(what, "@empty") == 0) {
		write_file(to, NULL, 0, 0755);
		return;
	}
	if (strcmp(what, "@generic") == 0)
		pathf(from, "%s/libgllmk-cpu-generic.so", env.stage_dir);
	else
		pathf(from, "%s/libfake-%s.so", env.fakes_dir, what);
	copy_file(from, to, 0755);
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* ---------------------------------------------------------- open, report */

static gllmk_options opts_for(const char *dir, const char *plugins, uint32_t flags)
{
	return (gllmk_options){
		.struct_size = sizeof(gllmk_options),
		.flags = flags,
		.plugins = plugins,
		.plugin_dir = dir,
	};
}

static gllmk_status open_dir(const char *dir, const char *plugins, gllmk_context **ctx)
{
	gllmk_options opts = opts_for(dir, plugins, GLLMK_OPEN_NO_ENV);

	*ctx = NULL;
	return gllmk_open(&opts, ctx);
}

static void dump_report(const gllmk_report *r)
{
	print_message("report: %zu candidates in %s, selected %d, layer %s\n", r->count,
		      r->plugin_dir ? r->plugin_dir : "(null)", (int)r->selected, r->layer ? r->layer : "(none)");
	for (size_t i = 0; i < r->count; i++) {
		const gllmk_plugin_report *p = &r->plugins[i];

		print_message("  %-12s %-14s abi %u.%u  %s | %s | %s\n", p->name, gllmk_verdict_string(p->verdict),
			      p->abi_major, p->abi_minor, p->reason ? p->reason : "(null)",
			      p->device ? p->device : "(null)", p->path ? p->path : "(null)");
	}
}

static const gllmk_plugin_report *report_find(const gllmk_report *r, const char *name)
{
	for (size_t i = 0; i < r->count; i++)
		if (r->plugins[i].name && strcmp(r->plugins[i].name, name) == 0)
			return &r->plugins[i];
	return NULL;
}

static int report_index(const gllmk_report *r, const char *name)
{
	const gllmk_plugin_report *p = report_find(r, name);

	return p ? (int)(p - r->plugins) : -1;
}

/* Every non-NULL string of `subs` occurs in text. */
static int has_all(const char *text, const char *const *subs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (subs[i] && (!text || !strstr(text, subs[i])))
			return 0;
	return 1;
}

#define HAS_ALL(text, ...) \
	has_all((text), (const char *const[]){ __VA_ARGS__ }, sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

/* The verdict of `name` in r is one of want[0..n) and its reason holds
 * every substring of reasons[0..nr). */
static void expect_verdict_in(const gllmk_report *r, const char *name, const gllmk_verdict *want, size_t n,
			      const char *const *reasons, size_t nr)
{
	const gllmk_plugin_report *p = report_find(r, name);
	int ok = 0;

	for (size_t i = 0; p && i < n; i++)
		ok |= p->verdict == want[i];
	if (ok && has_all(p->reason, reasons, nr))
		return;
	dump_report(r);
	if (!p)
		fail_msg("%s: not in the report (want %s)", name, gllmk_verdict_string(want[0]));
	if (!ok)
		fail_msg("%s: verdict %s, want %s", name, gllmk_verdict_string(p->verdict), gllmk_verdict_string(want[0]));
	fail_msg("%s: reason \"%s\" lacks an expected phrase (first: \"%s\")", name, p->reason ? p->reason : "(null)",
		 nr ? reasons[0] : "");
}

static void expect_verdict(const gllmk_report *r, const char *name, gllmk_verdict want, const char *reason)
{
	expect_verdict_in(r, name, &want, 1, &reason, 1);
}

/* gllmk_last_error() holds every phrase. */
#define EXPECT_ERROR(...)                                                                          \
	do {                                                                                      \
		const char *msg_ = gllmk_last_error();                                             \
		if (!msg_ || !msg_[0] || !HAS_ALL(msg_, __VA_ARGS__))                              \
			fail_msg("gllmk_last_error() \"%s\" lacks an expected phrase (%s)",        \
				 msg_ ? msg_ : "(null)", #__VA_ARGS__);                            \
	} while (0)

#define EXPECT_STATUS(got, want)                                                                   \
	do {                                                                                      \
		gllmk_status got_ = (got);                                                         \
		if (got_ != (want))                                                               \
			fail_msg("%s: got %d (%s), want %d (%s); last error: %s", #got, (int)got_,  \
				 gllmk_status_string(got_), (int)(want), gllmk_status_string(want), \
				 gllmk_last_error());                                             \
	} while (0)

/* --------------------------------------------------- a context on a fake */

/* A fake serves: its scale runs on its host buffers; ops it leaves NULL, or
 * whose slot lies past its table's size, answer GLLMK_E_UNSUPPORTED naming
 * the op and the plugin (never a call through the table). */
static void check_fake_context(gllmk_context *ctx, const char *name)
{
	const float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const int64_t shape[2] = { 2, 4 };
	gllmk_buffer *bx = NULL, *by = NULL;
	gllmk_tensor tx, ty;
	float y[8];

	EXPECT_STATUS(gllmk_buffer_alloc(ctx, sizeof(x), &bx), GLLMK_OK);
	EXPECT_STATUS(gllmk_buffer_alloc(ctx, sizeof(y), &by), GLLMK_OK);
	EXPECT_STATUS(gllmk_buffer_write(bx, 0, x, sizeof(x)), GLLMK_OK);
	tx = gllmk_tensor_make(bx, 0, GLLMK_F32, 2, shape);
	ty = gllmk_tensor_make(by, 0, GLLMK_F32, 2, shape);

	EXPECT_STATUS(gllmk_scale(ctx, &ty, &tx, 0.5f), GLLMK_OK);
	EXPECT_STATUS(gllmk_sync(ctx), GLLMK_OK);
	EXPECT_STATUS(gllmk_buffer_read(by, 0, y, sizeof(y)), GLLMK_OK);
	for (int i = 0; i < 8; i++)
		assert_true(y[i] == x[i] * 0.5f);

	EXPECT_STATUS(gllmk_add(ctx, &ty, &tx, &tx), GLLMK_E_UNSUPPORTED);
	EXPECT_ERROR("add", name);
	EXPECT_STATUS(gllmk_silu(ctx, &ty, &tx), GLLMK_E_UNSUPPORTED);
	EXPECT_ERROR("silu", name);
	EXPECT_STATUS(gllmk_rms_norm(ctx, &ty, &tx, NULL, 1e-5f), GLLMK_E_UNSUPPORTED);
	EXPECT_ERROR("rms_norm", name);
	EXPECT_STATUS(gllmk_argmax(ctx, &ty, &tx), GLLMK_E_DTYPE); /* validated before dispatch */

	gllmk_buffer_free(bx);
	gllmk_buffer_free(by);
}

/* ------------------------------------------------------------ scenarios */

/* One fake installed beside cpu-generic: the verdict and reason it gets in
 * the context's report and in gllmk_survey's, and who serves. */
struct scenario {
	const char *what;
	const char *fake;        /* a fake's kind, "@text" or "@empty" */
	const char *slot;        /* installed as libgllmk-<slot>.so */
	gllmk_verdict verdict;   /* after gllmk_open */
	gllmk_verdict survey;    /* after gllmk_survey (which opens nothing) */
	const char *reason[2];   /* phrases the reason holds */
	int abi_major, abi_minor; /* as reported; -1: not checked */
};

static const struct scenario scenarios[] = {
	{ "probe says no", "probe-no", "vulkan", GLLMK_VERDICT_CANNOT_RUN, GLLMK_VERDICT_CANNOT_RUN,
	  { "FAKE-PROBE-NO" }, 1, GLLMK_ABI_MINOR },
	{ "probe says by name only", "by-name", "opencl", GLLMK_VERDICT_BY_NAME_ONLY, GLLMK_VERDICT_BY_NAME_ONLY,
	  { "FAKE-BY-NAME" }, 1, GLLMK_ABI_MINOR },
	/* gllmk_survey opens nothing: it cannot know that open will fail. */
	{ "open fails", "open-fails", "cpu-avx512", GLLMK_VERDICT_OPEN_FAILED, GLLMK_VERDICT_SELECTED,
	  { "FAKE-OPEN-FAILS" }, 1, GLLMK_ABI_MINOR },
	{ "entry refuses", "entry-refuses", "cpu-avx2", GLLMK_VERDICT_REFUSED, GLLMK_VERDICT_REFUSED,
	  { "FAKE-ENTRY-REFUSES" }, -1, -1 },
	{ "entry symbol missing", "no-entry", "cpu-neon", GLLMK_VERDICT_NO_ENTRY, GLLMK_VERDICT_NO_ENTRY,
	  { "gllmk_plugin_entry_v1" }, 0, 0 },
	/* abi/gllmk.h leaves open whether this is NO_ENTRY ("no
	 * gllmk_plugin_entry_v<major> symbol") or ABI_MISMATCH ("another
	 * major"); issue 2 asks for "another major ... naming both versions". */
	{ "another major: only gllmk_plugin_entry_v2", "major2-symbol", "vulkan", GLLMK_VERDICT_ABI_MISMATCH,
	  GLLMK_VERDICT_ABI_MISMATCH, { "gllmk_plugin_entry_v2", "1" }, 2, -1 },
	{ "another major: _v1 entry, table says 2", "major2-table", "opencl", GLLMK_VERDICT_ABI_MISMATCH,
	  GLLMK_VERDICT_ABI_MISMATCH, { "2", "1" }, 2, GLLMK_ABI_MINOR },
	/* The major's third place, the entry's ELF version node (SPEC/ABI.md §1),
	 * is checked before the entry runs. */
	{ "entry without a version node", "unversioned", "vulkan", GLLMK_VERDICT_ABI_MISMATCH,
	  GLLMK_VERDICT_ABI_MISMATCH, { "without a version node", "GLLMK_PLUGIN_1" }, 1, -1 },
	{ "entry in another major's node", "node2", "vulkan", GLLMK_VERDICT_ABI_MISMATCH,
	  GLLMK_VERDICT_ABI_MISMATCH, { "GLLMK_PLUGIN_2", "GLLMK_PLUGIN_1" }, 1, -1 },
	{ "not an ELF file", "@text", "cpu-avx512", GLLMK_VERDICT_LOAD_FAILED, GLLMK_VERDICT_LOAD_FAILED,
	  { NULL }, 0, 0 },
	{ "empty file", "@empty", "cpu-avx2", GLLMK_VERDICT_LOAD_FAILED, GLLMK_VERDICT_LOAD_FAILED, { NULL }, 0, 0 },
	{ "table name differs from the file name", "good", "opencl", GLLMK_VERDICT_ABI_MISMATCH,
	  GLLMK_VERDICT_ABI_MISMATCH, { "vulkan", "opencl" }, -1, -1 },
	{ "newer minor (longer table)", "newer-minor", "vulkan", GLLMK_VERDICT_SELECTED, GLLMK_VERDICT_SELECTED,
	  { NULL }, 1, GLLMK_ABI_MINOR + 1 },
	{ "older minor (table cut after scale)", "older-minor", "vulkan", GLLMK_VERDICT_SELECTED,
	  GLLMK_VERDICT_SELECTED, { NULL }, 1, GLLMK_ABI_MINOR },
	{ "a fake that runs", "good", "vulkan", GLLMK_VERDICT_SELECTED, GLLMK_VERDICT_SELECTED, { NULL }, 1,
	  GLLMK_ABI_MINOR },
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static void expect_abi(const gllmk_report *r, const struct scenario *sc)
{
	const gllmk_plugin_report *p = report_find(r, sc->slot);

	if (sc->abi_major >= 0 && p->abi_major != (uint32_t)sc->abi_major) {
		dump_report(r);
		fail_msg("%s: abi_major %u, want %d", sc->slot, p->abi_major, sc->abi_major);
	}
	if (sc->abi_minor >= 0 && p->abi_minor != (uint32_t)sc->abi_minor) {
		dump_report(r);
		fail_msg("%s: abi_minor %u, want %d", sc->slot, p->abi_minor, sc->abi_minor);
	}
}

/* The slots where nothing was installed: not installed before the one
 * selected; after it, either "not installed" or "not tried" (the core need
 * not look). A survey looks at every one. */
static void expect_empty_slots(const gllmk_report *r, const char *slot, int survey)
{
	static const gllmk_verdict after[] = { GLLMK_VERDICT_NOT_INSTALLED, GLLMK_VERDICT_NOT_TRIED };

	for (size_t i = 0; i < N_DETECTION; i++) {
		const char *name = detection_order[i];

		if (strcmp(name, slot) == 0 || strcmp(name, "cpu-generic") == 0)
			continue;
		if (survey || (int)i < r->selected)
			expect_verdict(r, name, GLLMK_VERDICT_NOT_INSTALLED, NULL);
		else
			expect_verdict_in(r, name, after, 2, NULL, 0);
	}
}

static void expect_report_shape(const gllmk_report *r, const char *dir)
{
	if (r->count != N_DETECTION) {
		dump_report(r);
		fail_msg("report lists %zu candidates, want the %zu of the detection order", r->count, N_DETECTION);
	}
	for (size_t i = 0; i < N_DETECTION; i++)
		if (!r->plugins[i].name || strcmp(r->plugins[i].name, detection_order[i]) != 0) {
			dump_report(r);
			fail_msg("candidate %zu is %s, want %s", i, r->plugins[i].name, detection_order[i]);
		}
	assert_non_null(r->plugin_dir);
	assert_non_null(strstr(r->plugin_dir, dir));
}

static void test_scenario(void **state)
{
	const struct scenario *sc = *state;
	int serves = sc->verdict == GLLMK_VERDICT_SELECTED;
	int survey_serves = sc->survey == GLLMK_VERDICT_SELECTED;
	char dir[PATH_MAX], path[PATH_MAX];
	gllmk_context *ctx;
	const gllmk_report *r;
	gllmk_report *sr = NULL;
	gllmk_options opts;

	new_dir(dir);
	install(dir, sc->fake, sc->slot);
	install(dir, "@generic", "cpu-generic");

	EXPECT_STATUS(open_dir(dir, NULL, &ctx), GLLMK_OK);
	r = gllmk_context_report(ctx);
	assert_non_null(r);
	expect_report_shape(r, dir);
	expect_verdict_in(r, sc->slot, &sc->verdict, 1, sc->reason, 2);
	expect_abi(r, sc);
	pathf(path, "libgllmk-%s.so", sc->slot);
	assert_non_null(report_find(r, sc->slot)->path);
	assert_non_null(strstr(report_find(r, sc->slot)->path, path));
	expect_verdict(r, "cpu-generic", serves ? GLLMK_VERDICT_NOT_TRIED : GLLMK_VERDICT_SELECTED, NULL);
	assert_int_equal(r->selected, report_index(r, serves ? sc->slot : "cpu-generic"));
	assert_string_equal(gllmk_context_plugin(ctx), serves ? sc->slot : "cpu-generic");
	assert_null(r->layer);
	expect_empty_slots(r, sc->slot, 0);
	if (serves)
		check_fake_context(ctx, sc->slot);
	gllmk_close(ctx);

	opts = opts_for(dir, NULL, GLLMK_OPEN_NO_ENV);
	EXPECT_STATUS(gllmk_survey(&opts, &sr), GLLMK_OK);
	expect_report_shape(sr, dir);
	if (sc->survey == sc->verdict)
		expect_verdict_in(sr, sc->slot, &sc->survey, 1, sc->reason, 2);
	else
		expect_verdict(sr, sc->slot, sc->survey, NULL);
	expect_abi(sr, sc);
	expect_verdict(sr, "cpu-generic", survey_serves ? GLLMK_VERDICT_USABLE : GLLMK_VERDICT_SELECTED, NULL);
	assert_int_equal(sr->selected, report_index(sr, survey_serves ? sc->slot : "cpu-generic"));
	expect_empty_slots(sr, sc->slot, 1);
	gllmk_report_free(sr);
}

/* ------------------------------------------------------- nothing to run */

static void test_empty_dir(void **state)
{
	char dir[PATH_MAX];
	gllmk_context *ctx;
	gllmk_report *sr = NULL;
	gllmk_options opts;
	gllmk_status st;

	(void)state;
	new_dir(dir);
	EXPECT_STATUS(open_dir(dir, NULL, &ctx), GLLMK_E_NO_PLUGIN);
	assert_null(ctx);
	EXPECT_ERROR("gllmk_open");

	/* Nothing to select is what a survey reports, not an error of its own;
	 * a NO_PLUGIN status is accepted too (abi/gllmk.h does not say). */
	opts = opts_for(dir, NULL, GLLMK_OPEN_NO_ENV);
	st = gllmk_survey(&opts, &sr);
	if (st == GLLMK_OK) {
		assert_int_equal(sr->selected, -1);
		for (size_t i = 0; i < N_DETECTION; i++)
			expect_verdict(sr, detection_order[i], GLLMK_VERDICT_NOT_INSTALLED, NULL);
		gllmk_report_free(sr);
	} else {
		EXPECT_STATUS(st, GLLMK_E_NO_PLUGIN);
	}
}

/* Nothing can run: the error says why each candidate failed. */
static void test_nothing_runs(void **state)
{
	char dir[PATH_MAX];
	gllmk_context *ctx;

	(void)state;
	new_dir(dir);
	install(dir, "probe-no", "vulkan");
	install(dir, "entry-refuses", "cpu-avx2");
	EXPECT_STATUS(open_dir(dir, NULL, &ctx), GLLMK_E_NO_PLUGIN);
	assert_null(ctx);
	EXPECT_ERROR("FAKE-PROBE-NO", "FAKE-ENTRY-REFUSES");
}

/* ------------------------------------------------------------ overrides */

/* options->plugins on one directory: vulkan cannot run, opencl runs by name
 * only, cpu-avx512 fails to open, cpu-avx2 is not installed. */
struct override_case {
	const char *plugins;
	gllmk_status want;
	const char *selected;  /* on GLLMK_OK */
	const char *error[2];  /* phrases of gllmk_last_error() otherwise */
};

static const struct override_case override_cases[] = {
	{ "opencl", GLLMK_OK, "opencl", { NULL } },
	{ "cpu-generic", GLLMK_OK, "cpu-generic", { NULL } },
	{ "vulkan", GLLMK_E_NO_PLUGIN, NULL, { "vulkan", "FAKE-PROBE-NO" } },
	{ "cpu-avx512", GLLMK_E_NO_PLUGIN, NULL, { "cpu-avx512", "FAKE-OPEN-FAILS" } },
	{ "cpu-avx2", GLLMK_E_NO_PLUGIN, NULL, { "cpu-avx2" } },
	{ "no-such-plugin", GLLMK_E_NO_PLUGIN, NULL, { "no-such-plugin" } },
	/* The list is tried in its order ("Plugin names to try in this order");
	 * what never happens is a fall back to automatic detection. */
	{ "vulkan,cpu-generic", GLLMK_OK, "cpu-generic", { NULL } },
	{ "opencl,cpu-generic", GLLMK_OK, "opencl", { NULL } },
	/* Every named plugin must be installed, checked before any is tried. */
	{ "vulkan,cpu-avx2", GLLMK_E_NO_PLUGIN, NULL, { "cpu-avx2", "not installed" } },
	/* Names only, never paths. */
	{ "../x", GLLMK_E_INVALID, NULL, { "plugins", "../x" } },
	{ "a/b", GLLMK_E_INVALID, NULL, { "plugins", "a/b" } },
	{ "/usr/lib/libgllmk-cpu-generic.so", GLLMK_E_INVALID, NULL, { "plugins" } },
	{ "..", GLLMK_E_INVALID, NULL, { "plugins" } },
	{ "cpu-generic,../cpu-generic", GLLMK_E_INVALID, NULL, { "plugins" } },
};

static void install_override_dir(char dir[PATH_MAX])
{
	new_dir(dir);
	install(dir, "probe-no", "vulkan");
	install(dir, "by-name", "opencl");
	install(dir, "open-fails", "cpu-avx512");
	install(dir, "@generic", "cpu-generic");
}

static void test_override(void **state)
{
	char dir[PATH_MAX];

	(void)state;
	install_override_dir(dir);
	for (size_t i = 0; i < sizeof(override_cases) / sizeof(override_cases[0]); i++) {
		const struct override_case *oc = &override_cases[i];
		gllmk_context *ctx;
		gllmk_status st = open_dir(dir, oc->plugins, &ctx);

		print_message("plugins=\"%s\": %s%s%s\n", oc->plugins, gllmk_status_string(st),
			      st ? ": " : "", st ? gllmk_last_error() : "");
		EXPECT_STATUS(st, oc->want);
		if (st != GLLMK_OK) {
			assert_null(ctx);
			EXPECT_ERROR("gllmk_open");
			if (!HAS_ALL(gllmk_last_error(), oc->error[0], oc->error[1]))
				fail_msg("plugins=\"%s\": \"%s\" lacks \"%s\" or \"%s\"", oc->plugins,
					 gllmk_last_error(), oc->error[0], oc->error[1] ? oc->error[1] : "");
			continue;
		}
		assert_string_equal(gllmk_context_plugin(ctx), oc->selected);
		/* Candidates the override did not name are not requested. */
		for (size_t j = 0; j < N_DETECTION; j++)
			if (!strstr(oc->plugins, detection_order[j]) &&
			    report_find(gllmk_context_report(ctx), detection_order[j]))
				expect_verdict(gllmk_context_report(ctx), detection_order[j],
					       GLLMK_VERDICT_NOT_REQUESTED, NULL);
		if (strcmp(oc->selected, "opencl") == 0)
			check_fake_context(ctx, "opencl");
		gllmk_close(ctx);
	}
}

/* ---------------------------------------- environment and secure mode */

/* Runs `program` with GLLMK_PLUGIN=value (unset if NULL) and the extra
 * environment entry `extra`, returns its exit status, its stdout in out. */
static int run_child(char *const argv[], const char *gllmk_plugin, const char *extra, char *out, size_t out_len)
{
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds) != 0)
		fail_msg("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		if (gllmk_plugin)
			setenv("GLLMK_PLUGIN", gllmk_plugin, 1);
		else
			unsetenv("GLLMK_PLUGIN");
		if (extra)
			putenv((char *)extra);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	while (len + 1 < out_len && (n = read(fds[0], out + len, out_len - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid)
		fail_msg("waitpid: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_helper(const char *helper, const char *dir, uint32_t flags, const char *gllmk_plugin, char *out,
		      size_t out_len)
{
	char flags_text[16];
	char *argv[] = { (char *)helper, env.libgllmk, (char *)dir, flags_text, NULL };

	snprintf(flags_text, sizeof(flags_text), "%u", flags);
	return run_child(argv, gllmk_plugin, NULL, out, out_len);
}

/* GLLMK_PLUGIN as gllmk_open reads it in a fresh process. */
struct env_case {
	const char *value;
	uint32_t flags;
	const char *expect[2]; /* phrases of the helper's line */
};

static const struct env_case env_cases[] = {
	{ NULL, 0, { "plugin=cpu-generic" } },
	{ "opencl", 0, { "plugin=opencl" } },
	{ "opencl", GLLMK_OPEN_NO_ENV, { "plugin=cpu-generic" } },
	{ "vulkan", 0, { "status=13", "FAKE-PROBE-NO" } },
	{ "cpu-avx2", 0, { "status=13", "cpu-avx2" } },
	{ "../x", 0, { "status=2", "GLLMK_PLUGIN" } },
	{ "a/b", 0, { "status=2", "GLLMK_PLUGIN" } },
	{ "vulkan", GLLMK_OPEN_NO_ENV, { "plugin=cpu-generic" } },
};

static void test_env_override(void **state)
{
	char dir[PATH_MAX], out[4096];

	(void)state;
	install_override_dir(dir);
	for (size_t i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
		const struct env_case *ec = &env_cases[i];
		int rc = run_helper(env.helper, dir, ec->flags, ec->value, out, sizeof(out));

		print_message("GLLMK_PLUGIN=%s flags=%u: %s", ec->value ? ec->value : "(unset)", ec->flags, out);
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "secure=0"));
		if (!HAS_ALL(out, ec->expect[0], ec->expect[1]))
			fail_msg("GLLMK_PLUGIN=%s: \"%s\" lacks \"%s\" or \"%s\"", ec->value, out, ec->expect[0],
				 ec->expect[1] ? ec->expect[1] : "");
	}
}

/* A setgid copy of the helper runs with AT_SECURE, where secure_getenv
 * returns NULL: GLLMK_PLUGIN must be ignored and detection automatic. */
static void test_secure_mode(void **state)
{
	char dir[PATH_MAX], helper[PATH_MAX], out[4096];
	const struct group *gr;
	gid_t gid;

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP secure mode: not root, so no setgid helper to another group can be made\n");
		skip();
	}
	gr = getgrnam("nogroup");
	gid = gr ? gr->gr_gid : 65534;
	if (gid == getgid()) {
		print_message("SKIP secure mode: nogroup is this process's own group\n");
		skip();
	}
	install_override_dir(dir);
	pathf(helper, "%s/secure_helper", dir);
	copy_file(env.helper, helper, 0755);
	if (chown(helper, 0, gid) != 0 || chmod(helper, 02755) != 0)
		fail_msg("chgrp/chmod g+s %s: %s", helper, strerror(errno));

	assert_int_equal(run_helper(helper, dir, 0, "opencl", out, sizeof(out)), 0);
	print_message("setgid, GLLMK_PLUGIN=opencl: %s", out);
	if (strstr(out, "secure=0")) {
		print_message("SKIP secure mode: the setgid bit gave no AT_SECURE (nosuid mount?)\n");
		skip();
	}
	assert_non_null(strstr(out, "secure=1"));
	assert_non_null(strstr(out, "plugin=cpu-generic"));

	/* Ignored entirely: a value that would be an error is no error. */
	assert_int_equal(run_helper(helper, dir, 0, "../x", out, sizeof(out)), 0);
	print_message("setgid, GLLMK_PLUGIN=../x: %s", out);
	assert_non_null(strstr(out, "plugin=cpu-generic"));
	assert_int_equal(run_helper(helper, dir, 0, "vulkan", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "plugin=cpu-generic"));
}

/* --------------------------------------------------------- thread safety */

#define N_THREADS 8

struct opener {
	pthread_t thread;
	pthread_barrier_t *start;
	const char *dir;
	gllmk_status st;
	gllmk_context *ctx;
};

static void *opener_run(void *arg)
{
	struct opener *o = arg;

	pthread_barrier_wait(o->start);
	o->st = open_dir(o->dir, NULL, &o->ctx);
	return NULL;
}

/* First use from several threads at once: all succeed, each plugin's entry
 * runs once. Runs first so that it is also the core's first use. */
static void test_threads(void **state)
{
	struct opener o[N_THREADS];
	pthread_barrier_t start;
	char dir[PATH_MAX];
	gllmk_report *sr = NULL;
	gllmk_options opts;
	gllmk_context *ctx;
	int by_name0 = entry_calls("by-name"), probe_no0 = entry_calls("probe-no");

	(void)state;
	new_dir(dir);
	install(dir, "probe-no", "vulkan");
	install(dir, "by-name", "opencl");
	install(dir, "@generic", "cpu-generic");

	pthread_barrier_init(&start, NULL, N_THREADS);
	for (int i = 0; i < N_THREADS; i++) {
		o[i] = (struct opener){ .start = &start, .dir = dir };
		assert_int_equal(pthread_create(&o[i].thread, NULL, opener_run, &o[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(o[i].thread, NULL);
	pthread_barrier_destroy(&start);

	for (int i = 0; i < N_THREADS; i++) {
		EXPECT_STATUS(o[i].st, GLLMK_OK);
		assert_string_equal(gllmk_context_plugin(o[i].ctx), "cpu-generic");
		expect_verdict(gllmk_context_report(o[i].ctx), "vulkan", GLLMK_VERDICT_CANNOT_RUN, "FAKE-PROBE-NO");
		expect_verdict(gllmk_context_report(o[i].ctx), "opencl", GLLMK_VERDICT_BY_NAME_ONLY, "FAKE-BY-NAME");
	}
	for (int i = 0; i < N_THREADS; i++)
		gllmk_close(o[i].ctx);

	/* Loaded once and kept: later opens and surveys load nothing again. */
	EXPECT_STATUS(open_dir(dir, NULL, &ctx), GLLMK_OK);
	gllmk_close(ctx);
	opts = opts_for(dir, NULL, GLLMK_OPEN_NO_ENV);
	EXPECT_STATUS(gllmk_survey(&opts, &sr), GLLMK_OK);
	gllmk_report_free(sr);
	assert_int_equal(entry_calls("by-name") - by_name0, 1);
	assert_int_equal(entry_calls("probe-no") - probe_no0, 1);
}

/* ------------------------------------------------------- symbol leakage */

/* Two fakes export gllmk_fake_extra (and a function) with different values.
 * Loaded RTLD_LOCAL each sees its own (the probe reports value*100 + fn());
 * nothing of theirs reaches the global scope. */
static void test_extra_symbols(void **state)
{
	char dir[PATH_MAX];
	gllmk_context *ctx;
	const gllmk_report *r;

	(void)state;
	new_dir(dir);
	install(dir, "extra-a", "vulkan");
	install(dir, "extra-b", "opencl");
	install(dir, "@generic", "cpu-generic");

	EXPECT_STATUS(open_dir(dir, NULL, &ctx), GLLMK_OK);
	r = gllmk_context_report(ctx);
	expect_verdict(r, "vulkan", GLLMK_VERDICT_BY_NAME_ONLY, "FAKE-BY-NAME");
	expect_verdict(r, "opencl", GLLMK_VERDICT_BY_NAME_ONLY, "FAKE-BY-NAME");
	if (!strstr(report_find(r, "vulkan")->device, "extra=101") ||
	    !strstr(report_find(r, "opencl")->device, "extra=202")) {
		dump_report(r);
		fail_msg("a plugin saw another plugin's symbols: loaded RTLD_GLOBAL?");
	}
	assert_string_equal(gllmk_context_plugin(ctx), "cpu-generic");
	gllmk_close(ctx);

	assert_null(dlsym(RTLD_DEFAULT, "gllmk_fake_extra"));
	assert_null(dlsym(RTLD_DEFAULT, "gllmk_fake_extra_fn"));
	assert_null(dlsym(RTLD_DEFAULT, "gllmk_plugin_entry_v1"));

	/* By name, each one serves. */
	EXPECT_STATUS(open_dir(dir, "opencl", &ctx), GLLMK_OK);
	assert_string_equal(gllmk_context_plugin(ctx), "opencl");
	check_fake_context(ctx, "opencl");
	gllmk_close(ctx);
}

/* ---------------------------------------------------------------- layers */

/* In a child started with LD_PRELOAD=libfake-layer.so: scale goes through
 * the layer (extra factor, counted), add falls through to cpu-generic, and
 * GLLMK_OPEN_NO_LAYERS leaves the layer out. Returns the exit status. */
#define CHILD_CHECK(cond)                                                                         \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "layer child: %s:%d: %s (last error: %s)\n", __FILE__,   \
				__LINE__, #cond, gllmk_last_error());                            \
			return 1;                                                                 \
		}                                                                                 \
	} while (0)

static int layer_child_pass(const char *dir, uint32_t flags, float factor, const int *calls, int want_calls)
{
	const float x[8] = { 1, -2, 3, -4, 5, -6, 7, -8 };
	const int64_t shape[2] = { 2, 4 };
	gllmk_options opts = opts_for(dir, NULL, GLLMK_OPEN_NO_ENV | flags);
	gllmk_context *ctx = NULL;
	gllmk_buffer *bx = NULL, *by = NULL;
	gllmk_tensor tx, ty;
	const gllmk_report *r;
	float y[8];

	CHILD_CHECK(gllmk_open(&opts, &ctx) == GLLMK_OK);
	r = gllmk_context_report(ctx);
	CHILD_CHECK(strcmp(gllmk_context_plugin(ctx), "cpu-generic") == 0);
	CHILD_CHECK(factor == 1.0f ? r->layer == NULL : (r->layer && strstr(r->layer, "fake-layer")));
	CHILD_CHECK(gllmk_buffer_alloc(ctx, sizeof(x), &bx) == GLLMK_OK);
	CHILD_CHECK(gllmk_buffer_alloc(ctx, sizeof(y), &by) == GLLMK_OK);
	CHILD_CHECK(gllmk_buffer_write(bx, 0, x, sizeof(x)) == GLLMK_OK);
	tx = gllmk_tensor_make(bx, 0, GLLMK_F32, 2, shape);
	ty = gllmk_tensor_make(by, 0, GLLMK_F32, 2, shape);

	CHILD_CHECK(gllmk_scale(ctx, &ty, &tx, 2.0f) == GLLMK_OK);
	CHILD_CHECK(gllmk_buffer_read(by, 0, y, sizeof(y)) == GLLMK_OK);
	for (int i = 0; i < 8; i++)
		CHILD_CHECK(y[i] == x[i] * 2.0f * factor);
	CHILD_CHECK(!calls || *calls == want_calls);

	CHILD_CHECK(gllmk_add(ctx, &ty, &tx, &tx) == GLLMK_OK);
	CHILD_CHECK(gllmk_buffer_read(by, 0, y, sizeof(y)) == GLLMK_OK);
	for (int i = 0; i < 8; i++)
		CHILD_CHECK(y[i] == x[i] + x[i]);

	gllmk_buffer_free(bx);
	gllmk_buffer_free(by);
	gllmk_close(ctx);
	return 0;
}

/* gllmk_survey names the layer gllmk_open would insert. */
static int layer_child_survey(const char *dir, uint32_t flags, int want_layer)
{
	gllmk_options opts = opts_for(dir, NULL, GLLMK_OPEN_NO_ENV | flags);
	gllmk_report *r = NULL;
	int ok;

	CHILD_CHECK(gllmk_survey(&opts, &r) == GLLMK_OK);
	ok = want_layer ? r->layer && strstr(r->layer, "fake-layer") : !r->layer;
	gllmk_report_free(r);
	CHILD_CHECK(ok);
	return 0;
}

static int layer_child(const char *dir, int preloaded)
{
	const float *factor = dlsym(RTLD_DEFAULT, "fake_layer_factor");
	const int *calls = dlsym(RTLD_DEFAULT, "fake_layer_scale_calls");

	if (!preloaded) {
		CHILD_CHECK(!factor && !calls);
		if (layer_child_survey(dir, 0, 0))
			return 1;
		return layer_child_pass(dir, 0, 1.0f, NULL, 0);
	}
	CHILD_CHECK(factor && calls);
	if (layer_child_survey(dir, 0, 1) || layer_child_survey(dir, GLLMK_OPEN_NO_LAYERS, 0))
		return 1;
	if (layer_child_pass(dir, 0, *factor, calls, 1))
		return 1;
	return layer_child_pass(dir, GLLMK_OPEN_NO_LAYERS, 1.0f, calls, 1);
}

static void test_layer(void **state)
{
	char dir[PATH_MAX], self[PATH_MAX], preload[PATH_MAX], out[256];
	char *yes[] = { self, "--layer-child", dir, "1", NULL };
	char *no[] = { self, "--layer-child", dir, "0", NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = '\0';
	new_dir(dir);
	install(dir, "@generic", "cpu-generic");

	assert_int_equal(run_child(no, NULL, NULL, out, sizeof(out)), 0);
	/* An ASan build must not insist on its runtime coming first. */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 0);
	pathf(preload, "LD_PRELOAD=%s", env.layer);
	assert_int_equal(run_child(yes, NULL, preload, out, sizeof(out)), 0);
}

/* ----------------------------------------------------------------- main */

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	Dl_info info;

	(void)state;
	snprintf(env.root, sizeof(env.root), "%s/gllmk-loader-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(env.root)) {
		fprintf(stderr, "mkdtemp %s: %s\n", env.root, strerror(errno));
		return -1;
	}
	if (!dladdr((void *)gllmk_open, &info) || !info.dli_fname || !realpath(info.dli_fname, env.libgllmk)) {
		fprintf(stderr, "cannot find the loaded libgllmk\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (!getenv("GLLMK_TEST_KEEP"))
		nftw(env.root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	else
		fprintf(stderr, "scenario directories kept in %s\n", env.root);
	return 0;
}

/* Absolute, so that children and copies find them from anywhere. */
static const char *absolute(const char *path)
{
	char *abs = realpath(path, NULL);

	if (!abs)
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
	return abs;
}

static int parse_args(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--fakes") == 0)
			env.fakes_dir = absolute(argv[i + 1]);
		else if (strcmp(argv[i], "--stage") == 0)
			env.stage_dir = absolute(argv[i + 1]);
		else if (strcmp(argv[i], "--helper") == 0)
			env.helper = absolute(argv[i + 1]);
		else if (strcmp(argv[i], "--layer") == 0)
			env.layer = absolute(argv[i + 1]);
		else
			return -1;
	}
	return env.fakes_dir && env.stage_dir && env.helper && env.layer ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_threads), /* first: the core's first use */
		cmocka_unit_test(test_empty_dir),
		cmocka_unit_test(test_nothing_runs),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_env_override),
		cmocka_unit_test(test_secure_mode),
		cmocka_unit_test(test_extra_symbols),
		cmocka_unit_test(test_layer),
	};
	struct CMUnitTest tests[sizeof(fixed) / sizeof(fixed[0]) + N_SCENARIOS];
	size_t n = 0;

	if (argc == 4 && strcmp(argv[1], "--layer-child") == 0)
		return layer_child(argv[2], atoi(argv[3]));
	if (parse_args(argc, argv) != 0) {
		fprintf(stderr, "usage: %s --fakes DIR --stage DIR --helper PATH --layer PATH\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		tests[n++] = fixed[i];
	for (size_t i = 0; i < N_SCENARIOS; i++)
		tests[n++] = (struct CMUnitTest){
			.name = scenarios[i].what,
			.test_func = test_scenario,
			.initial_state = (void *)&scenarios[i],
		};
	return _cmocka_run_group_tests("loader", tests, n, group_setup, group_teardown);
}
