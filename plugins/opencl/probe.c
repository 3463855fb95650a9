/* Probe: is there an OpenCL device that takes one of the embedded programs?
 * Opens the loader, picks the device open() would pick, describes it (the
 * program path included), and closes the loader again. A CPU device (PoCL)
 * answers BY_NAME: the native CPU plugins are faster on the same cores. */
#include <stdio.h>

#include "ocl_plugin.h"

gllmk_probe_result ocl_probe(gllmk_probe_info *info)
{
	struct ocl_api api;
	struct ocl_device dev;
	int found;

	info->device[0] = '\0';
	if (!ocl_api_open(&api, info->reason, sizeof(info->reason)))
		return GLLMK_PROBE_NO;
	found = ocl_choose_device(&api, &dev, info->reason, sizeof(info->reason));
	ocl_api_close(&api);
	if (!found)
		return GLLMK_PROBE_NO;
	ocl_describe(&dev, info->device, sizeof(info->device));
	if (ocl_device_is_cpu(&dev)) {
		snprintf(info->reason, sizeof(info->reason),
			 "%.96s is a CPU OpenCL device: the native CPU plugins are faster here; "
			 "used when the opencl plugin is asked for by name",
			 dev.name);
		return GLLMK_PROBE_BY_NAME;
	}
	info->reason[0] = '\0';
	return GLLMK_PROBE_YES;
}
