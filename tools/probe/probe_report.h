/* gllmk-probe: what the probe found, gathered first and printed after.
 *
 * Each concern fills its own part of struct probe_report (probe_cpu.c,
 * probe_vulkan.c, probe_opencl.c, probe_plugins.c, probe_selftest.c,
 * probe_bench.c, probe_demo.c); probe_text.c and probe_json.c print the whole
 * report, so both outputs always say the same thing. The JSON form is
 * documented field by field in SPEC/PROBE.md.
 */
#ifndef GLLMK_PROBE_REPORT_H
#define GLLMK_PROBE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gllmk.h"

#define PROBE_TEXT 256
#define PROBE_MAX_CACHES 8
#define PROBE_MAX_FEATURES 32
#define PROBE_MAX_DEVICES 16
#define PROBE_MAX_PLATFORMS 8
#define PROBE_MAX_HEAPS 16
#define PROBE_MAX_CAPS 192 /* 128 with ABI 1.1's 26 weight dtypes (3 per dtype) */
#define PROBE_MAX_CHECKS 32
#define PROBE_MAX_STEPS 16

/* ---------------------------------------------------------------- CPU */

struct probe_cache {
	int level;
	char type[16];        /* "data", "instruction", "unified" */
	uint64_t size;        /* bytes */
	int shared_by;        /* logical CPUs sharing one instance; 0 if unknown */
};

struct probe_feature {
	const char *name;     /* /proc/cpuinfo spelling: "avx2", "avx512_vnni", "asimd" */
	bool cpu;             /* the CPU reports it */
	bool os;              /* the OS enables the state it needs (XCR0); true where none is needed */
};

struct probe_cpu {
	char arch[16];        /* "x86_64", "aarch64", ... */
	char vendor[64];
	char model[128];
	int logical_cpus;
	int physical_cores;
	int packages;
	struct probe_cache caches[PROBE_MAX_CACHES];
	int n_caches;
	struct probe_feature features[PROBE_MAX_FEATURES];
	int n_features;
	bool has_xcr0;        /* x86 with OSXSAVE: xcr0 holds XGETBV(0) */
	uint64_t xcr0;
};

/* A feature is usable when the CPU has it and the OS enabled its state. */
static inline bool probe_feature_usable(const struct probe_feature *f)
{
	return f->cpu && f->os;
}

void probe_cpu(struct probe_cpu *cpu);

/* ------------------------------------------------- Vulkan and OpenCL */

enum probe_api_state {
	PROBE_API_SKIPPED = 0,       /* not looked at (--vulkan-loader none) */
	PROBE_API_NOT_INSTALLED = 1, /* the loader library is absent */
	PROBE_API_FAILED = 2,        /* the loader is there but enumeration failed */
	PROBE_API_OK = 3,
};

const char *probe_api_state_name(enum probe_api_state s);

struct probe_vk_heap {
	uint64_t size;
	bool device_local;
};

struct probe_vk_device {
	char name[PROBE_TEXT];
	char type[16];           /* "discrete", "integrated", "virtual", "cpu", "other" */
	uint32_t vendor_id;
	uint32_t device_id;
	char api_version[32];
	uint32_t driver_version; /* raw, vendor-encoded */
	char driver_name[PROBE_TEXT];
	char driver_info[PROBE_TEXT];
	struct probe_vk_heap heaps[PROBE_MAX_HEAPS];
	uint32_t n_heaps;
	uint32_t subgroup_size;  /* 0 if unknown (Vulkan 1.0) */
	bool compute_queue;
	bool storage_buffer_16bit;
	bool storage_buffer_8bit;
	bool shader_float16;
	bool shader_int8;
};

struct probe_vulkan {
	enum probe_api_state state;
	char loader[PROBE_TEXT];
	char error[PROBE_TEXT];
	char instance_version[32];
	struct probe_vk_device devices[PROBE_MAX_DEVICES];
	uint32_t n_devices;
};

struct probe_cl_device {
	char name[PROBE_TEXT];
	char vendor[PROBE_TEXT];
	char type[16];           /* "gpu", "cpu", "accelerator", "custom", "other" */
	char version[128];
	char driver_version[128];
	char il_version[128];    /* "" when the device takes no IL */
	uint64_t global_mem;
	uint32_t compute_units;
	bool spir;               /* cl_khr_spir */
	bool fp16;               /* cl_khr_fp16 */
	bool il_program;         /* cl_khr_il_program */
};

struct probe_cl_platform {
	char name[PROBE_TEXT];
	char vendor[PROBE_TEXT];
	char version[128];
	char error[PROBE_TEXT];  /* device enumeration error, "" if none */
	struct probe_cl_device devices[PROBE_MAX_DEVICES];
	uint32_t n_devices;
};

struct probe_opencl {
	enum probe_api_state state;
	char loader[PROBE_TEXT];
	char error[PROBE_TEXT];
	struct probe_cl_platform platforms[PROBE_MAX_PLATFORMS];
	uint32_t n_platforms;
};

/* loader: the library to dlopen(); "none" skips the API. */
void probe_vulkan(struct probe_vulkan *vk, const char *loader);
void probe_opencl(struct probe_opencl *cl, const char *loader);

/* ------------------------------------------------------------ plugins */

/* The options every context of the probe starts from (--plugin-dir). */
struct probe_options {
	const char *plugin_dir;
	bool capabilities;
};

/* One op variant tried on a plugin opened by name ("matmul:q4_K"). */
struct probe_cap {
	char op[32];
	gllmk_status status;
	char message[PROBE_TEXT];
};

struct probe_plugin_caps {
	bool tried;             /* the plugin could run here, so it was opened */
	bool opened;
	char open_error[512];
	struct probe_cap caps[PROBE_MAX_CAPS];
	int n_caps;
	int n_ok;
};

struct probe_plugins {
	gllmk_status survey_status;
	char survey_error[1024];
	gllmk_report *survey;          /* NULL when the survey failed */
	struct probe_plugin_caps *caps; /* survey->count entries */
	const char *env_override;      /* GLLMK_PLUGIN as the core would read it */
	/* What gllmk_open(options) actually did in this process. */
	gllmk_status open_status;
	char open_error[1024];
	char selected[64];             /* "" when nothing could be opened */
};

void probe_plugins(struct probe_plugins *pl, const struct probe_options *opt);
void probe_plugins_free(struct probe_plugins *pl);
/* Usable: selected, usable, or runs here when named. */
bool probe_verdict_usable(gllmk_verdict v);
/* Stable identifiers for the JSON ("by-name-only"). */
const char *probe_verdict_id(gllmk_verdict v);
const char *probe_status_id(gllmk_status st);

/* Opens plugin by name and tries every op variant on it (probe_caps.c). */
void probe_capabilities(struct probe_plugin_caps *caps, const struct probe_options *opt, const char *plugin);
/* Opens one plugin by name (no environment override, layers as usual).
 * On failure, err holds gllmk_last_error(). */
gllmk_status probe_open_named(const struct probe_options *opt, const char *name, gllmk_context **ctx,
			      char *err, size_t err_len);

/* ------------------------------------------------- self-test, bench, demo */

struct probe_check {
	char name[64];          /* "matmul f32 33x512x129" */
	gllmk_status status;
	char message[2 * PROBE_TEXT];
	double err_ref;         /* ||got - ref||/||ref|| against double precision */
	double err_generic;     /* the same against cpu-generic; < 0 when not compared */
	double tol;             /* err_ref must stay below tol, err_generic below 2 tol */
	bool ok;
};

struct probe_selftest {
	bool ran;
	char plugin[64];
	char error[1024];       /* why it could not run */
	bool generic;           /* compared against cpu-generic too */
	int rounds;             /* passes over the checks within the second */
	double seconds;
	struct probe_check checks[PROBE_MAX_CHECKS];
	int n_checks;
	bool ok;
};

struct probe_bench {
	char plugin[64];
	gllmk_status status;
	char error[PROBE_TEXT];
	int64_t m, n, k;        /* f32 matmul shape */
	double matmul_gflops;
	uint64_t norm_bytes;    /* rms_norm input size */
	double rms_norm_gbs;    /* (bytes read + written) / time */
};

struct probe_step {
	char name[48];
	double checksum;        /* sum of the output's values (the id for ids); NaN: none */
	double ms;              /* median over the decode steps */
};

struct probe_demo {
	bool ran;
	char plugin[64];
	gllmk_status status;
	char error[1024];
	int repeats;
	struct probe_step steps[PROBE_MAX_STEPS];
	int n_steps;
	int32_t argmax_token;
	int32_t sampled_token;
};

void probe_selftest(struct probe_selftest *st, const struct probe_options *opt, const char *plugin);
void probe_bench(struct probe_bench *b, const struct probe_options *opt, const char *plugin);
void probe_demo(struct probe_demo *d, const struct probe_options *opt, const char *plugin);

/* ------------------------------------------------------------ report */

struct probe_report {
	struct probe_cpu cpu;
	struct probe_vulkan vulkan;
	struct probe_opencl opencl;
	struct probe_plugins plugins;
	struct probe_selftest *selftest;  /* NULL unless --plugin */
	struct probe_bench *bench;        /* NULL unless --bench */
	int n_bench;
	struct probe_demo *demo;          /* NULL unless --demo */
	int exit_code;
	char message[1024];               /* why exit_code is not 0, "" otherwise */
};

/* brief: only the selection and the self-test, bench and demo sections. */
void probe_print_text(FILE *f, const struct probe_report *r, bool brief);
void probe_print_json(FILE *f, const struct probe_report *r);

/* ----------------------------------------------------- small helpers */

double probe_now(void);  /* seconds, monotonic */
/* snprintf into a fixed array, never overflowing; probe_copy for a plain string. */
#define probe_set(dst, ...) snprintf((dst), sizeof(dst), __VA_ARGS__)
#define probe_copy(dst, src) probe_strlcpy((dst), sizeof(dst), (src))
void probe_strlcpy(char *dst, size_t len, const char *src);

#endif
