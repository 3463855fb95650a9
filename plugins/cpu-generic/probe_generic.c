/* cpu-generic runs on any machine the build targets: its probe only says
 * what it found. */
#include <stdio.h>

#include "cpu_plugin.h"

gllmk_probe_result generic_probe(gllmk_probe_info *info);

gllmk_probe_result generic_probe(gllmk_probe_info *info)
{
	int cores = cpu_physical_cores();

	snprintf(info->device, sizeof(info->device), "portable C, %d physical core%s", cores,
		 cores == 1 ? "" : "s");
	info->reason[0] = '\0';
	return GLLMK_PROBE_YES;
}
