/* libgllmk-debugtest-wrong.so: cpu-generic with two operators broken on
 * purpose, for the debug layer's tests (run_debug_tests.sh):
 * - scale multiplies by s·1.001 (compare must report it);
 * - relu writes one element past the end of its output view (check's
 *   guard bytes must catch it; never run it without the layer's guards).
 * Every other slot is the CPU framework's, as in cpu-generic.
 */
#include <stdio.h>
#include <string.h>

#include "cpu_plugin.h"

extern const struct cpu_cntx generic_cntx; /* plugins/cpu-generic/cntx_generic.c */

static gllmk_probe_result wrong_probe(gllmk_probe_info *info)
{
	snprintf(info->device, sizeof(info->device), "cpu-generic with scale and relu broken on purpose");
	return GLLMK_PROBE_BY_NAME;
}

static gllmk_status wrong_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	return cpu_open(args, state, reason, reason_len, &generic_cntx);
}

static gllmk_status wrong_scale(void *st, gllmk_t y, gllmk_t x, float s)
{
	return cpu_scale(st, y, x, s * 1.001f);
}

/* The tests give relu a contiguous y. */
static gllmk_status wrong_relu(void *st, gllmk_t y, gllmk_t x)
{
	const float past = 42.0f;
	int64_t n = 1;
	gllmk_status r = cpu_relu(st, y, x);
	int d;

	for (d = 0; d < y->ndim; d++)
		n *= y->shape[d];
	memcpy((float *)gllmk_tensor_host(y) + n, &past, sizeof(past));
	return r;
}

/* cpu-generic's table, generated as CPU_PLUGIN_TABLE generates it,
 * then two slots given again: C11 6.7.9 lets the last initialiser win. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const gllmk_plugin_table wrong_table = {
	.size = sizeof(gllmk_plugin_table),
	.abi_major = GLLMK_ABI_MAJOR,
	.abi_minor = GLLMK_ABI_MINOR,
	.name = "debugtest-wrong",
	.probe = wrong_probe,
	.open = wrong_open,
	.close = cpu_close,
	GLLMK_BACKEND_SLOTS(CPU_TABLE_SLOT)
	GLLMK_OPS(CPU_TABLE_SLOT)
	.scale = wrong_scale,
	.relu = wrong_relu,
};
#pragma GCC diagnostic pop

__attribute__((visibility("default")))
const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(const gllmk_host *host, char *reason, size_t reason_len);

const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(const gllmk_host *host, char *reason, size_t reason_len)
{
	(void)host;
	(void)reason;
	(void)reason_len;
	return &wrong_table;
}
