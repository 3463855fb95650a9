/* A GPU plugin's memory limit: its weights live in device memory, so the
 * host's DRAM read bandwidth says nothing of how close its kernels come.
 * The figure is the faster of two device-side copies between two device
 * buffers, gllmk_buffer_copy (the driver's copy) and gllmk_convert f32 ->
 * f32 (a shader): bytes read plus bytes written per second, the median of
 * a few. A copy reads and writes, which on HBM and
 * GDDR shares one bus, so it is a lower bound of what a read-only kernel can
 * reach; % of limit above 100 is possible and says so. */
#include <math.h>
#include <string.h>

#include "bench.h"

#define DEVICE_COPY_MiB 256
#define DEVICE_COPY_SMOKE_MiB 4
#define DEVICE_COPY_REPS 7

static bool plugin_is_device(const char *name)
{
	return name && (!strcmp(name, "vulkan") || !strcmp(name, "opencl"));
}

/* Whether the context's device is the CPU (lavapipe, PoCL): its probe's
 * device text says so ("... (CPU, Vulkan 1.3, ...)"). */
static bool device_is_cpu(gllmk_context *ctx)
{
	const gllmk_report *r = gllmk_context_report(ctx);

	if (!r || r->selected < 0 || (size_t)r->selected >= r->count)
		return true;
	return strstr(r->plugins[r->selected].device, "CPU") != NULL;
}

/* One pass over bytes: the driver's copy (vkCmdCopyBuffer: a copy engine
 * on NVIDIA), or gllmk_convert f32 -> f32, a shader like the kernels. */
static gllmk_status device_pass(gllmk_context *ctx, gllmk_buffer *dst, gllmk_buffer *src, uint64_t bytes, bool shader)
{
	const int64_t cols = 4096, rows = (int64_t)(bytes / 4 / (uint64_t)cols);
	const gllmk_tensor y = gllmk_tensor_make(dst, 0, GLLMK_F32, 2, (int64_t[]){ rows, cols });
	const gllmk_tensor x = gllmk_tensor_make(src, 0, GLLMK_F32, 2, (int64_t[]){ rows, cols });
	gllmk_status st = shader ? gllmk_convert(ctx, &y, &x) : gllmk_buffer_copy(dst, 0, src, 0, bytes);

	return st ? st : gllmk_sync(ctx);
}

/* GB/s read + written, the median of a few passes after a warm-up. */
static double time_passes(gllmk_context *ctx, gllmk_buffer *dst, gllmk_buffer *src, uint64_t bytes, bool shader,
			  int reps)
{
	double t[DEVICE_COPY_REPS];

	if (device_pass(ctx, dst, src, bytes, shader))
		return 0;
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now();
		if (device_pass(ctx, dst, src, bytes, shader))
			return 0;
		t[i] = bench_now() - t0;
	}
	return 2.0 * (double)bytes / bench_median(t, reps) / 1e9;
}

void bench_measure_device(gllmk_context *ctx, bool smoke, struct bench_limits *lim)
{
	uint64_t bytes = (uint64_t)(smoke ? DEVICE_COPY_SMOKE_MiB : DEVICE_COPY_MiB) << 20;
	int reps = smoke ? 2 : DEVICE_COPY_REPS;
	gllmk_buffer *src = NULL, *dst = NULL;

	if (!plugin_is_device(gllmk_context_plugin(ctx)))
		return;
	if (!gllmk_buffer_alloc(ctx, bytes, &src) && !gllmk_buffer_alloc(ctx, bytes, &dst)) {
		lim->device_copy_engine = time_passes(ctx, dst, src, bytes, false, reps);
		lim->device_copy_shader = time_passes(ctx, dst, src, bytes, true, reps);
	}
	lim->device_copy = fmax(lim->device_copy_engine, lim->device_copy_shader);
	lim->device_is_limit = !device_is_cpu(ctx);
	lim->device_mib = (double)bytes / BENCH_MiB;
	lim->device_reps = reps;
	gllmk_buffer_free(dst);
	gllmk_buffer_free(src);
}

double bench_memory_limit(const struct bench_limits *lim)
{
	return lim->device_is_limit ? lim->device_copy : lim->dram;
}
