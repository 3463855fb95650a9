/* cpu-avx512's probe: CPUID for AVX-512 F/BW/VL/DQ (+ FMA, F16C), XGETBV for
 * the OS's opmask and ZMM state. Baseline code without LTO: it runs on CPUs
 * that lack AVX-512, and on VMs whose CPUID shows AVX-512 the OS does not
 * enable. */
#include <stdio.h>

#include "cpu_plugin.h"
#include "x86_features.h"

gllmk_probe_result avx512_probe(gllmk_probe_info *info);

gllmk_probe_result avx512_probe(gllmk_probe_info *info)
{
	struct x86_features f;
	int cores;

	x86_features_read(&f);
	if (!x86_can_run_avx512(&f, info->reason, sizeof(info->reason)))
		return GLLMK_PROBE_NO;
	cores = cpu_physical_cores();
	snprintf(info->device, sizeof(info->device), "x86-64 AVX-512 F/BW/VL/DQ%s, %d physical core%s",
		 f.avx512vnni ? "+VNNI" : "", cores, cores == 1 ? "" : "s");
	info->reason[0] = '\0';
	return GLLMK_PROBE_YES;
}
