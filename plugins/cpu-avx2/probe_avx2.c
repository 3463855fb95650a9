/* cpu-avx2's probe: CPUID for AVX2, FMA and F16C, XGETBV for the OS's YMM
 * state. Baseline code without LTO: it runs on CPUs that lack AVX. */
#include <stdio.h>

#include "cpu_plugin.h"
#include "x86_features.h"

gllmk_probe_result avx2_probe(gllmk_probe_info *info);

gllmk_probe_result avx2_probe(gllmk_probe_info *info)
{
	struct x86_features f;
	int cores;

	x86_features_read(&f);
	if (!x86_can_run_avx2(&f, info->reason, sizeof(info->reason)))
		return GLLMK_PROBE_NO;
	cores = cpu_physical_cores();
	snprintf(info->device, sizeof(info->device), "x86-64 AVX2+FMA+F16C%s, %d physical core%s",
		 f.avxvnni ? "+AVX-VNNI" : "", cores, cores == 1 ? "" : "s");
	info->reason[0] = '\0';
	return GLLMK_PROBE_YES;
}
