/* A GPU plugin's memory limit: its weights live in device memory, so the
 * host's DRAM read bandwidth says nothing of how close its kernels come.
 * The figure is the faster of two device-side copies between two device
 * buffers, gllmk_buffer_copy (the driver's copy) and gllmk_convert f32 ->
 * f32 (a shader): bytes read plus bytes written per second, the median of
 * a few. A copy reads and writes, which on HBM and
 * GDDR shares one bus, so it is a lower bound of what a read-only kernel can
 * reach; % of limit above 100 is possible and says so. */
#include <string.h>

#include "bench.h"

#define DEVICE_COPY_MiB 512
#define DEVICE_COPY_SMOKE_MiB 4
#define DEVICE_COPY_REPS 7

static bool plugin_is_device(const char *name)
{
	return name && (!strcmp(name, "vulkan") || !strcmp(name, "opencl"));
}

/* One pass over bytes: the driver's copy (vkCmdCopyBuffer: a copy engine
 * on NVIDIA), or gllmk_convert f32 -> f32, a shader like the kernels. */
static gllmk_status device_pass(struct bench *b, gllmk_buffer *dst, gllmk_buffer *src, uint64_t bytes, bool shader)
{
	const int64_t cols = 4096, rows = (int64_t)(bytes / 4 / (uint64_t)cols);
	const gllmk_tensor y = gllmk_tensor_make(dst, 0, GLLMK_F32, 2, (int64_t[]){ rows, cols });
	const gllmk_tensor x = gllmk_tensor_make(src, 0, GLLMK_F32, 2, (int64_t[]){ rows, cols });
	gllmk_status st = shader ? gllmk_convert(b->ctx, &y, &x) : gllmk_buffer_copy(dst, 0, src, 0, bytes);

	return st ? st : gllmk_sync(b->ctx);
}

/* GB/s read + written, the median of a few passes after a warm-up. */
static double time_passes(struct bench *b, gllmk_buffer *dst, gllmk_buffer *src, uint64_t bytes, bool shader)
{
	double t[DEVICE_COPY_REPS];
	int reps = b->opt->smoke ? 2 : DEVICE_COPY_REPS;

	if (device_pass(b, dst, src, bytes, shader))
		return 0;
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now();
		if (device_pass(b, dst, src, bytes, shader))
			return 0;
		t[i] = bench_now() - t0;
	}
	return 2.0 * (double)bytes / bench_median(t, reps) / 1e9;
}

void bench_measure_device(struct bench *b)
{
	uint64_t bytes = (uint64_t)(b->opt->smoke ? DEVICE_COPY_SMOKE_MiB : DEVICE_COPY_MiB) << 20;
	gllmk_buffer *src = NULL, *dst = NULL;

	if (!plugin_is_device(b->plugin))
		return;
	if (!gllmk_buffer_alloc(b->ctx, bytes, &src) && !gllmk_buffer_alloc(b->ctx, bytes, &dst)) {
		b->lim.device_copy_engine = time_passes(b, dst, src, bytes, false);
		b->lim.device_copy_shader = time_passes(b, dst, src, bytes, true);
	}
	b->lim.device_copy = b->lim.device_copy_engine > b->lim.device_copy_shader ? b->lim.device_copy_engine
										     : b->lim.device_copy_shader;
	b->lim.device_mib = (double)bytes / BENCH_MiB;
	gllmk_buffer_free(dst);
	gllmk_buffer_free(src);
}

double bench_memory_limit(const struct bench *b)
{
	return b->lim.device_copy > 0 ? b->lim.device_copy : b->lim.dram;
}
