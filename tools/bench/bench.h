/* gllmk-bench: named benchmarks of one plugin against the machine's own
 * limits (FMA peak, DRAM read bandwidth, both measured at start) and against
 * OpenBLAS, loaded at run time as a peer and never linked.
 *
 * One file per concern: gllmk-bench.c (options, the run), bench_machine.c
 * (limits), bench_simd.c (the ISA kernels behind them), bench_openblas.c
 * (the peer), bench_data.c (random tensors), bench_time.c (repetitions and
 * statistics), bench_cases.c (the named benchmarks), bench_models.c (the
 * matmul shapes of real models, per weight dtype), bench_overhead.c
 * (dispatch cost), bench_output.c (table and JSON).
 */
#ifndef GLLMK_BENCH_H
#define GLLMK_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gllmk.h"

#define BENCH_MiB (1024.0 * 1024.0)

struct bench_opts {
	const char *plugin;     /* NULL: automatic selection */
	const char *plugin_dir; /* NULL: the installed (or staged) one */
	const char *filter;     /* NULL: every benchmark */
	int threads;            /* 0: one per physical core */
	int reps;               /* most timed repetitions per benchmark */
	unsigned models;        /* bench_model_ids bits: models whose shapes run at M = 1 */
	unsigned prefill;       /* the same, at M = prefill_m */
	int prefill_m;          /* 0: 512 (8 with smoke) */
	bool json;
	bool smoke;
	bool bf16_act;          /* --bf16-activations: GLLMK_OPEN_BF16_ACTIVATIONS */
};

/* ------------------------------------------------------------ machine */

#define BENCH_READ_KERNELS 4

/* Reads bytes (a multiple of 256) from p; the sum keeps the loads alive. */
struct bench_read_kernel {
	const char *name; /* "plain", "prefetch", "two-stream", "non-temporal" */
	uint64_t (*read)(const void *p, size_t bytes);
};

/* The ISA kernels that measure the limits: the widest the CPU runs. */
struct bench_simd {
	const char *isa;
	/* Runs iters rounds of independent FMA chains; returns the flops done. */
	double (*fma_chain)(uint64_t iters);
	uint64_t (*read_sum)(const void *p, size_t bytes); /* = reads[0] */
	/* Every read kernel the CPU runs; the DRAM limit is the best of them. */
	struct bench_read_kernel reads[BENCH_READ_KERNELS];
	int n_reads;
};

const struct bench_simd *bench_simd_select(void);

/* The last-level cache: the largest unified cache in sysfs
 * (/sys/devices/system/cpu/cpu0/cache/index*), else sysconf's figure. */
struct bench_llc {
	uint64_t bytes;     /* one instance; 0 unknown */
	int level;          /* 0 unknown */
	int instances;      /* distinct shared_cpu_lists among the online CPUs */
	uint64_t total;     /* bytes × instances: what a rotation must exceed */
	const char *source; /* "sysfs", "sysconf" or "none" */
	char shared[64];    /* cpu0's shared_cpu_list */
};

/* One read kernel's DRAM figures: medians of the repetitions, and the best. */
struct bench_read_figure {
	const char *name;
	double gbs_1t, gbs, best_1t, best;
};

struct bench_limits {
	const char *isa;    /* of the kernels that measured them */
	int threads;        /* "all threads": what gllmk and OpenBLAS get */
	double peak_1t;     /* GFLOP/s, f32 FMA, one thread */
	double peak;        /* GFLOP/s, all threads */
	double dram_1t;     /* GB/s read, one thread: the best kernel's median */
	double dram;        /* GB/s read, all threads: the best kernel's median */
	const char *dram_kernel;    /* the kernel behind dram */
	struct bench_read_figure reads[BENCH_READ_KERNELS];
	int n_reads, dram_reps;
	double dram_mib;    /* size of the buffer read */
	uint64_t llc_bytes; /* = llc.total; 0 unknown */
	struct bench_llc llc;
	double loadavg;     /* 1-minute load average at start; < 0 unknown */
	/* GPU plugins (bench_device.c): device copy GB/s (read + write), the
	 * limit of their GB/s rows; 0 for CPU plugins. */
	double device_copy, device_mib;
	double device_copy_engine, device_copy_shader; /* the two copies behind it */
	int device_reps;
	bool device_is_limit; /* a GPU: device_copy is the limit, not dram */
	char cpu[128];      /* model name */
};

int bench_physical_cores(void);
void bench_read_llc(struct bench_llc *llc);
uint64_t bench_llc_bytes(void); /* llc.total */
/* 0, or -1 when memory for the bandwidth buffer is missing. */
int bench_measure_limits(struct bench_limits *lim, int threads, bool smoke);
/* bench_device.c: a GPU plugin's device memory bandwidth into lim (a no-op
 * for CPU plugins); gllmk-bench and gllmk-run call it after their runs. */
void bench_measure_device(gllmk_context *ctx, bool smoke, struct bench_limits *lim);
/* The memory limit of GB/s figures: a GPU's device copy, else the DRAM
 * read. */
double bench_memory_limit(const struct bench_limits *lim);

/* ------------------------------------------------------------ OpenBLAS */

struct bench_blas;

/* NULL when libopenblas.so.0 cannot be loaded; *why says so. */
struct bench_blas *bench_blas_open(int threads, const char **why);
void bench_blas_close(struct bench_blas *bl);
const char *bench_blas_version(const struct bench_blas *bl);
/* c[M,N] = a[M,K] · b[N,K]ᵀ when b_trans, else a[M,K] · b[K,N]. */
void bench_blas_sgemm(const struct bench_blas *bl, int m, int n, int k, const float *a, const float *b,
		      bool b_trans, float *c);
/* y[N] = w[N,K] · x[K] */
void bench_blas_sgemv(const struct bench_blas *bl, int n, int k, const float *w, const float *x, float *y);

/* ------------------------------------------------------------ results */

enum bench_limit_kind {
	BENCH_LIMIT_NONE,
	BENCH_LIMIT_PEAK, /* GFLOP/s against the all-thread FMA peak */
	BENCH_LIMIT_DRAM, /* GB/s against the all-thread DRAM read bandwidth */
};

struct bench_result {
	char name[96];
	const char *unit;         /* "GFLOP/s", "GB/s", "ns/call" */
	double median, min, max;  /* in unit */
	int reps;
	enum bench_limit_kind limit;
	double pct;               /* median as % of the limit; NAN for none */
	double peer;              /* OpenBLAS median in unit; NAN for none */
	double ratio;             /* median / peer; NAN for none */
	double ratio_sgemm;       /* median / the plugin's f32 sgemm GFLOP/s; NAN for none */
	double tokens_per_s;      /* decode steps per second a sum implies; NAN for none */
	char note[160];
};

/* One run: the options, the context, the limits, the peer, the results. */
struct bench {
	const struct bench_opts *opt;
	gllmk_context *ctx;
	const char *plugin;       /* serving ctx */
	struct bench_limits lim;
	struct bench_blas *blas;  /* NULL: not installed */
	double sgemm;             /* the plugin's f32 sgemm GFLOP/s in this run; 0 not yet */
	const char *blas_why;
	struct bench_result *res;
	size_t n_res, cap_res;
	int failures;
	char command[1024];
	char date[32];
};

/* Appends a result and prints its row (table mode); NULL when out of memory. */
struct bench_result *bench_add(struct bench *b, const char *unit, enum bench_limit_kind limit, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void bench_finish_result(const struct bench *b, struct bench_result *r);
/* Reports a failed benchmark (a gllmk status, or out of memory) and counts it. */
void bench_fail(struct bench *b, const char *what, gllmk_status st);
bool bench_selected(const struct bench *b, const char *name);

void bench_print_header(const struct bench *b);
void bench_print_row(const struct bench *b, const struct bench_result *r);
void bench_print_json(const struct bench *b);

/* ------------------------------------------------------------ timing */

/* One repetition: returns GLLMK_OK or why it failed. rep counts from 0
 * (warm-up included), so a call can rotate over its data. */
typedef gllmk_status (*bench_call_fn)(void *arg, int rep);

struct bench_stats {
	double median, min, max; /* seconds a call */
	int reps;                /* each the mean of its calls (short calls repeat, bench_time.c) */
};

double bench_now(void);
/* Warm-up, then timed repetitions until opt->reps or the time budget (at
 * least 3 when opt->reps allows), each at least 1 ms of calls. */
gllmk_status bench_time(const struct bench *b, bench_call_fn fn, void *arg, struct bench_stats *st);
/* Sets r's median/min/max to work / time (work in units, e.g. flops / 1e9). */
void bench_rate(struct bench_result *r, const struct bench_stats *st, double work);
int bench_cmp_double(const void *a, const void *b);
double bench_median(double *v, int n); /* sorts v */

/* ------------------------------------------------------------ data */

uint64_t bench_rand(uint64_t *state);
void bench_fill_f32(float *p, size_t n, uint64_t seed);
/* Random but valid: values or blocks with sane f16/f32 scales. */
void bench_fill_dtype(gllmk_dtype t, void *p, size_t bytes, uint64_t seed);
/* The weight dtypes (f32, f16, bf16 and every quant dtype a model stores
 * weights in) into out, from the one table in bench_data.c; returns how many. */
#define BENCH_MAX_DTYPES 32
size_t bench_weight_dtypes(gllmk_dtype out[BENCH_MAX_DTYPES]);
uint64_t bench_matrix_bytes(gllmk_dtype t, int64_t rows, int64_t cols);
/* A buffer of bytes random data of dtype t (written in chunks, so the host
 * holds little); NULL and *st on failure. */
gllmk_buffer *bench_random_buffer(struct bench *b, gllmk_dtype t, uint64_t bytes, uint64_t seed, gllmk_status *st);
gllmk_buffer *bench_upload(struct bench *b, const void *host, uint64_t bytes, gllmk_status *st);

/* ------------------------------------------------------------ benchmarks */

void bench_cases_gemm(struct bench *b);
void bench_cases_matmul_quant(struct bench *b);
/* The f32 sgemm GFLOP/s of this run (runs the sgemm case when it has not run). */
double bench_sgemm_gflops(struct bench *b);
/* Model ids: "1b" and "8b", as --models and --prefill name them. */
#define BENCH_MODEL_1B (1u << 0)
#define BENCH_MODEL_8B (1u << 1)
/* Parses "1b,8b", "all" or "none" into BENCH_MODEL_ bits; -1 if bad. */
int bench_parse_models(const char *s, unsigned *out);
void bench_cases_models(struct bench *b);
void bench_cases_memory(struct bench *b);
void bench_cases_attention(struct bench *b);
void bench_cases_overhead(struct bench *b);

#endif /* GLLMK_BENCH_H */
