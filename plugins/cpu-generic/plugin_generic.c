/* cpu-generic: the CPU framework with the portable reference kernels.
 * The plugin's one export is its entry; the table is static const data. */
#include <stdio.h>

#include "cpu_plugin.h"

extern const struct cpu_kernels generic_kernels;            /* kernels_generic.c */
gllmk_probe_result generic_probe(gllmk_probe_info *info);   /* probe_generic.c */

static gllmk_status generic_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	return cpu_open(args, state, reason, reason_len, &generic_kernels);
}

CPU_PLUGIN_TABLE(generic_table, "cpu-generic", generic_probe, generic_open);

__attribute__((visibility("default")))
const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(const gllmk_host *host, char *reason, size_t reason_len);

const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(const gllmk_host *host, char *reason, size_t reason_len)
{
	if (!host || host->abi_major != GLLMK_ABI_MAJOR) {
		snprintf(reason, reason_len, "cpu-generic speaks ABI %d.%d; the core speaks %u.%u",
			 GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR, host ? host->abi_major : 0u,
			 host ? host->abi_minor : 0u);
		return NULL;
	}
	if (host->struct_size < offsetof(gllmk_host, set_error) + sizeof(host->set_error)) {
		snprintf(reason, reason_len, "cpu-generic needs a host struct of at least %zu bytes, got %u",
			 offsetof(gllmk_host, set_error) + sizeof(host->set_error), host->struct_size);
		return NULL;
	}
	return &generic_table;
}
