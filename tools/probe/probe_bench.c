/* gllmk-probe --bench: one quick figure per plugin for compute and one for
 * memory — an f32 matmul (GFLOP/s) and an rms_norm over 64 MiB (GB/s of
 * bytes read and written). Each is the median of a few runs after a warm-up,
 * synchronised, with data already on the device. A first look, not a
 * benchmark: gllmk-bench measures against the machine's limits.
 */
#include <stdlib.h>

#include "probe_report.h"
#include "probe_tensor.h"

#define BENCH_M 512
#define BENCH_K 1024
#define BENCH_N 1024
#define BENCH_NORM_COLS 4096
#define BENCH_NORM_ROWS (64 * 1024 * 1024 / 4 / BENCH_NORM_COLS) /* 64 MiB of f32 */
#define BENCH_REPS 5
#define BENCH_BUDGET 1.5 /* seconds per figure, warm-up excluded */

typedef gllmk_status (*bench_fn)(gllmk_context *ctx, const gllmk_tensor *const *t);

static gllmk_status bench_matmul(gllmk_context *ctx, const gllmk_tensor *const *t)
{
	return gllmk_matmul(ctx, t[0], t[1], t[2], NULL);
}

static gllmk_status bench_rms_norm(gllmk_context *ctx, const gllmk_tensor *const *t)
{
	return gllmk_rms_norm(ctx, t[0], t[1], t[2], 1e-6f);
}

/* Median seconds of one synchronised call; < 0 on failure (a->st says why). */
static double median_time(struct arena *a, bench_fn fn, const gllmk_tensor *const *t)
{
	double times[BENCH_REPS], spent = 0.0;
	int n = 0;

	if (a->st || arena_check(a, fn(a->ctx, t)) || arena_check(a, gllmk_sync(a->ctx)))
		return -1.0;
	while (n < BENCH_REPS && (n < 1 || spent < BENCH_BUDGET)) {
		double t0 = probe_now();

		if (arena_check(a, fn(a->ctx, t)) || arena_check(a, gllmk_sync(a->ctx)))
			return -1.0;
		times[n] = probe_now() - t0;
		spent += times[n++];
	}
	return median(times, (size_t)n);
}

static void run_matmul(struct probe_bench *b, struct arena *a)
{
	float *x = prng_floats(1, (size_t)BENCH_M * BENCH_K, -1.0, 1.0);
	float *w = prng_floats(2, (size_t)BENCH_N * BENCH_K, -1.0, 1.0);
	const gllmk_tensor *t[3];
	double s;

	if (!x || !w)
		arena_fail(a, GLLMK_E_NO_MEMORY, "gllmk-probe: out of host memory");
	t[0] = arena_new(a, GLLMK_F32, NULL, SHAPE(BENCH_M, BENCH_N));
	t[1] = arena_new(a, GLLMK_F32, x, SHAPE(BENCH_M, BENCH_K));
	t[2] = arena_new(a, GLLMK_F32, w, SHAPE(BENCH_N, BENCH_K));
	free(x);
	free(w);
	s = median_time(a, bench_matmul, t);
	if (s > 0)
		b->matmul_gflops = 2.0 * BENCH_M * BENCH_N * BENCH_K / s * 1e-9;
}

static void run_rms_norm(struct probe_bench *b, struct arena *a)
{
	float *x = prng_floats(3, (size_t)BENCH_NORM_ROWS * BENCH_NORM_COLS, -1.0, 1.0);
	const gllmk_tensor *t[3];
	double s;

	if (!x)
		arena_fail(a, GLLMK_E_NO_MEMORY, "gllmk-probe: out of host memory");
	t[0] = arena_new(a, GLLMK_F32, NULL, SHAPE(BENCH_NORM_ROWS, BENCH_NORM_COLS));
	t[1] = arena_new(a, GLLMK_F32, x, SHAPE(BENCH_NORM_ROWS, BENCH_NORM_COLS));
	t[2] = arena_new(a, GLLMK_F32, x, SHAPE(BENCH_NORM_COLS));
	free(x);
	s = median_time(a, bench_rms_norm, t);
	if (s > 0)
		b->rms_norm_gbs = 2.0 * (double)b->norm_bytes / s * 1e-9;
}

void probe_bench(struct probe_bench *b, const struct probe_options *opt, const char *plugin)
{
	struct arena a = { 0 };

	*b = (struct probe_bench){
		.m = BENCH_M, .n = BENCH_N, .k = BENCH_K,
		.norm_bytes = (uint64_t)BENCH_NORM_ROWS * BENCH_NORM_COLS * sizeof(float),
	};
	probe_copy(b->plugin, plugin);
	b->status = probe_open_named(opt, plugin, &a.ctx, b->error, sizeof(b->error));
	if (b->status != GLLMK_OK)
		return;
	run_matmul(b, &a);
	arena_free(&a);
	if (!a.st)
		run_rms_norm(b, &a);
	arena_free(&a);
	b->status = a.st;
	if (a.st)
		probe_copy(b->error, a.err);
	gllmk_close(a.ctx);
}
