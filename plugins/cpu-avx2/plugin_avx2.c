/* cpu-avx2: the CPU framework with the AVX2 + FMA + F16C kernels. The
 * plugin's one export is its entry; the tables are static const data.
 *
 * Baseline code (no ISA flags, no LTO): the entry and open run on any x86-64
 * and choose between two context tables by CPUID, the AVX-VNNI one where the
 * CPU has it (vpdpbusd), else the Haswell-class one (vpmaddubsw). */
#include <stdio.h>

#include "cpu_plugin.h"
#include "x86_features.h"

extern const struct cpu_cntx avx2_cntx;                  /* cntx_avx2.c */
extern const struct cpu_cntx avx2vnni_cntx;              /* cntx_avx2.c */
gllmk_probe_result avx2_probe(gllmk_probe_info *info);      /* probe_avx2.c */

static gllmk_status avx2_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct x86_features f;

	x86_features_read(&f);
	/* The probe said YES before the core opens us; a host that opens
	 * without probing still gets a refusal rather than SIGILL. */
	if (!x86_can_run_avx2(&f, reason, reason_len))
		return GLLMK_E_UNSUPPORTED;
	return cpu_open(args, state, reason, reason_len, f.avxvnni ? &avx2vnni_cntx : &avx2_cntx);
}

CPU_PLUGIN_TABLE(avx2_table, "cpu-avx2", avx2_probe, avx2_open);

GLLMK_DEFINE_PLUGIN_ENTRY(avx2_table)
