/* gllmk-probe --json: the report as one JSON document.
 *
 * The schema is SPEC/probe.schema.json, explained field by field in
 * SPEC/PROBE.md; change the three together. Absent things are null, never
 * missing keys, so a consumer reads every field the same way.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "probe_report.h"

#define JSON_SCHEMA_VERSION 1
#define JW_DEPTH 16

struct jw {
	FILE *f;
	int depth;
	bool used[JW_DEPTH]; /* the open container at each depth has an item */
};

static void jw_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Comma, newline, indentation and "key": for the next item (key NULL in arrays). */
static void jw_item(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		fputs(w->used[w->depth] ? ",\n" : "\n", w->f);
		w->used[w->depth] = true;
		fprintf(w->f, "%*s", 2 * w->depth, "");
	}
	if (key) {
		jw_string(w->f, key);
		fputs(": ", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char bracket)
{
	jw_item(w, key);
	fputc(bracket, w->f);
	w->used[++w->depth] = false;
}

static void jw_close(struct jw *w, char bracket)
{
	if (w->used[w->depth--])
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(bracket, w->f);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_item(w, key);
	if (s)
		jw_string(w->f, s);
	else
		fputs("null", w->f);
}

/* "" becomes null: the report's fixed arrays use "" for "none". */
static void jw_text(struct jw *w, const char *key, const char *s)
{
	jw_str(w, key, s && s[0] ? s : NULL);
}

static void jw_int(struct jw *w, const char *key, long long v)
{
	jw_item(w, key);
	fprintf(w->f, "%lld", v);
}

static void jw_uint(struct jw *w, const char *key, uint64_t v)
{
	jw_item(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

static void jw_num(struct jw *w, const char *key, double v)
{
	jw_item(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.6g", v);
	else
		fputs("null", w->f);
}

static void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_item(w, key);
	fputs(v ? "true" : "false", w->f);
}

static void jw_null(struct jw *w, const char *key)
{
	jw_str(w, key, NULL);
}

/* ---------------------------------------------------------------- CPU */

static void json_cpu(struct jw *w, const struct probe_cpu *c)
{
	char xcr0[32];

	jw_open(w, "cpu", '{');
	jw_text(w, "arch", c->arch);
	jw_text(w, "vendor", c->vendor);
	jw_text(w, "model", c->model);
	jw_int(w, "logical_cpus", c->logical_cpus);
	jw_int(w, "physical_cores", c->physical_cores);
	jw_int(w, "packages", c->packages);
	jw_open(w, "caches", '[');
	for (int i = 0; i < c->n_caches; i++) {
		jw_open(w, NULL, '{');
		jw_int(w, "level", c->caches[i].level);
		jw_text(w, "type", c->caches[i].type);
		jw_uint(w, "size_bytes", c->caches[i].size);
		jw_int(w, "shared_by", c->caches[i].shared_by);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_open(w, "features", '{');
	for (int i = 0; i < c->n_features; i++)
		jw_bool(w, c->features[i].name, probe_feature_usable(&c->features[i]));
	jw_close(w, '}');
	jw_open(w, "features_without_os_support", '[');
	for (int i = 0; i < c->n_features; i++)
		if (c->features[i].cpu && !c->features[i].os)
			jw_str(w, NULL, c->features[i].name);
	jw_close(w, ']');
	snprintf(xcr0, sizeof(xcr0), "0x%llx", (unsigned long long)c->xcr0);
	jw_str(w, "xcr0", c->has_xcr0 ? xcr0 : NULL);
	jw_close(w, '}');
}

/* ---------------------------------------------------- Vulkan, OpenCL */

static void json_vk_device(struct jw *w, const struct probe_vk_device *d)
{
	jw_open(w, NULL, '{');
	jw_text(w, "name", d->name);
	jw_text(w, "type", d->type);
	jw_uint(w, "vendor_id", d->vendor_id);
	jw_uint(w, "device_id", d->device_id);
	jw_text(w, "api_version", d->api_version);
	jw_uint(w, "driver_version", d->driver_version);
	jw_text(w, "driver_name", d->driver_name);
	jw_text(w, "driver_info", d->driver_info);
	jw_open(w, "memory_heaps", '[');
	for (uint32_t i = 0; i < d->n_heaps; i++) {
		jw_open(w, NULL, '{');
		jw_uint(w, "size_bytes", d->heaps[i].size);
		jw_bool(w, "device_local", d->heaps[i].device_local);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	if (d->subgroup_size)
		jw_uint(w, "subgroup_size", d->subgroup_size);
	else
		jw_null(w, "subgroup_size");
	jw_bool(w, "compute_queue", d->compute_queue);
	jw_bool(w, "storage_buffer_16bit", d->storage_buffer_16bit);
	jw_bool(w, "storage_buffer_8bit", d->storage_buffer_8bit);
	jw_bool(w, "shader_float16", d->shader_float16);
	jw_bool(w, "shader_int8", d->shader_int8);
	jw_close(w, '}');
}

static void json_vulkan(struct jw *w, const struct probe_vulkan *vk)
{
	jw_open(w, "vulkan", '{');
	jw_str(w, "state", probe_api_state_name(vk->state));
	jw_text(w, "loader", vk->loader);
	jw_text(w, "error", vk->error);
	jw_text(w, "instance_version", vk->instance_version);
	jw_open(w, "devices", '[');
	for (uint32_t i = 0; i < vk->n_devices; i++)
		json_vk_device(w, &vk->devices[i]);
	jw_close(w, ']');
	jw_close(w, '}');
}

static void json_cl_device(struct jw *w, const struct probe_cl_device *d)
{
	jw_open(w, NULL, '{');
	jw_text(w, "name", d->name);
	jw_text(w, "vendor", d->vendor);
	jw_text(w, "type", d->type);
	jw_text(w, "version", d->version);
	jw_text(w, "driver_version", d->driver_version);
	jw_uint(w, "global_mem_bytes", d->global_mem);
	jw_uint(w, "compute_units", d->compute_units);
	jw_text(w, "il_version", d->il_version);
	jw_bool(w, "cl_khr_il_program", d->il_program);
	jw_bool(w, "cl_khr_spir", d->spir);
	jw_bool(w, "cl_khr_fp16", d->fp16);
	jw_close(w, '}');
}

static void json_opencl(struct jw *w, const struct probe_opencl *cl)
{
	jw_open(w, "opencl", '{');
	jw_str(w, "state", probe_api_state_name(cl->state));
	jw_text(w, "loader", cl->loader);
	jw_text(w, "error", cl->error);
	jw_open(w, "platforms", '[');
	for (uint32_t i = 0; i < cl->n_platforms; i++) {
		const struct probe_cl_platform *p = &cl->platforms[i];

		jw_open(w, NULL, '{');
		jw_text(w, "name", p->name);
		jw_text(w, "vendor", p->vendor);
		jw_text(w, "version", p->version);
		jw_text(w, "error", p->error);
		jw_open(w, "devices", '[');
		for (uint32_t j = 0; j < p->n_devices; j++)
			json_cl_device(w, &p->devices[j]);
		jw_close(w, ']');
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

/* ------------------------------------------------------------ plugins */

static void json_caps(struct jw *w, const struct probe_plugin_caps *c)
{
	if (!c || !c->tried) {
		jw_null(w, "capabilities");
		return;
	}
	jw_open(w, "capabilities", '{');
	jw_bool(w, "opened", c->opened);
	jw_text(w, "open_error", c->open_error);
	jw_int(w, "ok", c->n_ok);
	jw_int(w, "total", c->n_caps);
	jw_open(w, "ops", '[');
	for (int i = 0; i < c->n_caps; i++) {
		jw_open(w, NULL, '{');
		jw_str(w, "op", c->caps[i].op);
		jw_str(w, "status", probe_status_id(c->caps[i].status));
		jw_text(w, "message", c->caps[i].message);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void json_candidate(struct jw *w, const gllmk_plugin_report *p, const struct probe_plugin_caps *caps)
{
	jw_open(w, NULL, '{');
	jw_str(w, "name", p->name);
	jw_text(w, "path", p->path);
	jw_bool(w, "installed", p->verdict != GLLMK_VERDICT_NOT_INSTALLED);
	jw_str(w, "verdict", probe_verdict_id(p->verdict));
	jw_str(w, "verdict_text", gllmk_verdict_string(p->verdict));
	jw_bool(w, "usable", probe_verdict_usable(p->verdict));
	if (p->abi_major) {
		jw_int(w, "abi_major", p->abi_major);
		jw_int(w, "abi_minor", p->abi_minor);
	} else {
		jw_null(w, "abi_major");
		jw_null(w, "abi_minor");
	}
	jw_text(w, "reason", p->reason);
	jw_text(w, "device", p->device);
	json_caps(w, caps);
	jw_close(w, '}');
}

static void json_plugins(struct jw *w, const struct probe_plugins *pl)
{
	const gllmk_report *s = pl->survey;

	jw_open(w, "plugins", '{');
	jw_str(w, "plugin_dir", s ? s->plugin_dir : NULL);
	jw_str(w, "layer", s ? s->layer : NULL);
	jw_str(w, "env_override", pl->env_override);
	jw_text(w, "survey_error", pl->survey_error);
	jw_str(w, "survey_selected", s && s->selected >= 0 ? s->plugins[s->selected].name : NULL);
	jw_text(w, "selected", pl->selected);
	jw_text(w, "open_error", pl->open_error);
	jw_open(w, "candidates", '[');
	for (size_t i = 0; s && i < s->count; i++)
		json_candidate(w, &s->plugins[i], pl->caps ? &pl->caps[i] : NULL);
	jw_close(w, ']');
	jw_close(w, '}');
}

/* ---------------------------------------------- self-test, bench, demo */

static void json_selftest(struct jw *w, const struct probe_selftest *st)
{
	if (!st) {
		jw_null(w, "selftest");
		return;
	}
	jw_open(w, "selftest", '{');
	jw_str(w, "plugin", st->plugin);
	jw_bool(w, "ok", st->ok);
	jw_text(w, "error", st->error);
	jw_bool(w, "compared_with_generic", st->generic);
	jw_int(w, "rounds", st->rounds);
	jw_num(w, "seconds", st->seconds);
	jw_open(w, "checks", '[');
	for (int i = 0; i < st->n_checks && !st->error[0]; i++) {
		const struct probe_check *c = &st->checks[i];

		jw_open(w, NULL, '{');
		jw_str(w, "name", c->name);
		jw_bool(w, "ok", c->ok);
		jw_str(w, "status", probe_status_id(c->status));
		jw_text(w, "message", c->message);
		jw_num(w, "err_ref", c->err_ref);
		if (c->err_generic >= 0)
			jw_num(w, "err_generic", c->err_generic);
		else
			jw_null(w, "err_generic");
		jw_num(w, "tolerance", c->tol);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void json_bench(struct jw *w, const struct probe_bench *b, int n)
{
	if (!b) {
		jw_null(w, "bench");
		return;
	}
	jw_open(w, "bench", '[');
	for (int i = 0; i < n; i++, b++) {
		jw_open(w, NULL, '{');
		jw_str(w, "plugin", b->plugin);
		jw_str(w, "status", probe_status_id(b->status));
		jw_text(w, "error", b->error);
		jw_open(w, "matmul_f32", '{');
		jw_int(w, "m", b->m);
		jw_int(w, "n", b->n);
		jw_int(w, "k", b->k);
		jw_num(w, "gflops", b->matmul_gflops > 0 ? b->matmul_gflops : NAN);
		jw_close(w, '}');
		jw_open(w, "rms_norm", '{');
		jw_uint(w, "bytes", b->norm_bytes);
		jw_num(w, "gb_per_s", b->rms_norm_gbs > 0 ? b->rms_norm_gbs : NAN);
		jw_close(w, '}');
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void json_demo(struct jw *w, const struct probe_demo *d)
{
	bool ok;

	if (!d) {
		jw_null(w, "demo");
		return;
	}
	ok = d->status == GLLMK_OK;
	jw_open(w, "demo", '{');
	jw_str(w, "plugin", d->plugin);
	jw_str(w, "status", probe_status_id(d->status));
	jw_text(w, "error", d->error);
	jw_int(w, "repeats", d->repeats);
	jw_open(w, "steps", '[');
	for (int i = 0; i < d->n_steps && ok; i++) {
		jw_open(w, NULL, '{');
		jw_str(w, "name", d->steps[i].name);
		jw_num(w, "checksum", d->steps[i].checksum);
		jw_num(w, "ms", d->steps[i].ms);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	if (ok) {
		jw_int(w, "argmax_token", d->argmax_token);
		jw_int(w, "sampled_token", d->sampled_token);
	} else {
		jw_null(w, "argmax_token");
		jw_null(w, "sampled_token");
	}
	jw_close(w, '}');
}

void probe_print_json(FILE *f, const struct probe_report *r)
{
	struct jw w = { .f = f };

	jw_open(&w, NULL, '{');
	jw_int(&w, "schema_version", JSON_SCHEMA_VERSION);
	jw_open(&w, "gllmk", '{');
	jw_str(&w, "version", GLLMK_VERSION);
	jw_int(&w, "abi_major", GLLMK_ABI_MAJOR);
	jw_int(&w, "abi_minor", GLLMK_ABI_MINOR);
	jw_close(&w, '}');
	json_cpu(&w, &r->cpu);
	json_vulkan(&w, &r->vulkan);
	json_opencl(&w, &r->opencl);
	json_plugins(&w, &r->plugins);
	json_selftest(&w, r->selftest);
	json_bench(&w, r->bench, r->n_bench);
	json_demo(&w, r->demo);
	jw_int(&w, "exit_code", r->exit_code);
	jw_text(&w, "message", r->message);
	jw_close(&w, '}');
	fputc('\n', f);
}
