/* The results: a Markdown table by default (rows printed as they finish, so
 * the output pastes into BENCHMARKS.md as it is), or one JSON document. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef GLLMK_VERSION
#define GLLMK_VERSION "unknown"
#endif

bool bench_selected(const struct bench *b, const char *name)
{
	return !b->opt->filter || strstr(name, b->opt->filter);
}

struct bench_result *bench_add(struct bench *b, const char *unit, enum bench_limit_kind limit, const char *fmt, ...)
{
	struct bench_result *r;
	va_list ap;

	if (b->n_res == b->cap_res) {
		size_t cap = b->cap_res ? 2 * b->cap_res : 32;
		struct bench_result *res = realloc(b->res, cap * sizeof(*res));

		if (!res) {
			bench_fail(b, fmt, GLLMK_E_NO_MEMORY);
			return NULL;
		}
		b->res = res;
		b->cap_res = cap;
	}
	r = &b->res[b->n_res++];
	*r = (struct bench_result){ .unit = unit, .limit = limit, .pct = NAN, .peer = NAN, .ratio = NAN,
				    .ratio_sgemm = NAN, .tokens_per_s = NAN };
	va_start(ap, fmt);
	vsnprintf(r->name, sizeof(r->name), fmt, ap);
	va_end(ap);
	return r;
}

void bench_finish_result(const struct bench *b, struct bench_result *r)
{
	if (r->limit == BENCH_LIMIT_PEAK && b->lim.peak > 0)
		r->pct = 100.0 * r->median / b->lim.peak;
	else if (r->limit == BENCH_LIMIT_DRAM && bench_memory_limit(&b->lim) > 0)
		r->pct = 100.0 * r->median / bench_memory_limit(&b->lim);
	if (!b->opt->json)
		bench_print_row(b, r);
}

void bench_fail(struct bench *b, const char *what, gllmk_status st)
{
	const char *msg = gllmk_last_error();

	fprintf(stderr, "gllmk-bench: %s failed: %s%s%s\n", what, gllmk_status_string(st), *msg ? ": " : "", msg);
	b->failures++;
}

/* ------------------------------------------------------------ table */

static const char *num(char *out, size_t len, double v)
{
	if (isnan(v))
		snprintf(out, len, "-");
	else
		snprintf(out, len, fabs(v) < 10 ? "%.2f" : "%.1f", v);
	return out;
}

void bench_print_header(const struct bench *b)
{
	const struct bench_limits *l = &b->lim;

	printf("## gllmk-bench %s: plugin %s, %d threads\n\n", GLLMK_VERSION, b->plugin, l->threads);
	printf("- command: `%s`\n", b->command);
	printf("- date: %s\n", b->date);
	printf("- machine: %s, %d threads used\n", l->cpu, l->threads);
	if (l->llc.bytes)
		printf("- last-level cache (%s): L%d %.0f MiB shared by CPUs %s, %d instance%s, %.0f MiB in all\n",
		       l->llc.source, l->llc.level, (double)l->llc.bytes / BENCH_MiB, *l->llc.shared ? l->llc.shared : "?",
		       l->llc.instances, l->llc.instances == 1 ? "" : "s", (double)l->llc.total / BENCH_MiB);
	else
		printf("- last-level cache: unknown\n");
	if (l->loadavg >= 0)
		printf("- load average at start: %.2f on %ld CPUs%s\n", l->loadavg, sysconf(_SC_NPROCESSORS_ONLN),
		       l->loadavg > 0.5 ? " (other work was running: every figure below is lowered by it)" : "");
	printf("- FMA peak (f32, %s kernel, best of 5): %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on %d\n", l->isa, l->peak_1t,
	       l->peak, l->threads);
	printf("- DRAM read bandwidth (%.0f MiB, best kernel's median of %d): %.1f GB/s on 1 thread, %.1f GB/s on %d"
	       " (limit: %s)\n", l->dram_mib, l->dram_reps, l->dram_1t, l->dram, l->threads,
	       l->dram_kernel ? l->dram_kernel : "-");
	if (l->device_mib > 0)
		printf("- device memory (%s, %.0f MiB copied on the device, median of %d): %.1f GB/s read + written"
		       " (gllmk_buffer_copy %.1f, gllmk_convert %.1f)%s\n", b->plugin, l->device_mib, l->device_reps,
		       l->device_copy, l->device_copy_engine, l->device_copy_shader,
		       l->device_is_limit ? ": the limit of the GB/s rows below" : "; a CPU device: the DRAM read is the limit");
	printf("- DRAM read kernels, GB/s median (best) on 1 thread / on %d:", l->threads);
	for (int k = 0; k < l->n_reads; k++)
		printf("%s %s %.1f (%.1f) / %.1f (%.1f)", k ? ";" : "", l->reads[k].name, l->reads[k].gbs_1t,
		       l->reads[k].best_1t, l->reads[k].gbs, l->reads[k].best);
	printf("\n");
	printf("- peer: %s\n", b->blas ? bench_blas_version(b->blas) : b->blas_why);
	printf("- medians of up to %d repetitions after one warm-up, each at least 1 ms of calls%s\n\n", b->opt->reps,
	       b->opt->smoke ? " (smoke mode: tiny sizes, not figures)" : "");
	printf("| benchmark | unit | median | min | max | reps | %% of limit | OpenBLAS | ratio | note |\n");
	printf("|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
	fflush(stdout);
}

void bench_print_row(const struct bench *b, const struct bench_result *r)
{
	char med[32], lo[32], hi[32], peer[32], ratio[32], pct[48];

	(void)b;
	if (isnan(r->pct))
		snprintf(pct, sizeof(pct), "-");
	else
		snprintf(pct, sizeof(pct), "%.1f%% %s", r->pct, r->limit == BENCH_LIMIT_PEAK ? "peak"
				 : b->lim.device_is_limit ? "device" : "DRAM");
	if (isnan(r->ratio))
		snprintf(ratio, sizeof(ratio), "-");
	else
		snprintf(ratio, sizeof(ratio), "%.2fx", r->ratio);
	printf("| %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", r->name, r->unit,
	       num(med, sizeof(med), r->median), num(lo, sizeof(lo), r->min), num(hi, sizeof(hi), r->max), r->reps,
	       pct, num(peer, sizeof(peer), r->peer), ratio, r->note);
	fflush(stdout);
}

/* ------------------------------------------------------------ JSON */

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_num(double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
		printf("%.0f", v);
	else if (isfinite(v))
		printf("%.6g", v);
	else
		printf("null");
}

static void json_field_str(const char *key, const char *v, const char *sep)
{
	printf("\"%s\": ", key);
	if (v)
		json_str(v);
	else
		printf("null");
	printf("%s", sep);
}

static void json_field_num(const char *key, double v, const char *sep)
{
	printf("\"%s\": ", key);
	json_num(v);
	printf("%s", sep);
}

static void json_result(const struct bench_result *r, bool last)
{
	static const char *const limit[] = { NULL, "fma_peak", "dram_read" };

	printf("    {");
	json_field_str("name", r->name, ", ");
	json_field_str("unit", r->unit, ", ");
	json_field_num("median", r->median, ", ");
	json_field_num("min", r->min, ", ");
	json_field_num("max", r->max, ", ");
	json_field_num("reps", r->reps, ", ");
	json_field_str("limit", limit[r->limit], ", ");
	json_field_num("pct_of_limit", r->pct, ", ");
	json_field_num("openblas", r->peer, ", ");
	json_field_num("ratio_to_openblas", r->ratio, ", ");
	json_field_num("ratio_to_sgemm", r->ratio_sgemm, ", ");
	json_field_num("tokens_per_s", r->tokens_per_s, ", ");
	json_field_str("note", r->note, "");
	printf("}%s\n", last ? "" : ",");
}

void bench_print_json(const struct bench *b)
{
	const struct bench_limits *l = &b->lim;

	printf("{\n  ");
	json_field_str("tool", "gllmk-bench", ", ");
	json_field_str("version", GLLMK_VERSION, ",\n  ");
	json_field_str("command", b->command, ",\n  ");
	json_field_str("date", b->date, ",\n  ");
	json_field_str("plugin", b->plugin, ",\n  ");
	printf("\"smoke\": %s,\n  ", b->opt->smoke ? "true" : "false");
	printf("\"machine\": {");
	json_field_str("cpu", l->cpu, ", ");
	json_field_num("threads", l->threads, ", ");
	json_field_num("llc_bytes", (double)l->llc_bytes, ", ");
	json_field_num("llc_instance_bytes", (double)l->llc.bytes, ", ");
	json_field_num("llc_level", l->llc.level, ", ");
	json_field_num("llc_instances", l->llc.instances, ", ");
	json_field_str("llc_shared_cpu_list", l->llc.shared, ", ");
	json_field_str("llc_source", l->llc.source, ", ");
	json_field_num("loadavg_1min", l->loadavg, ", ");
	json_field_str("kernel_isa", l->isa, ", ");
	json_field_num("fma_peak_gflops_1t", l->peak_1t, ", ");
	json_field_num("fma_peak_gflops", l->peak, ", ");
	json_field_num("dram_read_mib", l->dram_mib, ", ");
	json_field_num("dram_read_gbs_1t", l->dram_1t, ", ");
	json_field_num("dram_read_gbs", l->dram, ", ");
	json_field_str("dram_read_kernel", l->dram_kernel, ", ");
	json_field_num("dram_read_reps", l->dram_reps, ", ");
	json_field_num("device_copy_gbs", l->device_copy, ", ");
	json_field_num("device_copy_engine_gbs", l->device_copy_engine, ", ");
	json_field_num("device_copy_shader_gbs", l->device_copy_shader, ", ");
	printf("\"dram_read_kernels\": [");
	for (int k = 0; k < l->n_reads; k++) {
		printf("%s{", k ? ", " : "");
		json_field_str("name", l->reads[k].name, ", ");
		json_field_num("gbs_1t", l->reads[k].gbs_1t, ", ");
		json_field_num("gbs", l->reads[k].gbs, ", ");
		json_field_num("best_gbs_1t", l->reads[k].best_1t, ", ");
		json_field_num("best_gbs", l->reads[k].best, "");
		printf("}");
	}
	printf("]},\n  ");
	json_field_str("openblas", b->blas ? bench_blas_version(b->blas) : NULL, ",\n  ");
	json_field_num("failures", b->failures, ",\n  ");
	printf("\"results\": [\n");
	for (size_t i = 0; i < b->n_res; i++)
		json_result(&b->res[i], i + 1 == b->n_res);
	printf("  ]\n}\n");
}
