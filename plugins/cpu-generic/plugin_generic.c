/* cpu-generic: the CPU framework with the portable reference kernels.
 * The plugin's one export is its entry; the table is static const data. */
#include <stdio.h>

#include "cpu_plugin.h"

extern const struct cpu_cntx generic_cntx;               /* cntx_generic.c */
gllmk_probe_result generic_probe(gllmk_probe_info *info);   /* probe_generic.c */

static gllmk_status generic_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	return cpu_open(args, state, reason, reason_len, &generic_cntx);
}

CPU_PLUGIN_TABLE(generic_table, "cpu-generic", generic_probe, generic_open);

GLLMK_DEFINE_PLUGIN_ENTRY(generic_table)
