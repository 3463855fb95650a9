/* libgllmk-abi-baseline.so: a plugin compiled against the ABI 1.0 headers
 * as they were released (abi/baseline/v1.0/, never the current abi/), so
 * test_abi_baseline can load a 1.0 plugin into the current core. Host
 * memory, the memory slots and two operators (scale, add); every other
 * slot is NULL, which the core must answer with GLLMK_E_UNSUPPORTED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gllmk_plugin.h"

_Static_assert(GLLMK_ABI_MAJOR == 1 && GLLMK_ABI_MINOR == 0,
	       "built against the 1.0 baseline headers, not the current ones");

struct baseline {
	const gllmk_host *host;
};

static gllmk_probe_result baseline_probe(gllmk_probe_info *info)
{
	snprintf(info->device, sizeof(info->device), "host memory (ABI 1.0 baseline plugin)");
	snprintf(info->reason, sizeof(info->reason), "a test plugin: by name only");
	return GLLMK_PROBE_BY_NAME;
}

static gllmk_status baseline_open(const gllmk_open_args *args, void **state, char *reason, size_t len)
{
	struct baseline *b = calloc(1, sizeof(*b));

	if (!b) {
		snprintf(reason, len, "abi-baseline: out of memory");
		return GLLMK_E_NO_MEMORY;
	}
	b->host = args->host;
	*state = b;
	return GLLMK_OK;
}

static void baseline_close(void *state)
{
	free(state);
}

static gllmk_status baseline_buffer_alloc(void *state, uint64_t size, void **impl)
{
	struct baseline *b = state;

	*impl = aligned_alloc(64, (size + 63) & ~63ull);
	if (!*impl)
		return b->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_buffer_alloc: %llu bytes",
					  (unsigned long long)size);
	return GLLMK_OK;
}

static void baseline_buffer_free(void *state, void *impl)
{
	(void)state;
	free(impl);
}

static gllmk_status baseline_buffer_write(void *state, void *impl, uint64_t off, const void *src, uint64_t n)
{
	(void)state;
	memcpy((char *)impl + off, src, n);
	return GLLMK_OK;
}

static gllmk_status baseline_buffer_read(void *state, void *impl, uint64_t off, void *dst, uint64_t n)
{
	(void)state;
	memcpy(dst, (char *)impl + off, n);
	return GLLMK_OK;
}

static gllmk_status baseline_buffer_copy(void *state, void *dst, uint64_t dst_off, void *src, uint64_t src_off,
					 uint64_t n)
{
	(void)state;
	memmove((char *)dst + dst_off, (char *)src + src_off, n);
	return GLLMK_OK;
}

static gllmk_status baseline_sync(void *state)
{
	(void)state;
	return GLLMK_OK;
}

/* The test uses contiguous f32 tensors only: rows * n elements from byte 0. */
static int64_t baseline_elements(gllmk_t t)
{
	int64_t n = 1;

	for (int d = 0; d < t->ndim; d++)
		n *= t->shape[d];
	return n;
}

static gllmk_status baseline_scale(void *state, gllmk_t y, gllmk_t x, float s)
{
	const float *px = gllmk_tensor_host(x);
	float *py = gllmk_tensor_host(y);

	(void)state;
	for (int64_t i = 0; i < baseline_elements(x); i++)
		py[i] = px[i] * s;
	return GLLMK_OK;
}

static gllmk_status baseline_add(void *state, gllmk_t y, gllmk_t a, gllmk_t b)
{
	const float *pa = gllmk_tensor_host(a);
	const float *pb = gllmk_tensor_host(b);
	float *py = gllmk_tensor_host(y);

	(void)state;
	for (int64_t i = 0; i < baseline_elements(a); i++)
		py[i] = pa[i] + pb[i];
	return GLLMK_OK;
}

static const gllmk_plugin_table baseline_table = {
	.size         = sizeof(gllmk_plugin_table),
	.abi_major    = GLLMK_ABI_MAJOR,
	.abi_minor    = GLLMK_ABI_MINOR,
	.name         = "abi-baseline",
	.probe        = baseline_probe,
	.open         = baseline_open,
	.close        = baseline_close,
	.buffer_alloc = baseline_buffer_alloc,
	.buffer_free  = baseline_buffer_free,
	.buffer_write = baseline_buffer_write,
	.buffer_read  = baseline_buffer_read,
	.buffer_copy  = baseline_buffer_copy,
	.sync         = baseline_sync,
	.add          = baseline_add,
	.scale        = baseline_scale,
};

__attribute__((visibility("default")))
const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(const gllmk_host *host, char *reason, size_t len)
{
	(void)host;
	(void)reason;
	(void)len;
	return &baseline_table;
}
