/* gllmk-probe — the hardware report a user attaches to a bug, or reads
 * before choosing which plugin packages to install.
 *
 *   gllmk-probe [--json] [--plugin NAME] [--bench] [--demo] [--plugin-dir DIR]
 *
 * It gathers everything first (struct probe_report: CPU, Vulkan, OpenCL,
 * plugins, then what the flags ask for) and prints it once, as text or JSON
 * (SPEC/PROBE.md). Exit status: 0 fine; 1 no plugin is usable (the reason is
 * printed); 2 bad usage; 3 a self-test, bench or demo failed.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_report.h"

enum {
	EXIT_NO_PLUGIN = 1,
	EXIT_USAGE = 2,
	EXIT_CHECK_FAILED = 3,
};

struct args {
	bool json, bench, demo, brief;
	const char *plugin;          /* --plugin NAME: self-test, and what --bench/--demo run on */
	const char *vulkan_loader;
	const char *opencl_loader;
	struct probe_options opt;
};

double probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void probe_strlcpy(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gllmk-probe [options]\n"
		"Reports the CPU, Vulkan and OpenCL devices, and every gllmk plugin: found or not,\n"
		"loaded or rejected and why, which one gllmk_open(NULL) selects, what each can do.\n"
		"\n"
		"  --json               the report as JSON (schema: SPEC/probe.schema.json)\n"
		"  --plugin NAME        open plugin NAME by name and run a one-second self-test;\n"
		"                       --bench and --demo then run on NAME only\n"
		"  --bench              a quick GFLOP/s (f32 matmul) and GB/s (rms_norm) figure\n"
		"                       for every usable plugin\n"
		"  --demo               one transformer decode step on the selected plugin,\n"
		"                       with checksums and times of each op\n"
		"  --brief              only the selected plugin and what the flags above ask for\n"
		"                       (no CPU, Vulkan, OpenCL or per-plugin report)\n"
		"  --plugin-dir DIR     look for plugins in DIR (default: next to libgllmk.so.1)\n"
		"  --no-capabilities    do not open each usable plugin to list what it can do\n"
		"  --vulkan-loader LIB  the Vulkan loader to open (default libvulkan.so.1; none: skip)\n"
		"  --opencl-loader LIB  the OpenCL ICD loader to open (default libOpenCL.so.1; none: skip)\n"
		"  --help, --version\n"
		"\n"
		"Exit status: 0 ok; 1 no plugin usable; 2 bad usage; 3 a self-test, bench or demo failed.\n");
}

static int parse_args(int argc, char **argv, struct args *a)
{
	enum { O_PLUGIN_DIR = 256, O_NO_CAPS, O_VK, O_CL, O_VERSION, O_BRIEF };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "plugin", required_argument, NULL, 'p' },
		{ "bench", no_argument, NULL, 'b' },
		{ "demo", no_argument, NULL, 'd' },
		{ "brief", no_argument, NULL, O_BRIEF },
		{ "plugin-dir", required_argument, NULL, O_PLUGIN_DIR },
		{ "no-capabilities", no_argument, NULL, O_NO_CAPS },
		{ "vulkan-loader", required_argument, NULL, O_VK },
		{ "opencl-loader", required_argument, NULL, O_CL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ 0 },
	};
	int c;

	*a = (struct args){
		.vulkan_loader = "libvulkan.so.1",
		.opencl_loader = "libOpenCL.so.1",
		.opt = { .capabilities = true },
	};
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': a->json = true; break;
		case 'p': a->plugin = optarg; break;
		case 'b': a->bench = true; break;
		case 'd': a->demo = true; break;
		case O_BRIEF: a->brief = true; break;
		case O_PLUGIN_DIR: a->opt.plugin_dir = optarg; break;
		case O_NO_CAPS: a->opt.capabilities = false; break;
		case O_VK: a->vulkan_loader = optarg; break;
		case O_CL: a->opencl_loader = optarg; break;
		case 'h': usage(stdout); exit(0);
		case O_VERSION: printf("gllmk-probe %s (ABI %d.%d)\n", GLLMK_VERSION, GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR); exit(0);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (a->brief) { /* nothing of the full report is gathered */
		a->opt.capabilities = false;
		a->vulkan_loader = "none";
		a->opencl_loader = "none";
	}
	if (optind < argc) {
		fprintf(stderr, "gllmk-probe: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

/* The plugins --bench measures: the named one, or every usable one. */
static void run_bench(struct probe_report *r, const struct args *a)
{
	const gllmk_report *s = r->plugins.survey;
	size_t n = s ? s->count : 0;

	r->bench = calloc(n + 1, sizeof(*r->bench));
	if (!r->bench)
		return;
	if (a->plugin) {
		probe_bench(&r->bench[r->n_bench++], &a->opt, a->plugin);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (probe_verdict_usable(s->plugins[i].verdict))
			probe_bench(&r->bench[r->n_bench++], &a->opt, s->plugins[i].name);
}

static void fail(struct probe_report *r, int code, const char *what, const char *why)
{
	if (r->exit_code)
		return; /* the first reason is the one to read */
	r->exit_code = code;
	snprintf(r->message, sizeof(r->message), "%s%s%s", what, why && why[0] ? ": " : "", why ? why : "");
}

/* Sets the exit status from what was found, first reason first. */
static void judge(struct probe_report *r)
{
	if (!r->plugins.selected[0])
		fail(r, EXIT_NO_PLUGIN, "no plugin is usable", r->plugins.open_error);
	if (r->selftest && r->selftest->error[0])
		fail(r, EXIT_CHECK_FAILED, "the self-test could not open the plugin", r->selftest->error);
	else if (r->selftest && !r->selftest->ok)
		fail(r, EXIT_CHECK_FAILED, "the self-test failed", r->selftest->plugin);
	for (int i = 0; i < r->n_bench; i++)
		if (r->bench[i].status != GLLMK_OK)
			fail(r, EXIT_CHECK_FAILED, "the bench failed", r->bench[i].error);
	if (r->demo && r->demo->status != GLLMK_OK)
		fail(r, EXIT_CHECK_FAILED, "the demo failed", r->demo->error);
}

int main(int argc, char **argv)
{
	struct probe_report *r = calloc(1, sizeof(*r));
	struct args a;
	int code = parse_args(argc, argv, &a);

	if (code || !r)
		return code ? code : EXIT_FAILURE;
	probe_cpu(&r->cpu);
	probe_vulkan(&r->vulkan, a.vulkan_loader);
	probe_opencl(&r->opencl, a.opencl_loader);
	probe_plugins(&r->plugins, &a.opt);
	if (a.plugin) {
		r->selftest = calloc(1, sizeof(*r->selftest));
		if (r->selftest)
			probe_selftest(r->selftest, &a.opt, a.plugin);
	}
	if (a.bench)
		run_bench(r, &a);
	if (a.demo && (a.plugin || r->plugins.selected[0])) {
		r->demo = calloc(1, sizeof(*r->demo));
		if (r->demo)
			probe_demo(r->demo, &a.opt, a.plugin ? a.plugin : r->plugins.selected);
	}
	judge(r);
	if (a.json) {
		probe_print_json(stdout, r);
		if (r->exit_code)
			fprintf(stderr, "gllmk-probe: %s\n", r->message);
	} else {
		probe_print_text(stdout, r, a.brief);
	}
	code = r->exit_code;
	probe_plugins_free(&r->plugins);
	free(r->selftest);
	free(r->bench);
	free(r->demo);
	free(r);
	return code;
}
