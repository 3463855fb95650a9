/* gllmk-conformance: the one suite every plugin passes.
 *
 *   gllmk-conformance --plugin NAME --plugin-dir DIR [--vectors DIR] [--seed N]
 *                     [--quick] [--filter PATTERNS] [--times]
 *
 * Opens a context on exactly the named plugin (never a fallback, never the
 * environment's override), runs every group's tests, prints
 *   coverage NAME: P/23 ops
 * and exits non-zero when a test failed or an ABI op is not covered.
 * GLLMK_TEST_QUICK=1 in the environment acts as --quick.
 *
 * --filter takes comma-separated shell globs (fnmatch) over test names: a
 * test runs if it matches a plain pattern (or there is none) and no pattern
 * written with a leading '-'. "matmul_q4_K" reproduces one case;
 * "-matmul_id_*" runs all but the expert matmuls.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "conf_extra.h"

#include "conf_groups.h"

/* Every group of the suite (test_<group>.c), from meson's one list of
 * them (tests/conformance/meson.build, conformance_groups). */
#define CONF_GROUP_EXTERN(group)                                   \
	extern const struct CMUnitTest conf_group_##group[];       \
	extern const size_t conf_group_##group##_count;
CONF_GROUPS(CONF_GROUP_EXTERN)

struct conf_group {
	const struct CMUnitTest *tests;
	const size_t *count;
};

#define GROUP(group) { conf_group_##group, &conf_group_##group##_count },

static const struct conf_group groups[] = { CONF_GROUPS(GROUP) };

#define DEFAULT_SEED 0x676c6c6d6b31ull /* "gllmk1" */

struct conf_args {
	const char *plugin;
	const char *plugin_dir;
	const char *vectors;
	const char *filter;
	int times;
};

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --plugin NAME --plugin-dir DIR [--vectors DIR] [--seed N] [--quick] [--filter PATTERNS]"
		" [--times]\n",
		argv0);
	exit(2);
}

static uint64_t parse_seed(const char *s, const char *argv0)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "%s: --seed wants an integer, got '%s'\n", argv0, s);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv, struct conf_args *a)
{
	const char *quick_env = getenv("GLLMK_TEST_QUICK");

	conf.seed = DEFAULT_SEED;
	conf.quick = quick_env && strcmp(quick_env, "") != 0 && strcmp(quick_env, "0") != 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(arg, "--quick") == 0 || strcmp(arg, "--times") == 0) {
			conf.quick |= arg[2] == 'q';
			a->times |= arg[2] == 't';
			continue;
		}
		if (!val)
			usage(argv[0]);
		if (strcmp(arg, "--plugin") == 0)
			a->plugin = val;
		else if (strcmp(arg, "--plugin-dir") == 0)
			a->plugin_dir = val;
		else if (strcmp(arg, "--vectors") == 0)
			a->vectors = val;
		else if (strcmp(arg, "--seed") == 0)
			conf.seed = parse_seed(val, argv[0]);
		else if (strcmp(arg, "--filter") == 0)
			a->filter = val;
		else
			usage(argv[0]);
		i++;
	}
	if (!a->plugin || !a->plugin_dir)
		usage(argv[0]);
}

static int is_dir(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Exactly the named plugin, or a loud failure: a suite that quietly tested
 * another backend would report that backend's results under this name. */
static gllmk_context *open_plugin(const struct conf_args *a)
{
	gllmk_options opts = {
		.struct_size = sizeof(opts),
		.flags = GLLMK_OPEN_NO_ENV,
		.plugins = a->plugin,
		.plugin_dir = a->plugin_dir,
	};
	gllmk_context *ctx = NULL;
	gllmk_status st = gllmk_open(&opts, &ctx);
	const char *got;

	if (st != GLLMK_OK) {
		fprintf(stderr, "conformance %s: cannot open the plugin from %s: %s (%s)\n", a->plugin,
			a->plugin_dir, gllmk_status_string(st), gllmk_last_error());
		exit(1);
	}
	got = gllmk_context_plugin(ctx);
	if (!got || strcmp(got, a->plugin) != 0) {
		fprintf(stderr, "conformance %s: the context runs on '%s', not on the plugin asked for\n", a->plugin,
			got ? got : "(null)");
		gllmk_close(ctx);
		exit(1);
	}
	return ctx;
}

/* --times: each test's wall time, to keep the suite within its budget. */
static struct timespec test_start;

static int time_start(void **state)
{
	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &test_start);
	return 0;
}

static int time_end(void **state)
{
	struct timespec now;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("  %.3f s\n",
	       (double)(now.tv_sec - test_start.tv_sec) + 1e-9 * (double)(now.tv_nsec - test_start.tv_nsec));
	return 0;
}

static void add_timing(struct CMUnitTest *tests, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (!tests[i].setup_func && !tests[i].teardown_func) {
			tests[i].setup_func = time_start;
			tests[i].teardown_func = time_end;
		}
	}
}

/* Whether --filter's comma-separated globs keep the test called name. */
static int filter_keeps(const char *filter, const char *name)
{
	int included = 0, any_include = 0;

	for (const char *p = filter; *p;) {
		size_t len = strcspn(p, ",");
		char pat[256];
		int exclude = *p == '-';

		snprintf(pat, sizeof(pat), "%.*s", (int)(len - (size_t)exclude), p + exclude);
		if (exclude && fnmatch(pat, name, 0) == 0)
			return 0;
		if (!exclude) {
			any_include = 1;
			included |= fnmatch(pat, name, 0) == 0;
		}
		p += len + (p[len] == ',');
	}
	return included || !any_include;
}

/* Drops the tests --filter does not keep (an expanded dtype entry's state
 * freed as conf_free_expanded_tests would). */
static void filter_tests(struct CMUnitTest *tests, size_t *count, const char *filter)
{
	size_t kept = 0;

	for (size_t i = 0; i < *count; i++) {
		if (filter_keeps(filter, tests[i].name))
			tests[kept++] = tests[i];
		else if (tests[i].test_func == conf_dtype_tests_entry)
			free(tests[i].initial_state);
	}
	*count = kept;
}

/* Every group's tests, CONF_DTYPE_TESTS entries expanded (one per dtype). */
static struct CMUnitTest *all_tests(size_t *count)
{
	size_t n = 0, at = 0;
	struct CMUnitTest *tests, *expanded;

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		n += *groups[g].count;
	tests = calloc(n, sizeof(*tests));
	if (!tests) {
		fprintf(stderr, "conformance: out of memory\n");
		exit(1);
	}
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		memcpy(tests + at, groups[g].tests, *groups[g].count * sizeof(*tests));
		at += *groups[g].count;
	}
	expanded = conf_expand_dtype_tests(tests, n, count);
	free(tests);
	return expanded;
}

int main(int argc, char **argv)
{
	struct conf_args a = { 0 };
	struct CMUnitTest *tests;
	char group_name[128];
	size_t count;
	int failed, covered;

	parse_args(argc, argv, &a);
	conf.plugin = a.plugin;
	conf.plugin_dir = a.plugin_dir;
	conf.vectors_dir = is_dir(a.vectors) ? a.vectors : NULL;
	conf.ctx = open_plugin(&a);
	printf("conformance %s: seed %llu%s, vectors %s\n", a.plugin, (unsigned long long)conf.seed,
	       conf.quick ? ", quick" : "", conf.vectors_dir ? conf.vectors_dir : "(absent)");
	fflush(stdout);

	tests = all_tests(&count);
	if (a.filter)
		filter_tests(tests, &count, a.filter);
	if (a.times)
		add_timing(tests, count);
	snprintf(group_name, sizeof(group_name), "conformance %s", a.plugin);
	failed = _cmocka_run_group_tests(group_name, tests, count, NULL, NULL);
	conf_free_expanded_tests(tests, count);

	fflush(stderr);
	covered = conf_coverage_report(stdout);
	printf("coverage %s: %d/%d ops\n", a.plugin, covered, conf_coverage_total());
	gllmk_close(conf.ctx);
	if (a.filter) /* a filtered run is for reproducing one case: coverage is partial by design */
		return failed != 0;
	return failed != 0 || covered != conf_coverage_total();
}
