/* cpu-neon: the CPU framework with the AArch64 AdvSIMD kernels. The
 * plugin's one export is its entry; the tables are static const data.
 * open chooses between two context tables by HWCAP: the sdot one where the
 * CPU has the dot-product instructions, else plain AdvSIMD (smull/sadalp). */
#include <stdio.h>

#include "cpu_plugin.h"
#include "neon_kernels.h"

extern const struct cpu_cntx neon_cntx;                  /* cntx_neon.c */
extern const struct cpu_cntx neondot_cntx;               /* cntx_neon.c */
gllmk_probe_result neon_probe(gllmk_probe_info *info);      /* probe_neon.c */

static gllmk_status neon_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct neon_features f;

	neon_features_read(&f);
	if (!f.asimd) {
		snprintf(reason, reason_len, "the CPU does not report AdvSIMD (HWCAP_ASIMD)");
		return GLLMK_E_UNSUPPORTED;
	}
	return cpu_open(args, state, reason, reason_len, f.dotprod ? &neondot_cntx : &neon_cntx);
}

CPU_PLUGIN_TABLE(neon_table, "cpu-neon", neon_probe, neon_open);

GLLMK_DEFINE_PLUGIN_ENTRY(neon_table)
