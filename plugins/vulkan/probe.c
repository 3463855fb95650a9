/* Probe: can this machine run the Vulkan plugin? Opens the loader (dlopen)
 * and the process's instance, picks the device open() would pick, and
 * describes it. A CPU device (lavapipe) answers BY_NAME: the native CPU
 * plugins are faster on the same cores. */
#include <stdio.h>

#include "vk_plugin.h"

gllmk_probe_result vk_probe(gllmk_probe_info *info)
{
	struct vk_fns fn;
	struct vk_choice ch;
	VkInstance inst;

	info->device[0] = '\0';
	if (!vk_process_instance(&fn, &inst, info->reason, sizeof(info->reason)) ||
	    !vk_choose_device(&fn, inst, &ch, info->reason, sizeof(info->reason)))
		return GLLMK_PROBE_NO;
	snprintf(info->device, sizeof(info->device), "%.120s (%s, Vulkan %u.%u, %s, %llu MiB)", ch.props.deviceName,
		 vk_device_type_name(ch.props.deviceType), VK_API_VERSION_MAJOR(ch.props.apiVersion),
		 VK_API_VERSION_MINOR(ch.props.apiVersion), ch.driver, (unsigned long long)(ch.memory >> 20));
	if (ch.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
		snprintf(info->reason, sizeof(info->reason),
			 "%.60s is a CPU device (software Vulkan): the native CPU plugins are faster here; "
			 "used when the vulkan plugin is asked for by name",
			 ch.props.deviceName);
		return GLLMK_PROBE_BY_NAME;
	}
	info->reason[0] = '\0';
	return GLLMK_PROBE_YES;
}
