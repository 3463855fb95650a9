/* gllmk-bench: the benchmarks of issue 3 on one plugin, next to OpenBLAS and
 * next to the machine's limits, measured at start.
 *
 *   gllmk-bench [--plugin NAME] [--plugin-dir DIR] [--threads N] [--filter SUBSTR]
 *               [--reps N] [--models LIST] [--prefill LIST] [--prefill-m M] [--bf16-activations]
 *               [--json] [--smoke]
 *
 * A Markdown table by default (ready for BENCHMARKS.md), one JSON document
 * with --json. --smoke runs tiny sizes in seconds: what CI runs; its figures
 * mean nothing. Exit status 1 if any benchmark failed, 2 on bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define DEFAULT_REPS 10
#define SMOKE_REPS 3
#define DEFAULT_MODELS (BENCH_MODEL_1B | BENCH_MODEL_8B)
#define DEFAULT_PREFILL BENCH_MODEL_1B

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gllmk-bench [options]\n"
		"  --plugin NAME      plugin(s) to run, comma-separated (default: automatic selection)\n"
		"  --plugin-dir DIR   where libgllmk-<name>.so are (default: next to libgllmk.so.1)\n"
		"  --threads N        threads for gllmk, OpenBLAS and the limits (default: physical cores)\n"
		"  --filter SUBSTR    only benchmarks whose name contains SUBSTR\n"
		"  --reps N           at most N timed repetitions per benchmark (default %d)\n"
		"  --models LIST      models whose matmul shapes run at M = 1: 1b, 8b, all or none\n"
		"                     (default all)\n"
		"  --prefill LIST     models whose layer shapes also run at M = 512 (default 1b)\n"
		"  --prefill-m M      that M instead of 512 (a short prompt: 64)\n"
		"  --bf16-activations open with GLLMK_OPEN_BF16_ACTIVATIONS (bf16 matmuls may round x)\n"
		"  --json             one JSON document instead of the table\n"
		"  --smoke            tiny sizes and %d repetitions: checks the tool, not the machine\n",
		DEFAULT_REPS, SMOKE_REPS);
}

static int parse_int(const char *s, int lo, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > 1 << 20)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "plugin", required_argument, NULL, 'p' }, { "plugin-dir", required_argument, NULL, 'd' },
		{ "threads", required_argument, NULL, 't' }, { "filter", required_argument, NULL, 'f' },
		{ "reps", required_argument, NULL, 'r' },    { "json", no_argument, NULL, 'j' },
		{ "smoke", no_argument, NULL, 's' },         { "help", no_argument, NULL, 'h' },
		{ "models", required_argument, NULL, 'm' },  { "prefill", required_argument, NULL, 'P' },
		{ "prefill-m", required_argument, NULL, 'M' }, { "bf16-activations", no_argument, NULL, 'B' },
		{ 0 },
	};
	int c, reps = 0;

	o->models = DEFAULT_MODELS;
	o->prefill = DEFAULT_PREFILL;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o->plugin = optarg; break;
		case 'd': o->plugin_dir = optarg; break;
		case 'f': o->filter = optarg; break;
		case 'j': o->json = true; break;
		case 's': o->smoke = true; break;
		case 't':
			if (parse_int(optarg, 0, &o->threads))
				return -1;
			break;
		case 'r':
			if (parse_int(optarg, 1, &reps))
				return -1;
			break;
		case 'm':
			if (bench_parse_models(optarg, &o->models))
				return -1;
			break;
		case 'P':
			if (bench_parse_models(optarg, &o->prefill))
				return -1;
			break;
		case 'M':
			if (parse_int(optarg, 2, &o->prefill_m))
				return -1;
			break;
		case 'B': o->bf16_act = true; break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (optind < argc)
		return -1;
	o->reps = reps ? reps : o->smoke ? SMOKE_REPS : DEFAULT_REPS;
	return 0;
}

static void describe_run(struct bench *b, int argc, char **argv)
{
	time_t now = time(NULL);
	size_t len = 0;

	strftime(b->date, sizeof(b->date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	for (int i = 0; i < argc && len < sizeof(b->command); i++)
		len += (size_t)snprintf(b->command + len, sizeof(b->command) - len, "%s%s", i ? " " : "",
					i ? argv[i] : "gllmk-bench");
}

static int open_context(struct bench *b)
{
	const struct bench_opts *o = b->opt;
	gllmk_options opts = {
		.struct_size = sizeof(opts),
		.plugins = o->plugin,
		.plugin_dir = o->plugin_dir,
		.n_threads = b->lim.threads,
		.flags = o->bf16_act ? GLLMK_OPEN_BF16_ACTIVATIONS : 0,
	};
	gllmk_status st = gllmk_open(&opts, &b->ctx);

	if (st != GLLMK_OK) {
		fprintf(stderr, "gllmk-bench: gllmk_open: %s: %s\n", gllmk_status_string(st), gllmk_last_error());
		return -1;
	}
	b->plugin = gllmk_context_plugin(b->ctx);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_opts opt = { 0 };
	struct bench b = { .opt = &opt };
	int threads;

	if (parse_args(argc, argv, &opt)) {
		usage(stderr);
		return 2;
	}
	describe_run(&b, argc, argv);
	threads = opt.threads ? opt.threads : bench_physical_cores();
	if (bench_measure_limits(&b.lim, threads, opt.smoke)) {
		fprintf(stderr, "gllmk-bench: no memory for the bandwidth buffer\n");
		return 1;
	}
	if (open_context(&b))
		return 1;
	bench_measure_device(b.ctx, opt.smoke, &b.lim);
	b.blas = bench_blas_open(threads, &b.blas_why);
	if (!opt.json)
		bench_print_header(&b);

	bench_cases_gemm(&b);
	bench_cases_matmul_quant(&b);
	bench_cases_models(&b);
	bench_cases_memory(&b);
	bench_cases_attention(&b);
	bench_cases_overhead(&b);

	if (opt.json)
		bench_print_json(&b);
	else if (b.n_res == 0)
		printf("\n(no benchmark matches --filter %s)\n", opt.filter ? opt.filter : "");
	bench_blas_close(b.blas);
	gllmk_close(b.ctx);
	free(b.res);
	return b.failures ? 1 : 0;
}
