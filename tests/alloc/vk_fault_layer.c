/* A Vulkan layer for the allocation-failure sweep (alloc_fail.c --device):
 * the n-th vkAllocateMemory of a device returns VK_ERROR_OUT_OF_DEVICE_MEMORY,
 * n read from GLLMK_VK_FAIL_AT when the device is created (unset or 0: never).
 * alloc_fail asks vk_fault_injected() whether the n-th call happened (the
 * sweep ends at the first n past the sequence's last device allocation).
 *
 * A test device, not part of gllmk: the plugin reaches it through the Vulkan
 * loader like any layer (VK_LAYER_PATH + VK_INSTANCE_LAYERS, see
 * tests/alloc/meson.build), so the plugin's code is the one users run. One
 * instance and one device at a time, which is all the sweep creates.
 */
#include <stdlib.h>
#include <string.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkAllocateMemory next_allocate;
static PFN_vkFreeMemory next_free;
static long fail_at, n_calls, n_live;
static int injected;

EXPORT int vk_fault_injected(void)
{
	return injected;
}

/* Device memory allocated and not yet freed (0 after the plugin's close). */
EXPORT long vk_fault_live(void)
{
	return n_live;
}

static VkResult VKAPI_CALL fault_AllocateMemory(VkDevice dev, const VkMemoryAllocateInfo *info,
						const VkAllocationCallbacks *cb, VkDeviceMemory *mem)
{
	if (++n_calls == fail_at) {
		injected = 1;
		return VK_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	VkResult r = next_allocate(dev, info, cb, mem);

	n_live += r == VK_SUCCESS;
	return r;
}

static void VKAPI_CALL fault_FreeMemory(VkDevice dev, VkDeviceMemory mem, const VkAllocationCallbacks *cb)
{
	n_live -= mem != VK_NULL_HANDLE;
	next_free(dev, mem, cb);
}

/* The loader's link info in a create-info chain (instance or device). */
static void *link_info(const void *chain, VkStructureType type)
{
	for (const VkBaseInStructure *s = chain; s; s = s->pNext) {
		const VkLayerInstanceCreateInfo *li = (const void *)s;

		if (s->sType == type && li->function == VK_LAYER_LINK_INFO)
			return (void *)s;
	}
	return NULL;
}

static VkResult VKAPI_CALL fault_CreateInstance(const VkInstanceCreateInfo *ci, const VkAllocationCallbacks *cb,
						VkInstance *out)
{
	VkLayerInstanceCreateInfo *li = link_info(ci->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
	PFN_vkCreateInstance create;

	if (!li)
		return VK_ERROR_INITIALIZATION_FAILED;
	next_gipa = li->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	li->u.pLayerInfo = li->u.pLayerInfo->pNext;
	create = (PFN_vkCreateInstance)next_gipa(NULL, "vkCreateInstance");
	return create(ci, cb, out);
}

static VkResult VKAPI_CALL fault_CreateDevice(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
					      const VkAllocationCallbacks *cb, VkDevice *out)
{
	VkLayerDeviceCreateInfo *li = link_info(ci->pNext, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkCreateDevice create;
	const char *env = getenv("GLLMK_VK_FAIL_AT");
	VkResult r;

	if (!li)
		return VK_ERROR_INITIALIZATION_FAILED;
	gipa = li->u.pLayerInfo->pfnNextGetInstanceProcAddr;
	next_gdpa = li->u.pLayerInfo->pfnNextGetDeviceProcAddr;
	li->u.pLayerInfo = li->u.pLayerInfo->pNext;
	create = (PFN_vkCreateDevice)gipa(NULL, "vkCreateDevice");
	r = create(pd, ci, cb, out);
	if (r != VK_SUCCESS)
		return r;
	next_allocate = (PFN_vkAllocateMemory)next_gdpa(*out, "vkAllocateMemory");
	next_free = (PFN_vkFreeMemory)next_gdpa(*out, "vkFreeMemory");
	fail_at = env ? atol(env) : 0;
	n_calls = n_live = 0;
	injected = 0;
	return VK_SUCCESS;
}

static PFN_vkVoidFunction VKAPI_CALL fault_GetDeviceProcAddr(VkDevice dev, const char *name);

static PFN_vkVoidFunction VKAPI_CALL fault_GetInstanceProcAddr(VkInstance inst, const char *name)
{
	if (!strcmp(name, "vkCreateInstance"))
		return (PFN_vkVoidFunction)fault_CreateInstance;
	if (!strcmp(name, "vkCreateDevice"))
		return (PFN_vkVoidFunction)fault_CreateDevice;
	if (!strcmp(name, "vkGetInstanceProcAddr"))
		return (PFN_vkVoidFunction)fault_GetInstanceProcAddr;
	if (!strcmp(name, "vkGetDeviceProcAddr"))
		return (PFN_vkVoidFunction)fault_GetDeviceProcAddr;
	if (!strcmp(name, "vkAllocateMemory"))
		return (PFN_vkVoidFunction)fault_AllocateMemory;
	if (!strcmp(name, "vkFreeMemory"))
		return (PFN_vkVoidFunction)fault_FreeMemory;
	return next_gipa ? next_gipa(inst, name) : NULL;
}

static PFN_vkVoidFunction VKAPI_CALL fault_GetDeviceProcAddr(VkDevice dev, const char *name)
{
	if (!strcmp(name, "vkGetDeviceProcAddr"))
		return (PFN_vkVoidFunction)fault_GetDeviceProcAddr;
	if (!strcmp(name, "vkAllocateMemory"))
		return (PFN_vkVoidFunction)fault_AllocateMemory;
	if (!strcmp(name, "vkFreeMemory"))
		return (PFN_vkVoidFunction)fault_FreeMemory;
	return next_gdpa(dev, name);
}

EXPORT VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
	if (v->loaderLayerInterfaceVersion < 2)
		return VK_ERROR_INITIALIZATION_FAILED;
	v->loaderLayerInterfaceVersion = 2;
	v->pfnGetInstanceProcAddr = fault_GetInstanceProcAddr;
	v->pfnGetDeviceProcAddr = fault_GetDeviceProcAddr;
	v->pfnGetPhysicalDeviceProcAddr = NULL;
	return VK_SUCCESS;
}
