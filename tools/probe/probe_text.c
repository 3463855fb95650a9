/* gllmk-probe: the report for people (the default output). */
#include <math.h>
#include <string.h>

#include "probe_report.h"

static const char *human_size(uint64_t b, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s", v, units[u]);
	return buf;
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

/* ---------------------------------------------------------------- CPU */

static void text_caches(FILE *f, const struct probe_cpu *c)
{
	char sz[32];

	fprintf(f, "  caches    ");
	for (int i = 0; i < c->n_caches; i++) {
		const struct probe_cache *k = &c->caches[i];
		const char *t = strcmp(k->type, "data") == 0 ? "d" : strcmp(k->type, "instruction") == 0 ? "i" : "";

		fprintf(f, "%sL%d%s %s", i ? ", " : "", k->level, t, human_size(k->size, sz, sizeof(sz)));
		if (k->shared_by > 1)
			fprintf(f, " (shared by %d)", k->shared_by);
	}
	fprintf(f, "%s\n", c->n_caches ? "" : "unknown");
}

/* Prints the names of the features for which pick() holds; "none" if none. */
static void text_features(FILE *f, const char *label, const struct probe_cpu *c,
			  bool (*pick)(const struct probe_feature *))
{
	int n = 0;

	fprintf(f, "  %-9s", label);
	for (int i = 0; i < c->n_features; i++)
		if (pick(&c->features[i]))
			fprintf(f, " %s", c->features[i].name), n++;
	fprintf(f, "%s\n", n ? "" : " none");
}

static bool feature_usable(const struct probe_feature *x)
{
	return probe_feature_usable(x);
}

static bool feature_absent(const struct probe_feature *x)
{
	return !x->cpu;
}

static bool feature_no_os(const struct probe_feature *x)
{
	return x->cpu && !x->os;
}

static void text_cpu(FILE *f, const struct probe_cpu *c)
{
	bool no_os = false;

	for (int i = 0; i < c->n_features; i++)
		no_os |= feature_no_os(&c->features[i]);
	fprintf(f, "CPU\n");
	fprintf(f, "  model     %s\n", c->model[0] ? c->model : "unknown");
	fprintf(f, "  vendor    %s (%s)\n", c->vendor[0] ? c->vendor : "unknown", c->arch);
	fprintf(f, "  cores     %d logical, %d physical, %d package%s\n", c->logical_cpus, c->physical_cores,
		c->packages, c->packages == 1 ? "" : "s");
	text_caches(f, c);
	text_features(f, "features", c, feature_usable);
	text_features(f, "lacks", c, feature_absent);
	if (no_os) {
		text_features(f, "OS off", c, feature_no_os);
		fprintf(f, "            (the CPU has these, but XCR0 = 0x%llx leaves their register state off)\n",
			(unsigned long long)c->xcr0);
	}
}

/* ---------------------------------------------------- Vulkan, OpenCL */

static void text_api_header(FILE *f, const char *api, enum probe_api_state s, const char *loader,
			    const char *error)
{
	fprintf(f, "\n%s (%s): ", api, loader);
	switch (s) {
	case PROBE_API_SKIPPED:
		fprintf(f, "skipped%s%s\n", error[0] ? ": " : "", error);
		break;
	case PROBE_API_NOT_INSTALLED:
		fprintf(f, "not installed (%s)\n", error);
		break;
	case PROBE_API_FAILED:
		fprintf(f, "failed: %s\n", error);
		break;
	case PROBE_API_OK:
		fprintf(f, "%s\n", error[0] ? error : "ok");
		break;
	}
}

static void text_vulkan(FILE *f, const struct probe_vulkan *vk)
{
	char sz[32];

	text_api_header(f, "Vulkan", vk->state, vk->loader, vk->state == PROBE_API_OK ? "" : vk->error);
	if (vk->state != PROBE_API_OK)
		return;
	fprintf(f, "  instance version %s, %u device%s\n", vk->instance_version, vk->n_devices,
		vk->n_devices == 1 ? "" : "s");
	for (uint32_t i = 0; i < vk->n_devices; i++) {
		const struct probe_vk_device *d = &vk->devices[i];

		fprintf(f, "  [%u] %s\n", i, d->name);
		fprintf(f, "      type %s, Vulkan %s, driver %s%s%s%s\n", d->type, d->api_version,
			d->driver_name[0] ? d->driver_name : "(unnamed)", d->driver_info[0] ? " (" : "",
			d->driver_info, d->driver_info[0] ? ")" : "");
		fprintf(f, "      memory");
		for (uint32_t h = 0; h < d->n_heaps; h++)
			fprintf(f, "%s %s%s", h ? "," : "", human_size(d->heaps[h].size, sz, sizeof(sz)),
				d->heaps[h].device_local ? " device-local" : "");
		fprintf(f, "\n      compute queue %s, subgroup %u, 16-bit storage %s, 8-bit storage %s, "
			   "shaderFloat16 %s, shaderInt8 %s\n",
			yes_no(d->compute_queue), d->subgroup_size, yes_no(d->storage_buffer_16bit),
			yes_no(d->storage_buffer_8bit), yes_no(d->shader_float16), yes_no(d->shader_int8));
	}
}

static void text_opencl(FILE *f, const struct probe_opencl *cl)
{
	char sz[32];

	text_api_header(f, "OpenCL", cl->state, cl->loader, cl->error);
	for (uint32_t i = 0; i < cl->n_platforms; i++) {
		const struct probe_cl_platform *p = &cl->platforms[i];

		fprintf(f, "  platform %s (%s), %s\n", p->name, p->vendor, p->version);
		if (p->error[0])
			fprintf(f, "    %s\n", p->error);
		for (uint32_t j = 0; j < p->n_devices; j++) {
			const struct probe_cl_device *d = &p->devices[j];

			fprintf(f, "    [%u] %s (%s)\n", j, d->name, d->vendor);
			fprintf(f, "        type %s, %s, driver %s, %s, %u compute units\n", d->type, d->version,
				d->driver_version, human_size(d->global_mem, sz, sizeof(sz)), d->compute_units);
			fprintf(f, "        IL %s, cl_khr_spir %s, cl_khr_fp16 %s\n",
				d->il_version[0] ? d->il_version : "none", yes_no(d->spir), yes_no(d->fp16));
		}
	}
}

/* ------------------------------------------------------------ plugins */

static void text_caps(FILE *f, const struct probe_plugin_caps *c)
{
	if (!c || !c->tried)
		return;
	if (!c->opened) {
		fprintf(f, "      by name: does not open: %s\n", c->open_error);
		return;
	}
	fprintf(f, "      by name: %d/%d op variants run%s\n", c->n_ok, c->n_caps,
		c->n_ok == c->n_caps ? " (every ABI v1 operator, every weight dtype)" : "; not:");
	for (int i = 0; i < c->n_caps; i++)
		if (c->caps[i].status != GLLMK_OK)
			fprintf(f, "        %-22s %s: %s\n", c->caps[i].op, probe_status_id(c->caps[i].status),
				c->caps[i].message);
}

static void text_plugins(FILE *f, const struct probe_plugins *pl)
{
	const gllmk_report *s = pl->survey;

	fprintf(f, "\nPlugins");
	if (s)
		fprintf(f, " (looked for in %s)", s->plugin_dir);
	fprintf(f, "\n");
	if (pl->env_override)
		fprintf(f, "  GLLMK_PLUGIN=%s overrides automatic detection\n", pl->env_override);
	if (s && s->layer)
		fprintf(f, "  layer inserted: %s\n", s->layer);
	if (!s)
		fprintf(f, "  survey failed: %s\n", pl->survey_error);
	for (size_t i = 0; s && i < s->count; i++) {
		const gllmk_plugin_report *p = &s->plugins[i];

		if (p->verdict == GLLMK_VERDICT_NOT_INSTALLED) {
			fprintf(f, "  %-12s %-14s no %s\n", p->name, probe_verdict_id(p->verdict), p->path);
			continue;
		}
		fprintf(f, "  %-12s %s", p->name, probe_verdict_id(p->verdict));
		if (p->abi_major)
			fprintf(f, "%*s ABI %u.%u", (int)(14 - strlen(probe_verdict_id(p->verdict))), "",
				p->abi_major, p->abi_minor);
		fprintf(f, "%s%s\n", p->device && p->device[0] ? "  " : "", p->device ? p->device : "");
		if (p->reason && p->reason[0])
			fprintf(f, "      %s\n", p->reason);
		fprintf(f, "      %s\n", p->path);
		text_caps(f, pl->caps ? &pl->caps[i] : NULL);
	}
	fputc('\n', f);
}

static void text_selection(FILE *f, const struct probe_plugins *pl)
{
	if (pl->selected[0])
		fprintf(f, "gllmk_open(NULL) selects: %s\n", pl->selected);
	else /* the reason ends the report (probe_print_text) */
		fprintf(f, "gllmk_open(NULL) selects no plugin\n");
}

/* ---------------------------------------------- self-test, bench, demo */

static void text_selftest(FILE *f, const struct probe_selftest *st)
{
	fprintf(f, "\nSelf-test of %s", st->plugin);
	if (st->error[0]) {
		fprintf(f, ": cannot open it: %s\n", st->error);
		return;
	}
	fprintf(f, " (%d round%s in %.2f s, against double precision%s)\n", st->rounds, st->rounds == 1 ? "" : "s",
		st->seconds, st->generic ? " and cpu-generic" : "");
	for (int i = 0; i < st->n_checks; i++) {
		const struct probe_check *c = &st->checks[i];

		fprintf(f, "  %-4s %-28s err %.2e", c->ok ? "ok" : "FAIL", c->name, c->err_ref);
		if (c->err_generic >= 0)
			fprintf(f, ", vs cpu-generic %.2e", c->err_generic);
		fprintf(f, " (tolerance %.0e)\n", c->tol);
		if (c->status != GLLMK_OK)
			fprintf(f, "       %s\n", c->message);
	}
	fprintf(f, "  %s\n", st->ok ? "passed" : "FAILED");
}

static void text_bench(FILE *f, const struct probe_bench *b, int n)
{
	fprintf(f, "\nQuick bench (f32 matmul %lldx%lldx%lld; rms_norm over %llu MiB, bytes read + written)\n",
		n ? (long long)b->m : 0, n ? (long long)b->k : 0, n ? (long long)b->n : 0,
		n ? (unsigned long long)(b->norm_bytes >> 20) : 0);
	for (int i = 0; i < n; i++, b++) {
		if (b->status != GLLMK_OK) {
			fprintf(f, "  %-12s failed: %s\n", b->plugin, b->error);
			continue;
		}
		fprintf(f, "  %-12s %8.1f GFLOP/s %8.1f GB/s\n", b->plugin, b->matmul_gflops, b->rms_norm_gbs);
	}
}

static void text_demo(FILE *f, const struct probe_demo *d)
{
	fprintf(f, "\nDemo: one decode step on %s", d->plugin);
	if (d->status != GLLMK_OK) {
		fprintf(f, ": failed: %s\n", d->error);
		return;
	}
	fprintf(f, " (median of %d)\n", d->repeats);
	for (int i = 0; i < d->n_steps; i++) {
		fprintf(f, "  %-38s %9.3f ms", d->steps[i].name, d->steps[i].ms);
		if (isfinite(d->steps[i].checksum))
			fprintf(f, "   checksum %+.6e", d->steps[i].checksum);
		fputc('\n', f);
	}
	fprintf(f, "  next token: argmax %d, sampled %d\n", d->argmax_token, d->sampled_token);
}

void probe_print_text(FILE *f, const struct probe_report *r, bool brief)
{
	fprintf(f, "gllmk-probe %s (ABI %d.%d)\n\n", GLLMK_VERSION, GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR);
	if (!brief) {
		text_cpu(f, &r->cpu);
		text_vulkan(f, &r->vulkan);
		text_opencl(f, &r->opencl);
		text_plugins(f, &r->plugins);
	}
	text_selection(f, &r->plugins);
	if (r->selftest)
		text_selftest(f, r->selftest);
	if (r->bench)
		text_bench(f, r->bench, r->n_bench);
	if (r->demo)
		text_demo(f, r->demo);
	if (r->exit_code)
		fprintf(f, "\ngllmk-probe: %s\n", r->message);
}
